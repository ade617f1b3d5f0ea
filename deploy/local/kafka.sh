#!/usr/bin/env bash
# A real single-node Apache Kafka (KRaft, broker+controller in one JVM) for
# development and CI, without Docker. See README.md beside this file.
#
#   kafka.sh start | stop | status | env | reset | help
#
# `start` prints exactly one line on stdout: KAFKA_BROKERS=127.0.0.1:<port>.
# Everything else goes to stderr or to log files in the state dir.
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd -P)
POM="$SCRIPT_DIR/pom.xml"

KAFKA_VERSION=$(sed -n 's:.*<kafka\.version>\(.*\)</kafka\.version>.*:\1:p' "$POM" | head -n 1)
SCALA_BINARY=2.13

if [[ -n ${MEGURI_CACHE_DIR:-} ]]; then
  CACHE_ROOT=$MEGURI_CACHE_DIR
elif [[ -n ${HOME:-} ]]; then
  CACHE_ROOT=$HOME/.cache/meguri
else
  CACHE_ROOT=$REPO_ROOT/.cache/meguri
fi
LIBS_DIR=$CACHE_ROOT/kafka-$KAFKA_VERSION/libs

STATE_DIR=${MEGURI_KAFKA_STATE_DIR:-$REPO_ROOT/.cache/kafka}
[[ $STATE_DIR == /* ]] || STATE_DIR=$PWD/$STATE_DIR
STATE_DIR=${STATE_DIR%/}

START_TIMEOUT=${MEGURI_KAFKA_START_TIMEOUT:-60}
STOP_TIMEOUT=${MEGURI_KAFKA_STOP_TIMEOUT:-30}
HEAP_OPTS=${MEGURI_KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}
EXTRA_JVM_OPTS=${MEGURI_KAFKA_JVM_OPTS:-}
# The client-grade JIT only (C1): this broker lives for minutes to hours on the cores the crawler
# and the tests use, and C2's compiling at start-up cost more CPU than its faster code saves there
# (a fresh broker spent 9.8 of its 22.4 CPU seconds for a 20,000-page crawl in C2's threads; with C1
# only, 10.2 in all). Empty: the JVM's default tiered compilation.
JIT_OPTS=${MEGURI_KAFKA_JIT_OPTS--XX:TieredStopAtLevel=1}
HOST=127.0.0.1

MARKER=$STATE_DIR/.meguri-kafka-state
PID_FILE=$STATE_DIR/kafka.pid
BOOTSTRAP_FILE=$STATE_DIR/bootstrap
PORTS_FILE=$STATE_DIR/ports
PROPS=$STATE_DIR/server.properties
LOG4J=$STATE_DIR/log4j.properties
LOG4J_TOOLS=$STATE_DIR/log4j-tools.properties
DATA_DIR=$STATE_DIR/data
LOG_DIR=$STATE_DIR/logs

log() { printf 'kafka.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

usage() {
  cat >&2 <<EOF
usage: kafka.sh <command>
  start   start the broker if needed; prints KAFKA_BROKERS=<host:port>
  jars    only make sure the broker's jars are in the cache (needs Maven Central once)
  stop    stop it (SIGTERM, then SIGKILL after ${STOP_TIMEOUT}s)
  status  print <host:port> and exit 0 if running, exit 1 otherwise
  env     print KAFKA_BROKERS=<host:port> of the running broker (for eval)
  reset   stop and delete the state dir (all data)
state dir: $STATE_DIR
jar cache: $LIBS_DIR
EOF
}

# The pid file alone is not proof: pids get reused, so the process must also
# carry this state dir's config on its command line. Zombies have an empty
# cmdline, so they count as dead too.
pid_is_ours() {
  local pid=$1 cmd arg
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  if [[ -r /proc/$pid/cmdline ]]; then
    # Exact argument match, so /a/kafka never claims /b/a/kafka's broker.
    local -a args=()
    mapfile -d '' -t args <"/proc/$pid/cmdline" 2>/dev/null || return 1
    for arg in "${args[@]}"; do
      [[ $arg == "$PROPS" ]] && return 0
    done
    return 1
  fi
  cmd=$(ps -o args= -p "$pid" 2>/dev/null) || return 1
  [[ "$cmd " == *" $PROPS "* ]]
}

running_pid() {
  local pid
  [[ -f $PID_FILE ]] || return 1
  pid=$(<"$PID_FILE") || return 1
  pid_is_ours "$pid" || return 1
  printf '%s\n' "$pid"
}

bootstrap_address() {
  [[ -s $BOOTSTRAP_FILE ]] || return 1
  cat "$BOOTSTRAP_FILE"
}

# Serialises start/stop/reset on one state dir. The fd is closed for the
# broker itself so that it does not hold the lock forever.
take_lock() {
  mkdir -p "$STATE_DIR"
  exec 9>"$STATE_DIR/lock"
  if command -v flock >/dev/null 2>&1; then
    flock -w 300 9 || die "another kafka.sh holds $STATE_DIR/lock"
  fi
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

# Prints "<brokerPort> <controllerPort>". Prefers the ports of the previous
# run so an exported KAFKA_BROKERS stays valid across restarts; otherwise
# draws free ones below the kernel's usual ephemeral range so that outgoing
# client connections cannot grab them between the check and the bind.
choose_ports() {
  local prev_b=0 prev_c=0
  if [[ -s $PORTS_FILE ]]; then read -r prev_b prev_c <"$PORTS_FILE" || true; fi
  # shellcheck disable=SC2016 # JavaScript template literals, not shell
  node -e '
    const net = require("node:net");
    const host = process.argv[1];
    const prev = [Number(process.argv[2]) || 0, Number(process.argv[3]) || 0];
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
      let ports = prev[0] && prev[1] && prev[0] !== prev[1] ? await grab(prev) : null;
      if (prev[0] && !ports && process.argv[4] === "1") {
        console.error(`kafka.sh: previous ports ${prev.join(", ")} are taken and MEGURI_KAFKA_KEEP_PORTS=1`);
        process.exit(1);
      }
      if (prev[0] && !ports) console.error(`kafka.sh: previous ports ${prev.join(", ")} are taken; choosing new ones`);
      for (let i = 0; !ports && i < 50; i++) {
        const a = 20000 + Math.floor(Math.random() * 12000);
        const b = 20000 + Math.floor(Math.random() * 12000);
        if (a !== b) ports = await grab([a, b]);
      }
      if (!ports) ports = await grab([0, 0]);
      if (!ports) process.exit(1);
      console.log(ports.join(" "));
    })();
  ' "$HOST" "$prev_b" "$prev_c" "${MEGURI_KAFKA_KEEP_PORTS:-0}"
}

write_config() {
  local broker_port=$1 controller_port=$2
  cat >"$PROPS.tmp" <<EOF
# Generated by deploy/local/kafka.sh on every start; edits are overwritten.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$controller_port
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
default.replication.factor=1
min.insync.replicas=1

# Single node: internal topics cannot have more than one replica.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
# Fewer internal partitions make the first group/transaction much faster.
offsets.topic.num.partitions=10
transaction.state.log.num.partitions=10
group.initial.rebalance.delay.ms=0
# After a crash (or SIGKILL) the controller refuses the restarted broker until
# the old incarnation's session expires; 9 s by default, shorter here.
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=4000

# Small machine: few threads, small segments, a small cleaner buffer (heap is 512 MiB).
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

  # One-shot tools (storage format) log to their own output, kept apart
  # from the broker's server.log.
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

format_storage_if_needed() {
  # Formatting an already formatted dir is refused by Kafka; meta.properties is
  # what it writes, so its presence means "keep the data".
  [[ -f $DATA_DIR/meta.properties ]] && return 0
  local cluster_id
  cluster_id=$(new_cluster_id)
  log "formatting KRaft storage in $DATA_DIR (cluster id $cluster_id)"
  mkdir -p "$DATA_DIR"
  if ! "$JAVA" -Xmx256m -Dlog4j.configuration="file:$LOG4J_TOOLS" -cp "$LIBS_DIR/*" \
      kafka.tools.StorageTool format --ignore-formatted \
      -t "$cluster_id" -c "$PROPS" >>"$LOG_DIR/format.log" 2>&1 9>&-; then
    tail -n 20 "$LOG_DIR/format.log" >&2 || true
    die "formatting storage failed (see $LOG_DIR/format.log)"
  fi
}

# Shows only what this start wrote: server.log is appended to across runs.
show_log_tail() {
  local from=$1
  log "last lines of $LOG_DIR/server.log and kafka.out from this start:"
  tail -c "+$((from + 1))" "$LOG_DIR/server.log" 2>/dev/null | grep -v '^[[:space:]]' | tail -n 25 >&2 || true
  tail -n 15 "$LOG_DIR/kafka.out" >&2 2>/dev/null || true
}

# Returns 0 ready, 1 timeout, 2 process died.
wait_ready() {
  local address=$1 pid=$2 rc=0
  node "$SCRIPT_DIR/wait-ready.mjs" "$address" "$((START_TIMEOUT * 1000))" "$pid" "$LOG_DIR/server.log" 9>&- || rc=$?
  return "$rc"
}

kill_and_wait() {
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
    pid_is_ours "$pid" || return 0
    sleep 0.1
  done
  log "broker pid $pid ignored SIGTERM for ${STOP_TIMEOUT}s, sending SIGKILL"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    pid_is_ours "$pid" || return 0
    sleep 0.1
  done
  die "could not kill broker pid $pid"
}

cmd_start() {
  need_node
  take_lock
  : >"$MARKER"

  local pid address rc=0
  if pid=$(running_pid); then
    address=$(bootstrap_address) || die "broker pid $pid is running but $BOOTSTRAP_FILE is missing; run kafka.sh stop"
    wait_ready "$address" "$pid" || rc=$?
    if [[ $rc -eq 0 ]]; then
      log "already running (pid $pid)"
      printf 'KAFKA_BROKERS=%s\n' "$address"
      return 0
    fi
    [[ $rc -eq 2 ]] || die "broker pid $pid is running but does not answer on $address; try kafka.sh stop"
    log "broker pid $pid died while being checked; starting a new one"
  fi
  if [[ -f $PID_FILE ]]; then
    log "removing stale pid file (pid $(<"$PID_FILE") is not running)"
    rm -f "$PID_FILE"
  fi

  find_java
  ensure_jars
  mkdir -p "$DATA_DIR" "$LOG_DIR"

  local ports broker_port controller_port
  ports=$(choose_ports) || die "could not find free ports on $HOST"
  read -r broker_port controller_port <<<"$ports"
  write_config "$broker_port" "$controller_port"
  format_storage_if_needed
  printf '%s %s\n' "$broker_port" "$controller_port" >"$PORTS_FILE"
  address=$HOST:$broker_port
  printf '%s\n' "$address" >"$BOOTSTRAP_FILE"

  local -a jvm=()
  read -r -a heap <<<"$HEAP_OPTS"
  jvm+=("${heap[@]}")
  jvm+=(-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
    -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError
    -Djava.awt.headless=true
    "-Dlog4j.configuration=file:$LOG4J" "-Dkafka.logs.dir=$LOG_DIR")
  # The extra flags last, so they can override the JIT's and the collector's.
  local -a extra=()
  read -r -a extra <<<"$JIT_OPTS $EXTRA_JVM_OPTS"
  jvm+=("${extra[@]}")

  log "starting Kafka $KAFKA_VERSION on $address (controller $HOST:$controller_port), state in $STATE_DIR"
  local log_offset=0
  [[ -f $LOG_DIR/server.log ]] && log_offset=$(wc -c <"$LOG_DIR/server.log")
  [[ -f $LOG_DIR/kafka.out ]] && mv -f "$LOG_DIR/kafka.out" "$LOG_DIR/kafka.out.1"
  local new_pid_file=$PID_FILE.new
  rm -f "$new_pid_file"
  # The child records its own pid and then becomes java (exec), so the pid is
  # exact even though setsid detaches it from this shell and its terminal.
  # All inherited fds are redirected so `$(kafka.sh start)` returns at once.
  # shellcheck disable=SC2016 # $$ and $@ belong to the inner sh
  local -a launch=(sh -c 'echo $$ >"$0"; exec "$@"' "$new_pid_file"
    "$JAVA" "${jvm[@]}" -cp "$LIBS_DIR/*" kafka.Kafka "$PROPS")
  if command -v setsid >/dev/null 2>&1; then
    setsid -f "${launch[@]}" </dev/null >>"$LOG_DIR/kafka.out" 2>&1 9>&-
  else
    nohup "${launch[@]}" </dev/null >>"$LOG_DIR/kafka.out" 2>&1 9>&- &
  fi
  local i
  for ((i = 0; i < 100; i++)); do
    [[ -s $new_pid_file ]] && break
    sleep 0.05
  done
  [[ -s $new_pid_file ]] || die "the broker process did not start"
  mv "$new_pid_file" "$PID_FILE"
  pid=$(<"$PID_FILE")

  local t0=$SECONDS
  rc=0
  wait_ready "$address" "$pid" || rc=$?
  case $rc in
    0) ;;
    2)
      show_log_tail "$log_offset"
      rm -f "$PID_FILE"
      die "the broker exited during startup"
      ;;
    *)
      show_log_tail "$log_offset"
      kill_and_wait "$pid"
      rm -f "$PID_FILE"
      die "the broker was not ready within ${START_TIMEOUT}s (MEGURI_KAFKA_START_TIMEOUT)"
      ;;
  esac
  log "ready after $((SECONDS - t0))s (pid $pid, logs in $LOG_DIR)"
  printf 'KAFKA_BROKERS=%s\n' "$address"
}

cmd_stop() {
  if [[ ! -d $STATE_DIR ]]; then
    log "not running (no state dir)"
    return 0
  fi
  take_lock
  local pid
  if pid=$(running_pid); then
    log "stopping broker pid $pid"
    kill_and_wait "$pid"
    log "stopped"
  else
    log "not running"
  fi
  rm -f "$PID_FILE" "$PID_FILE.new"
}

cmd_status() {
  local pid address
  if pid=$(running_pid) && address=$(bootstrap_address); then
    log "running (pid $pid, state $STATE_DIR)"
    printf '%s\n' "$address"
    return 0
  fi
  log "not running (state $STATE_DIR)"
  return 1
}

cmd_env() {
  local address
  if running_pid >/dev/null && address=$(bootstrap_address); then
    printf 'KAFKA_BROKERS=%s\n' "$address"
    # One broker: meguri creates topics with one copy here (its default is 3 and 2 in sync).
    printf 'MEGURI_REPLICATION_FACTOR=1\nMEGURI_MIN_INSYNC_REPLICAS=1\n'
    return 0
  fi
  log "not running (state $STATE_DIR); use kafka.sh start"
  return 1
}

cmd_reset() {
  cmd_stop
  [[ -d $STATE_DIR ]] || return 0
  # Guard against MEGURI_KAFKA_STATE_DIR pointing somewhere precious.
  [[ -f $MARKER ]] || die "$STATE_DIR lacks $(basename "$MARKER"); refusing to delete it"
  rm -rf -- "$STATE_DIR"
  log "deleted $STATE_DIR"
}

[[ -n $KAFKA_VERSION ]] || die "could not read kafka.version from $POM"

case ${1:-} in
  start) cmd_start ;;
  jars) ensure_jars ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) cmd_env ;;
  reset) cmd_reset ;;
  help | -h | --help) usage ;;
  *)
    usage
    exit 64
    ;;
esac
