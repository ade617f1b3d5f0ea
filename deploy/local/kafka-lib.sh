# Helpers of kafka.sh, sourced by it (not run on their own). They read kafka.sh's settings
# (HOST, STATE_DIR, NODES, ...) and the paths of the node chosen with use_node (PROPS, DATA_DIR, ...).
# shellcheck shell=bash

log() { printf 'kafka.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The pid file alone is not proof: pids get reused, so the process must also
# carry this node's config on its command line. Zombies have an empty
# cmdline, so they count as dead too.
pid_is_ours() {
  local pid=$1 conf=$2 cmd arg
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  if [[ -r /proc/$pid/cmdline ]]; then
    # Exact argument match, so /a/kafka never claims /b/a/kafka's broker.
    local -a args=()
    mapfile -d '' -t args <"/proc/$pid/cmdline" 2>/dev/null || return 1
    for arg in "${args[@]}"; do
      [[ $arg == "$conf" ]] && return 0
    done
    return 1
  fi
  cmd=$(ps -o args= -p "$pid" 2>/dev/null) || return 1
  [[ "$cmd " == *" $conf "* ]]
}

find_java() {
  if [[ -n ${JAVA_HOME:-} ]]; then
    [[ -x $JAVA_HOME/bin/java ]] || die "JAVA_HOME=$JAVA_HOME has no bin/java"
    JAVA=$JAVA_HOME/bin/java
  else
    JAVA=$(command -v java) || die "java not found (install a JDK >= 11 or set JAVA_HOME)"
  fi
  local line major
  line=$("$JAVA" -version 2>&1 | head -n 1)
  major=$(sed -n 's/.*version "\([0-9]*\)[."].*/\1/p' <<<"$line")
  [[ $major == 1 ]] && major=8
  if [[ -n $major && $major -lt 11 ]]; then
    die "Kafka $KAFKA_VERSION needs Java >= 11, found: $line"
  fi
}

need_node() {
  command -v node >/dev/null 2>&1 || die "node not found on PATH"
}

# Maven only runs when the shared cache lacks this version. Jars are copied to
# a temp dir and renamed into place, so a half-finished download is never
# mistaken for a complete cache; the lock keeps parallel clones from racing.
ensure_jars() {
  local marker=$LIBS_DIR/kafka_${SCALA_BINARY}-${KAFKA_VERSION}.jar
  [[ -f $marker ]] && return 0
  mkdir -p "$CACHE_ROOT"
  (
    exec 8>"$CACHE_ROOT/kafka-$KAFKA_VERSION.lock"
    if command -v flock >/dev/null 2>&1; then flock -w 900 8 || die "timed out waiting for the jar cache lock"; fi
    [[ -f $marker ]] && exit 0
    command -v mvn >/dev/null 2>&1 || die "mvn not found: Maven is needed once to fetch the Kafka jars"
    log "fetching Kafka $KAFKA_VERSION jars with Maven into $LIBS_DIR"
    local tmp
    tmp=$(mktemp -d "$CACHE_ROOT/.kafka-$KAFKA_VERSION.XXXXXX")
    # Some Maven builds emit bare colour resets even in quiet batch mode.
    if ! mvn -q -B -Dstyle.color=never -f "$POM" dependency:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$tmp/libs" 2>&1 </dev/null |
        sed 's/\x1b\[0m//g' >&2; then
      rm -rf "$tmp"
      die "Maven could not resolve the Kafka jars (see its output above)"
    fi
    mkdir -p "$(dirname "$LIBS_DIR")"
    rm -rf "$LIBS_DIR"
    mv "$tmp/libs" "$LIBS_DIR"
    rm -rf "$tmp"
  )
  [[ -f $marker ]] || die "jar cache $LIBS_DIR is incomplete"
}

# choose_ports <nodes> <keep> [previous ports...]
# Prints "<brokerPort> <controllerPort>" for each node, all on one line.
# Prefers the previous run's ports so an exported KAFKA_BROKERS stays valid
# across restarts; with <keep> 1 it fails instead of moving. Otherwise draws
# free ones below the kernel's usual ephemeral range so that outgoing client
# connections cannot grab them between the check and the bind.
choose_ports() {
  local count=$1 keep=$2
  shift 2
  # shellcheck disable=SC2016 # JavaScript template literals, not shell
  node -e '
    const net = require("node:net");
    const [host, nodesArg, keep, ...prevArgs] = process.argv.slice(1);
    const count = 2 * Number(nodesArg);
    const prev = prevArgs.map((p) => Number(p) || 0);
    const hadPrev = prev.length === count && prev.every((p) => p > 0) && new Set(prev).size === count;
    const tryListen = (port) => new Promise((resolve) => {
      const srv = net.createServer();
      srv.once("error", () => resolve(null));
      srv.listen({ port, host, exclusive: true }, () => resolve(srv));
    });
    const closeAll = (servers) => Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    async function grab(candidates) {
      const held = [];
      for (const port of candidates) {
        const srv = await tryListen(port);
        if (!srv) { await closeAll(held); return null; }
        held.push(srv);
      }
      const ports = held.map((s) => s.address().port);
      await closeAll(held);
      return ports;
    }
    (async () => {
      let ports = hadPrev ? await grab(prev) : null;
      if (hadPrev && !ports && keep === "1") {
        console.error(`kafka.sh: previous ports ${prev.join(", ")} are taken and MEGURI_KAFKA_KEEP_PORTS=1`);
        process.exit(1);
      }
      if (hadPrev && !ports) console.error(`kafka.sh: previous ports ${prev.join(", ")} are taken; choosing new ones`);
      for (let i = 0; !ports && i < 50; i++) {
        const drawn = new Set();
        while (drawn.size < count) drawn.add(20000 + Math.floor(Math.random() * 12000));
        ports = await grab([...drawn]);
      }
      if (!ports) ports = await grab(new Array(count).fill(0));
      if (!ports) process.exit(1);
      console.log(ports.join(" "));
    })();
  ' "$HOST" "$count" "$keep" "$@"
}

# write_config <nodeId> <brokerPort> <controllerPort> <voters>
# The chosen node's server.properties and log4j.properties. One node gets
# exactly the settings it always had.
write_config() {
  local id=$1 broker_port=$2 controller_port=$3 voters=$4 internal_note heap_note quorum=''
  if ((NODES == 1)); then
    internal_note='# Single node: internal topics cannot have more than one replica.'
    heap_note='heap is 512 MiB'
  else
    internal_note="# $NODES nodes: internal topics keep $RF copies with $MIN_ISR in sync, as in production."
    heap_note='heap is small'
    # A dead controller leader is noticed after the fetch timeout (2 s by default) and its
    # successor elected within about the election timeout (1 s); shorter here so a killed node's
    # partitions get new leaders within seconds. Still well above the leader's 500 ms fetch wait.
    quorum="
controller.quorum.fetch.timeout.ms=1500
controller.quorum.election.timeout.ms=500
controller.quorum.election.backoff.max.ms=500"
  fi
  cat >"$PROPS.tmp" <<EOF
# Generated by deploy/local/kafka.sh on every start; edits are overwritten.
process.roles=broker,controller
node.id=$id
controller.quorum.voters=$voters
listeners=PLAINTEXT://$HOST:$broker_port,CONTROLLER://$HOST:$controller_port
advertised.listeners=PLAINTEXT://$HOST:$broker_port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT

log.dirs=$DATA_DIR
# The project creates its topics explicitly; a typo must fail, not create a topic.
auto.create.topics.enable=false
delete.topic.enable=true
num.partitions=1
default.replication.factor=$RF
min.insync.replicas=$MIN_ISR

$internal_note
offsets.topic.replication.factor=$RF
transaction.state.log.replication.factor=$RF
transaction.state.log.min.isr=$MIN_ISR
# Fewer internal partitions make the first group/transaction much faster.
offsets.topic.num.partitions=10
transaction.state.log.num.partitions=10
group.initial.rebalance.delay.ms=0
# After a crash (or SIGKILL) the controller refuses the restarted broker until
# the old incarnation's session expires; 9 s by default, shorter here.
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=4000$quorum

# Small machine: few threads, small segments, a small cleaner buffer ($heap_note).
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
log.segment.bytes=16777216
log.cleaner.dedupe.buffer.size=16777216
log.retention.hours=168
log.retention.check.interval.ms=60000
EOF
  mv "$PROPS.tmp" "$PROPS"

  cat >"$LOG4J" <<EOF
# Broker logs go to files in the state dir, never to the console.
log4j.rootLogger=INFO, server
log4j.appender.server=org.apache.log4j.RollingFileAppender
log4j.appender.server.File=$LOG_DIR/server.log
log4j.appender.server.MaxFileSize=20MB
log4j.appender.server.MaxBackupIndex=2
log4j.appender.server.layout=org.apache.log4j.PatternLayout
log4j.appender.server.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
log4j.logger.kafka.authorizer.logger=WARN
log4j.logger.org.apache.kafka.clients=WARN
EOF
}

# One-shot tools (storage format) log to their own output, kept apart
# from the brokers' server.log.
write_tools_log4j() {
  cat >"$LOG4J_TOOLS" <<EOF
log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
EOF
}

new_cluster_id() {
  # Kafka's Uuid text form: 16 random bytes, base64url without padding. A
  # leading '-' would be read as a CLI flag, so draw again in that case.
  node -e '
    const { randomBytes } = require("node:crypto");
    let id;
    do { id = randomBytes(16).toString("base64url"); } while (id.startsWith("-"));
    console.log(id);
  '
}

# Shows only what this start wrote: server.log is appended to across runs.
show_log_tail() {
  local from=$1
  log "last lines of $LOG_DIR/server.log and kafka.out from this start:"
  tail -c "+$((from + 1))" "$LOG_DIR/server.log" 2>/dev/null | grep -v '^[[:space:]]' | tail -n 25 >&2 || true
  tail -n 15 "$LOG_DIR/kafka.out" >&2 2>/dev/null || true
}
