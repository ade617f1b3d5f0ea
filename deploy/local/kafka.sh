#!/usr/bin/env bash
# A real Apache Kafka (KRaft, broker+controller in one JVM per node) for
# development and CI, without Docker: one node by default, or a small cluster
# (start --brokers 3). See README.md beside this file.
#
#   kafka.sh start [--brokers N] [--node ID] | stop [--node ID] | kill [--node ID]
#            | status | env | reset | jars | help
#
# `start` prints exactly one line on stdout: KAFKA_BROKERS=<host:port>[,...].
# Everything else goes to stderr or to log files in the state dir.
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
REPO_ROOT=$(cd -- "$SCRIPT_DIR/../.." && pwd -P)
POM="$SCRIPT_DIR/pom.xml"
# shellcheck source=kafka-lib.sh
source "$SCRIPT_DIR/kafka-lib.sh"

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
EXTRA_JVM_OPTS=${MEGURI_KAFKA_JVM_OPTS:-}
# The client-grade JIT only (C1): this broker lives for minutes to hours on the cores the crawler
# and the tests use, and C2's compiling at start-up cost more CPU than its faster code saves there
# (a fresh broker spent 9.8 of its 22.4 CPU seconds for a 20,000-page crawl in C2's threads; with C1
# only, 10.2 in all). Empty: the JVM's default tiered compilation.
JIT_OPTS=${MEGURI_KAFKA_JIT_OPTS--XX:TieredStopAtLevel=1}
HOST=127.0.0.1

MARKER=$STATE_DIR/.meguri-kafka-state
BOOTSTRAP_FILE=$STATE_DIR/bootstrap
# Only a cluster of several nodes writes these two; without them the state dir holds one node.
NODES_FILE=$STATE_DIR/nodes
CLUSTER_ID_FILE=$STATE_DIR/cluster-id
LOG4J_TOOLS=$STATE_DIR/log4j-tools.properties

usage() {
  cat >&2 <<EOF
usage: kafka.sh <command> [options]
  start   start the broker(s) if needed; prints KAFKA_BROKERS=<host:port>[,...]
          --brokers N  a cluster of N nodes (first start only; later starts reuse the count)
          --node ID    start only that node of the cluster (the others must hold a quorum)
  jars    only make sure the broker's jars are in the cache (needs Maven Central once)
  stop    stop it (SIGTERM, then SIGKILL after ${STOP_TIMEOUT}s); --node ID: that node only
  kill    SIGKILL the broker(s) at once, as a crash would; --node ID: that node only
  status  print <host:port> and exit 0 if running, exit 1 otherwise; for a cluster
          one line per node (<id> <host:port> running <pid> | stopped), exit 2 if some are down
  env     print KAFKA_BROKERS and the topic replication settings (for eval)
  reset   stop (a cluster's nodes with SIGKILL) and delete the state dir (all data)
state dir: $STATE_DIR
jar cache: $LIBS_DIR
EOF
}

# Paths of one node. A one-node broker keeps the flat layout it always had (the
# state dir is its node dir); a cluster has node-<id>/ per node.
use_node() {
  if ((NODES == 1)); then NODE_DIR=$STATE_DIR; else NODE_DIR=$STATE_DIR/node-$1; fi
  PID_FILE=$NODE_DIR/kafka.pid
  PORTS_FILE=$NODE_DIR/ports
  PROPS=$NODE_DIR/server.properties
  LOG4J=$NODE_DIR/log4j.properties
  DATA_DIR=$NODE_DIR/data
  LOG_DIR=$NODE_DIR/logs
}

read_node_count() {
  NODES=1
  if [[ -s $NODES_FILE ]]; then
    NODES=$(<"$NODES_FILE")
    [[ $NODES =~ ^[1-9]$ ]] || die "$NODES_FILE holds '$NODES', not a node count"
  fi
  set_sizes
}

# Replication for topics and the internal ones: 3 copies with 2 in sync where
# the nodes allow it, else as many as there are.
set_sizes() {
  RF=$((NODES < 3 ? NODES : 3))
  MIN_ISR=$((RF >= 3 ? 2 : 1))
  if ((NODES == 1)); then
    HEAP_OPTS=${MEGURI_KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}
  else
    HEAP_OPTS=${MEGURI_KAFKA_HEAP_OPTS:--Xms128m -Xmx384m}
  fi
}

all_nodes() { seq 1 "$NODES"; }

# The nodes a command acts on: the one of --node, else all.
target_nodes() {
  if [[ -n $OPT_NODE ]]; then echo "$OPT_NODE"; else all_nodes; fi
}

# The node count is fixed by the first start: a state dir with data keeps it.
settle_node_count() {
  read_node_count
  [[ -z $OPT_BROKERS || $OPT_BROKERS == "$NODES" ]] && return 0
  if [[ -e $STATE_DIR/data || -e $STATE_DIR/ports || -e $STATE_DIR/node-1 ]]; then
    die "$STATE_DIR holds a $NODES-node broker; kafka.sh reset first to start $OPT_BROKERS nodes there"
  fi
  NODES=$OPT_BROKERS
  if ((NODES == 1)); then rm -f "$NODES_FILE"; else printf '%s\n' "$NODES" >"$NODES_FILE"; fi
  set_sizes
}

running_pid() {
  local pid
  [[ -f $PID_FILE ]] || return 1
  pid=$(<"$PID_FILE") || return 1
  pid_is_ours "$pid" "$PROPS" || return 1
  printf '%s\n' "$pid"
}

bootstrap_address() {
  [[ -s $BOOTSTRAP_FILE ]] || return 1
  cat "$BOOTSTRAP_FILE"
}

# "<brokerPort> <controllerPort>" of the chosen node's last start.
node_ports() {
  local b c
  [[ -s $PORTS_FILE ]] || return 1
  read -r b c <"$PORTS_FILE" || return 1
  [[ $b =~ ^[0-9]+$ && $c =~ ^[0-9]+$ ]] || return 1
  printf '%s %s\n' "$b" "$c"
}

# Serialises start/stop/kill/reset on one state dir. The fd is closed for the
# brokers themselves so that they do not hold the lock forever.
take_lock() {
  mkdir -p "$STATE_DIR"
  exec 9>"$STATE_DIR/lock"
  if command -v flock >/dev/null 2>&1; then
    flock -w 300 9 || die "another kafka.sh holds $STATE_DIR/lock"
  fi
}

# Formats the storage of the given nodes that have none yet, all at once.
# Formatting an already formatted dir is refused by Kafka; meta.properties is
# what it writes, so its presence means "keep the data". Every node of a
# cluster gets the same cluster id, kept in the state dir for nodes formatted later.
format_storage_if_needed() {
  local id cluster_id='' rc=0
  local -A jobs=()
  for id in "$@"; do
    use_node "$id"
    [[ -f $DATA_DIR/meta.properties ]] && continue
    if [[ -z $cluster_id ]]; then
      if ((NODES == 1)); then
        cluster_id=$(new_cluster_id)
      else
        [[ -s $CLUSTER_ID_FILE ]] || new_cluster_id >"$CLUSTER_ID_FILE"
        cluster_id=$(<"$CLUSTER_ID_FILE")
      fi
    fi
    log "formatting KRaft storage in $DATA_DIR (cluster id $cluster_id)"
    mkdir -p "$DATA_DIR"
    # A one-shot tool: C1 and the serial collector start it in about half the CPU time.
    "$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Dlog4j.configuration="file:$LOG4J_TOOLS" -cp "$LIBS_DIR/*" \
      kafka.tools.StorageTool format --ignore-formatted \
      -t "$cluster_id" -c "$PROPS" >>"$LOG_DIR/format.log" 2>&1 9>&- &
    jobs[$id]=$!
  done
  for id in "${!jobs[@]}"; do
    wait "${jobs[$id]}" && continue
    use_node "$id"
    tail -n 20 "$LOG_DIR/format.log" >&2 || true
    log "error: formatting storage failed (see $LOG_DIR/format.log)"
    rc=1
  done
  ((rc == 0)) || exit 1
}

# wait_ready <minBrokers> <nodeId...>: 0 ready, 1 timeout, 2 a process died.
# With minBrokers 0 a node counts once it answers; else once the cluster lists
# it among at least that many live brokers.
wait_ready() {
  local min=$1 id rc=0 addresses='' pids='' ports
  shift
  local -a logs=() flags=()
  ((min == 0)) || flags=("--min-brokers=$min")
  for id in "$@"; do
    use_node "$id"
    ports=$(node_ports) || return 1
    addresses+=${addresses:+,}$HOST:${ports%% *}
    pids+=${pids:+,}$(<"$PID_FILE")
    logs+=("$LOG_DIR/server.log")
  done
  node "$SCRIPT_DIR/wait-ready.mjs" "${flags[@]}" "$addresses" "$((START_TIMEOUT * 1000))" "$pids" "${logs[@]}" 9>&- || rc=$?
  return "$rc"
}

# ", N s CPU": the CPU time a JVM has used so far (user + system, from /proc), or nothing.
cpu_used() {
  local -a stat
  local ticks hz
  [[ -r /proc/$1/stat ]] || return 0
  hz=$(getconf CLK_TCK 2>/dev/null) || hz=100
  read -r -a stat <"/proc/$1/stat" 2>/dev/null || return 0
  # Fields 14 and 15 (utime, stime) in clock ticks; the command name ("java") has no space.
  ticks=$((stat[13] + stat[14]))
  printf ', %d.%d s CPU' $((ticks / hz)) $((ticks % hz * 10 / hz))
}

# signal_and_wait <TERM|KILL> <nodeId...>: signals the given nodes' brokers at
# once (SIGTERM is a controlled shutdown each) and waits until all are gone;
# SIGKILL for any still there after STOP_TIMEOUT. Removes their pid files.
signal_and_wait() {
  local sig=$1 id pid i what
  shift
  local -A pids=()
  local -a signalled=()
  for id in "$@"; do
    use_node "$id"
    if pid=$(running_pid); then
      pids[$id]=$pid
      signalled+=("$id")
      if ((NODES == 1)); then what="broker pid $pid$(cpu_used "$pid")"; else what="node $id (pid $pid$(cpu_used "$pid"))"; fi
      if [[ $sig == TERM ]]; then log "stopping $what"; else log "killing $what"; fi
      kill "-$sig" "$pid" 2>/dev/null || true
    elif ((NODES == 1)); then
      log "not running"
    else
      log "node $id is not running"
    fi
  done
  local -i limit=$((STOP_TIMEOUT * 10))
  [[ $sig == KILL ]] && limit=50
  for ((i = 0; ${#pids[@]} > 0; i++)); do
    for id in "${!pids[@]}"; do
      use_node "$id"
      pid_is_ours "${pids[$id]}" "$PROPS" || unset "pids[$id]"
    done
    ((${#pids[@]} > 0)) || break
    if ((i == limit)) && [[ $sig == TERM ]]; then
      for id in "${!pids[@]}"; do
        log "broker pid ${pids[$id]} ignored SIGTERM for ${STOP_TIMEOUT}s, sending SIGKILL"
        kill -KILL "${pids[$id]}" 2>/dev/null || true
      done
    elif ((i >= limit + 50)); then
      die "could not kill broker pid ${pids[*]}"
    fi
    sleep 0.1
  done
  for id in "$@"; do
    use_node "$id"
    rm -f "$PID_FILE" "$PID_FILE.new"
  done
  if ((${#signalled[@]} > 0)); then
    if [[ $sig == KILL ]]; then what=killed; else what=stopped; fi
    if ((NODES == 1)); then log "$what"; else log "$what node(s) ${signalled[*]}"; fi
  fi
}

# Starts the chosen node's JVM detached and records its pid; does not wait.
launch_node() {
  local -a jvm=() heap=() extra=()
  read -r -a heap <<<"$HEAP_OPTS"
  jvm+=("${heap[@]}")
  jvm+=(-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35
    -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError
    -Djava.awt.headless=true
    "-Dlog4j.configuration=file:$LOG4J" "-Dkafka.logs.dir=$LOG_DIR")
  # The extra flags last, so they can override the JIT's and the collector's.
  read -r -a extra <<<"$JIT_OPTS $EXTRA_JVM_OPTS"
  jvm+=("${extra[@]}")

  [[ -f $LOG_DIR/kafka.out ]] && mv -f "$LOG_DIR/kafka.out" "$LOG_DIR/kafka.out.1"
  local new_pid_file=$PID_FILE.new i
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
  for ((i = 0; i < 100; i++)); do
    [[ -s $new_pid_file ]] && break
    sleep 0.05
  done
  [[ -s $new_pid_file ]] || die "the broker process did not start"
  mv "$new_pid_file" "$PID_FILE"
}

# Sets ALIVE, how many nodes of the cluster run, and TO_START, those of the
# given nodes that do not.
survey() {
  local id
  ALIVE=0
  TO_START=()
  for id in $(all_nodes); do
    use_node "$id"
    running_pid >/dev/null && ALIVE=$((ALIVE + 1))
  done
  for id in "$@"; do
    use_node "$id"
    running_pid >/dev/null || TO_START+=("$id")
  done
}

# The address line of every node, whether running or not: clients try each.
print_brokers() {
  printf 'KAFKA_BROKERS=%s\n' "$(bootstrap_address)"
}

cmd_start() {
  need_node
  take_lock
  : >"$MARKER"
  settle_node_count

  local -a ids=() to_start=()
  local id rc=0 alive
  mapfile -t ids < <(target_nodes)
  survey "${ids[@]}"
  if ((${#TO_START[@]} == 0)); then
    bootstrap_address >/dev/null || die "broker pid $(<"$PID_FILE") is running but $BOOTSTRAP_FILE is missing; run kafka.sh stop"
    wait_ready "$((NODES == 1 ? 0 : ALIVE))" "${ids[@]}" || rc=$?
    if [[ $rc -eq 0 ]]; then
      if ((NODES == 1)); then log "already running (pid $(<"$PID_FILE"))"; else log "already running (nodes ${ids[*]})"; fi
      print_brokers
      return 0
    fi
    [[ $rc -eq 2 ]] || die "broker(s) running but not answering on $(bootstrap_address); try kafka.sh stop"
    log "a broker died while being checked; starting a new one"
    survey "${ids[@]}"
  fi
  alive=$ALIVE
  to_start=("${TO_START[@]}")
  for id in "${to_start[@]}"; do
    use_node "$id"
    if [[ -f $PID_FILE ]]; then
      log "removing stale pid file (pid $(<"$PID_FILE") is not running)"
      rm -f "$PID_FILE"
    fi
  done
  # KRaft needs most controllers up: one node of a stopped cluster alone never gets ready.
  if ((2 * (alive + ${#to_start[@]}) <= NODES)); then
    die "only $alive of $NODES nodes are running: starting node(s) ${to_start[*]} would not make a quorum; use kafka.sh start"
  fi

  find_java
  ensure_jars
  for id in $(all_nodes); do
    use_node "$id"
    mkdir -p "$DATA_DIR" "$LOG_DIR"
  done

  # Ports: with every node down all may move (to the previous ones if still
  # free); with some running, the voters list is fixed and the others must
  # come back on their own ports.
  local -a ports=() voters=()
  local p b c addresses=''
  if ((alive == 0)); then
    local -a prev=()
    for id in $(all_nodes); do
      use_node "$id"
      p=$(node_ports) || p='0 0'
      read -r b c <<<"$p"
      prev+=("$b" "$c")
    done
    p=$(choose_ports "$NODES" "${MEGURI_KAFKA_KEEP_PORTS:-0}" "${prev[@]}") || die "could not find free ports on $HOST"
    read -r -a ports <<<"$p"
  else
    for id in $(all_nodes); do
      use_node "$id"
      p=$(node_ports) || die "node $id has no $PORTS_FILE"
      read -r b c <<<"$p"
      ports+=("$b" "$c")
    done
    for id in "${to_start[@]}"; do
      b=${ports[2 * id - 2]} c=${ports[2 * id - 1]}
      choose_ports 1 1 "$b" "$c" >/dev/null 2>&1 || die "node $id's ports $b and $c are taken"
    done
  fi
  for id in $(all_nodes); do
    voters+=("$id@$HOST:${ports[2 * id - 1]}")
    addresses+=${addresses:+,}$HOST:${ports[2 * id - 2]}
  done
  write_tools_log4j
  for id in "${to_start[@]}"; do
    use_node "$id"
    b=${ports[2 * id - 2]} c=${ports[2 * id - 1]}
    write_config "$id" "$b" "$c" "$(IFS=,; echo "${voters[*]}")"
    printf '%s %s\n' "$b" "$c" >"$PORTS_FILE"
  done
  format_storage_if_needed "${to_start[@]}"
  printf '%s\n' "$addresses" >"$BOOTSTRAP_FILE"

  local -A log_offset=()
  for id in "${to_start[@]}"; do
    use_node "$id"
    read -r b c <"$PORTS_FILE"
    if ((NODES == 1)); then
      log "starting Kafka $KAFKA_VERSION on $HOST:$b (controller $HOST:$c), state in $STATE_DIR"
    else
      log "starting Kafka $KAFKA_VERSION node $id on $HOST:$b (controller $HOST:$c), state in $NODE_DIR"
    fi
    log_offset[$id]=0
    [[ -f $LOG_DIR/server.log ]] && log_offset[$id]=$(wc -c <"$LOG_DIR/server.log")
    launch_node
  done
  alive=$((alive + ${#to_start[@]}))

  local t0=$SECONDS
  rc=0
  wait_ready "$((NODES == 1 ? 0 : alive))" "${to_start[@]}" || rc=$?
  if ((rc != 0)); then
    local -a dead=()
    for id in "${to_start[@]}"; do
      use_node "$id"
      show_log_tail "${log_offset[$id]}"
      running_pid >/dev/null || dead+=("$id")
    done
    if ((rc == 2)); then
      ((NODES == 1)) && { rm -f "$PID_FILE"; die "the broker exited during startup"; }
      # A half-started cluster is no use: the nodes that did come up go too.
      signal_and_wait TERM "${to_start[@]}"
      die "node(s) ${dead[*]} exited during startup"
    fi
    signal_and_wait TERM "${to_start[@]}"
    die "the broker was not ready within ${START_TIMEOUT}s (MEGURI_KAFKA_START_TIMEOUT)"
  fi
  if ((NODES == 1)); then
    log "ready after $((SECONDS - t0))s (pid $(<"$PID_FILE"), logs in $LOG_DIR)"
  else
    local started=''
    for id in "${to_start[@]}"; do
      use_node "$id"
      started+=" $id:$(<"$PID_FILE")"
    done
    log "ready after $((SECONDS - t0))s (node:pid$started; logs in $STATE_DIR/node-<id>/logs)"
  fi
  print_brokers
}

cmd_stop() {
  if [[ ! -d $STATE_DIR ]]; then
    log "not running (no state dir)"
    return 0
  fi
  take_lock
  local -a ids=()
  mapfile -t ids < <(target_nodes)
  signal_and_wait TERM "${ids[@]}"
}

cmd_kill() {
  if [[ ! -d $STATE_DIR ]]; then
    log "not running (no state dir)"
    return 0
  fi
  take_lock
  local -a ids=()
  mapfile -t ids < <(target_nodes)
  signal_and_wait KILL "${ids[@]}"
}

cmd_status() {
  local pid address
  if ((NODES == 1)); then
    use_node 1
    if pid=$(running_pid) && address=$(bootstrap_address); then
      log "running (pid $pid, state $STATE_DIR)"
      printf '%s\n' "$address"
      return 0
    fi
    log "not running (state $STATE_DIR)"
    return 1
  fi
  local id ports up=0
  for id in $(all_nodes); do
    use_node "$id"
    ports=$(node_ports) || ports='? ?'
    if pid=$(running_pid); then
      printf '%s %s:%s running %s\n' "$id" "$HOST" "${ports%% *}" "$pid"
      up=$((up + 1))
    else
      printf '%s %s:%s stopped\n' "$id" "$HOST" "${ports%% *}"
    fi
  done
  log "$up of $NODES nodes running (state $STATE_DIR)"
  ((up == NODES)) && return 0
  ((up == 0)) && return 1
  return 2
}

cmd_env() {
  local address id up=0
  for id in $(all_nodes); do
    use_node "$id"
    running_pid >/dev/null && up=$((up + 1))
  done
  if ((up > 0)) && address=$(bootstrap_address); then
    ((up == NODES)) || log "only $up of $NODES nodes are running"
    printf 'KAFKA_BROKERS=%s\n' "$address"
    # meguri's defaults are 3 copies with 2 in sync; fewer nodes cannot hold that.
    printf 'MEGURI_REPLICATION_FACTOR=%s\nMEGURI_MIN_INSYNC_REPLICAS=%s\n' "$RF" "$MIN_ISR"
    return 0
  fi
  log "not running (state $STATE_DIR); use kafka.sh start"
  return 1
}

cmd_reset() {
  # A cluster's nodes get SIGKILL: their data goes next, and the last nodes'
  # controlled shutdown would only wait for a quorum that is leaving too.
  if ((NODES > 1)); then cmd_kill; else cmd_stop; fi
  [[ -d $STATE_DIR ]] || return 0
  # Guard against MEGURI_KAFKA_STATE_DIR pointing somewhere precious.
  [[ -f $MARKER ]] || die "$STATE_DIR lacks $(basename "$MARKER"); refusing to delete it"
  rm -rf -- "$STATE_DIR"
  log "deleted $STATE_DIR"
}

[[ -n $KAFKA_VERSION ]] || die "could not read kafka.version from $POM"

COMMAND=${1:-}
(($# == 0)) || shift
OPT_BROKERS=''
OPT_NODE=''
while (($# > 0)); do
  case $1 in
    --brokers=* | --node=*) set -- "${1%%=*}" "${1#*=}" "${@:2}" ;;
    --brokers | --node)
      (($# >= 2)) || { usage; exit 64; }
      [[ $2 =~ ^[1-9]$ ]] || die "$1 takes a number from 1 to 9, not '$2'"
      if [[ $1 == --brokers ]]; then OPT_BROKERS=$2; else OPT_NODE=$2; fi
      shift 2
      ;;
    *)
      usage
      exit 64
      ;;
  esac
done
case $COMMAND in
  start) [[ -z $OPT_BROKERS || -z $OPT_NODE ]] || die "--brokers and --node do not go together" ;;
  stop | kill) [[ -z $OPT_BROKERS ]] || die "$COMMAND takes --node, not --brokers" ;;
  *) [[ -z $OPT_BROKERS$OPT_NODE ]] || die "$COMMAND takes no options" ;;
esac
read_node_count
[[ -z $OPT_NODE ]] || ((OPT_NODE <= NODES)) || die "no node $OPT_NODE: $STATE_DIR has $NODES"

case $COMMAND in
  start) cmd_start ;;
  jars) ensure_jars ;;
  stop) cmd_stop ;;
  kill) cmd_kill ;;
  status) cmd_status ;;
  env) cmd_env ;;
  reset) cmd_reset ;;
  help | -h | --help) usage ;;
  *)
    usage
    exit 64
    ;;
esac
