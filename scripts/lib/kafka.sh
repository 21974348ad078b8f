# shellcheck shell=bash
# Kafka for scripts/services.sh: the pipelines' sources. A single-node KRaft broker resolved from
# Maven Central (version pinned in scripts/kafka/pom.xml). Sourced, never run on its own.

KAFKA_POM="$REPO_ROOT/scripts/kafka/pom.xml"
KAFKA_VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$KAFKA_POM")
KAFKA_LIB="$SLUICE_CACHE_DIR/kafka/$KAFKA_VERSION/lib"
KAFKA_DIR="$SLUICE_DATA_DIR/kafka"
KAFKA_PIDFILE="$KAFKA_DIR/kafka.pid"
KAFKA_PORT="${SLUICE_KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${SLUICE_KAFKA_CONTROLLER_PORT:-9093}"
KAFKA_HEAP="${SLUICE_KAFKA_HEAP:-512m}"
KAFKA_DEFAULT_BROKERS="127.0.0.1:$KAFKA_PORT"

# KF_FROM_ENV: pointed elsewhere than the local default (see pg_resolve).
kafka_resolve() {
  KF_BROKERS="${KAFKA_BROKERS:-$KAFKA_DEFAULT_BROKERS}"
  KF_FROM_ENV=$([[ "$KF_BROKERS" != "$KAFKA_DEFAULT_BROKERS" ]] && echo 1 || echo 0)
}

kafka_require_node() {
  [[ -f "$REPO_ROOT/node_modules/kafkajs/package.json" ]] && command -v node >/dev/null && return
  die kafka "the Kafka check needs Node.js and kafkajs from node_modules, which are missing" \
    "run \`npm ci\` in the repo root first"
}

# A metadata answer, not merely an open port: see kafka-ready.mjs.
kafka_ready() { node "$REPO_ROOT/scripts/lib/kafka-ready.mjs" "$1" >/dev/null 2>&1; }
kafka_describe() { node "$REPO_ROOT/scripts/lib/kafka-ready.mjs" "$1" 2>&1 || true; }

# The pid in our pid file, if that process is still the broker this script started from this data dir.
kafka_our_pid() {
  local pid
  pid=$(read_pid "$KAFKA_PIDFILE")
  pid_matches "$pid" kafka.Kafka "$KAFKA_DIR/server.properties" && echo "$pid"
  return 0
}

kafka_require_java() {
  command -v java >/dev/null && java -version >/dev/null 2>&1 && return
  die kafka "no working \`java\`: the local Kafka broker is a JVM program" \
    "install OpenJDK 17: apt-get install -y openjdk-17-jre-headless (then run this script again)" \
    "or point Sluice at a broker: export KAFKA_BROKERS=host:9092" "$DOCKER_HINT"
}

# Resolve the broker's jars once per machine into the git-ignored cache. Downloaded into a temp dir
# and moved into place, so an interrupted download is never mistaken for a complete cache.
kafka_ensure_jars() {
  [[ -f "$KAFKA_LIB/.complete" ]] && return
  if ! command -v mvn >/dev/null; then
    die kafka "no \`mvn\` to resolve Kafka $KAFKA_VERSION from Maven Central, and $KAFKA_LIB is empty" \
      "install Maven: apt-get install -y maven (then run this script again)" \
      "or point Sluice at a broker: export KAFKA_BROKERS=host:9092" "$DOCKER_HINT"
  fi
  local tmp="$KAFKA_LIB.tmp.$$" log="$SLUICE_CACHE_DIR/kafka/$KAFKA_VERSION/mvn.log"
  mkdir -p "${KAFKA_LIB%/*}"
  rm -rf "$tmp"
  note kafka "resolving Kafka $KAFKA_VERSION from Maven Central into $KAFKA_LIB (first start in this checkout, ~30 s)"
  if ! mvn -q -B -f "$KAFKA_POM" dependency:copy-dependencies -DoutputDirectory="$tmp" >"$log" 2>&1; then
    rm -rf "$tmp"
    die kafka "mvn could not resolve Kafka $KAFKA_VERSION (log: $log): $(tail -n 3 "$log" | tr '\n' ' ')" \
      "check that Maven Central is reachable (proxy settings in ~/.m2/settings.xml)" \
      "or point Sluice at a broker: export KAFKA_BROKERS=host:9092" "$DOCKER_HINT"
  fi
  touch "$tmp/.complete"
  rm -rf "$KAFKA_LIB"
  mv "$tmp" "$KAFKA_LIB"
}

# Rendered on every start, so changed ports or dirs take effect on the next start.
kafka_write_config() {
  mkdir -p "$KAFKA_DIR/data"
  sed -e "s|@PORT@|$KAFKA_PORT|g" -e "s|@CONTROLLER_PORT@|$KAFKA_CONTROLLER_PORT|g" \
    -e "s|@LOG_DIRS@|$KAFKA_DIR/data|g" \
    "$REPO_ROOT/scripts/kafka/server.properties" >"$KAFKA_DIR/server.properties"
  cp "$REPO_ROOT/scripts/kafka/log4j.properties" "$KAFKA_DIR/log4j.properties"
}

# java and its options, for the storage tool and the broker alike (logging goes to .data/kafka/).
kafka_java_cmd() {
  KAFKA_JAVA=(java -Xmx"$KAFKA_HEAP" -Xms128m -Djava.awt.headless=true
    -Dlog4j.configuration="file:$KAFKA_DIR/log4j.properties" -Dkafka.logs.dir="$KAFKA_DIR"
    -cp "$KAFKA_LIB/*")
}

# KRaft storage must be formatted with a cluster id once; later starts reuse it (and its topics).
kafka_format_storage() {
  [[ -f "$KAFKA_DIR/data/meta.properties" ]] && return
  local id out
  # A cluster id is 16 random bytes in URL-safe base64; Kafka avoids a leading '-' (reads as a flag).
  id=$(node -e 'process.stdout.write(require("crypto").randomBytes(16).toString("base64url").replace(/^-/, "A"))')
  kafka_java_cmd
  if ! out=$("${KAFKA_JAVA[@]}" kafka.tools.StorageTool format -t "$id" -c "$KAFKA_DIR/server.properties" 2>&1); then
    die kafka "formatting Kafka storage in $KAFKA_DIR/data failed: ${out//$'\n'/ }" \
      "remove $KAFKA_DIR/data to start from empty storage, then run this script again"
  fi
}

kafka_launch() {
  rm -f "$KAFKA_PIDFILE"
  # server.log is appended to across starts: remember where this start's lines begin.
  local before=0
  [[ -f "$KAFKA_DIR/server.log" ]] && before=$(wc -l <"$KAFKA_DIR/server.log")
  KAFKA_LOG_START=$((before + 1))
  kafka_java_cmd
  # setsid: its own session, so closing the terminal or Ctrl-C in it does not take the broker down.
  # The inner shell writes its own pid and then becomes java, so the pid file names the broker.
  # shellcheck disable=SC2016 # expanded by the inner shell
  setsid bash -c 'echo $$ >"$0"; exec "$@"' "$KAFKA_PIDFILE" \
    "${KAFKA_JAVA[@]}" kafka.Kafka "$KAFKA_DIR/server.properties" \
    </dev/null >"$KAFKA_DIR/stdout.log" 2>&1 9>&- &
  wait_for 5 test -s "$KAFKA_PIDFILE" || die kafka "the broker process did not start (see $KAFKA_DIR/stdout.log)"
}

# The line that says why this start's broker died: its first ERROR, else the last lines it wrote.
kafka_first_error() {
  local lines line
  lines=$({ tail -n "+${KAFKA_LOG_START:-1}" "$KAFKA_DIR/server.log"; cat "$KAFKA_DIR/stdout.log"; } 2>/dev/null)
  # An ERROR line is usually followed by the exception that says what actually went wrong.
  line=$(grep -m1 -A1 -E ' (ERROR|FATAL) ' <<<"$lines" | tr '\n\t' '  ' ||
    grep -m1 -E 'Exception|Error' <<<"$lines" || true)
  [[ -n "$line" ]] || line=$(tail -n 3 <<<"$lines" | tr '\n' ' ')
  echo "${line:0:500}"
}

# Wait for a metadata answer while watching the process, so a crash reports at once with its log.
# The cheap TCP check gates the Node.js one: on two cores, starting node every half second slows
# the booting JVM down noticeably.
kafka_wait_ready() {
  local pid=$1 deadline=$((SECONDS + 90))
  until tcp_open 127.0.0.1 "$KAFKA_PORT" && kafka_ready "$KAFKA_DEFAULT_BROKERS"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$KAFKA_PIDFILE"
      die kafka "the broker exited during startup: $(kafka_first_error)" \
        "full logs: $KAFKA_DIR/server.log and $KAFKA_DIR/stdout.log" "$DOCKER_HINT"
    fi
    ((SECONDS < deadline)) || die kafka "the broker (pid $pid) did not answer within 90 s" \
      "see $KAFKA_DIR/server.log; stop it with: bash scripts/services.sh stop"
    sleep 0.5
  done
}

kafka_port_taken_error() {
  local port=$1 var=$2 what=$3
  die kafka "port $port $what is taken by something that is not a Kafka broker: $(port_holder "$port")" \
    "free the port (stop that process), then run this script again" \
    "or point Sluice at a running broker: export KAFKA_BROKERS=host:port" \
    "or run the local broker on other ports: $var=<free port> bash scripts/services.sh start" \
    "$DOCKER_HINT"
}

kafka_start() {
  kafka_resolve
  kafka_require_node
  local pid
  if ((KF_FROM_ENV)); then
    kafka_ready "$KF_BROKERS" ||
      die kafka "KAFKA_BROKERS=$KF_BROKERS does not answer a Kafka metadata request ($(kafka_describe "$KF_BROKERS"))" \
        "start that broker, or fix KAFKA_BROKERS (comma-separated host:port)" \
        "or unset KAFKA_BROKERS to use (or start) the local one at $KAFKA_DEFAULT_BROKERS" "$DOCKER_HINT"
    say kafka "$KF_BROKERS (from KAFKA_BROKERS)"
    return
  fi

  pid=$(kafka_our_pid)
  if [[ -n "$pid" ]]; then
    # Ours, and either serving or still starting from an earlier run: never start a second one.
    kafka_wait_ready "$pid"
    say kafka "$KF_BROKERS (already running, started by this script: pid $pid, log $KAFKA_DIR/server.log)"
    return
  fi
  if tcp_open 127.0.0.1 "$KAFKA_PORT"; then
    # Someone's broker (another checkout, Docker) is fine to share. A broker that has only just bound
    # its port gets a few seconds before we call the port taken.
    if wait_for 8 kafka_ready "$KF_BROKERS"; then
      say kafka "$KF_BROKERS (already running, not started by this script)"
      return
    fi
    kafka_port_taken_error "$KAFKA_PORT" SLUICE_KAFKA_PORT "(Kafka's client port)"
  fi
  if tcp_open 127.0.0.1 "$KAFKA_CONTROLLER_PORT"; then
    kafka_port_taken_error "$KAFKA_CONTROLLER_PORT" SLUICE_KAFKA_CONTROLLER_PORT "(the local broker's controller port)"
  fi

  kafka_require_java
  kafka_ensure_jars
  kafka_write_config
  kafka_format_storage
  note kafka "starting Kafka $KAFKA_VERSION (KRaft, single node) on $KF_BROKERS"
  kafka_launch
  pid=$(read_pid "$KAFKA_PIDFILE")
  kafka_wait_ready "$pid"
  say kafka "$KF_BROKERS (started Kafka $KAFKA_VERSION: pid $pid, data $KAFKA_DIR/data, log $KAFKA_DIR/server.log)"
}

kafka_stop() {
  local pid
  pid=$(kafka_our_pid)
  if [[ -z "$pid" ]]; then
    rm -f "$KAFKA_PIDFILE"
    say kafka "left as it was (no broker started by this script is running)"
    return
  fi
  # SIGTERM runs the broker's controlled shutdown (flushes logs, so the next start needs no recovery).
  kill -TERM "$pid"
  if ! wait_for 30 pid_gone "$pid"; then
    kill -KILL "$pid" 2>/dev/null || true
    note kafka "pid $pid did not stop within 30 s; killed it"
  fi
  rm -f "$KAFKA_PIDFILE"
  say kafka "stopped Kafka pid $pid (data kept in $KAFKA_DIR/data)"
}

kafka_status() {
  kafka_resolve
  local pid who="" info
  pid=$(kafka_our_pid)
  [[ -n "$pid" ]] && who=", started by this script (pid $pid)"
  if [[ -f "$REPO_ROOT/node_modules/kafkajs/package.json" ]] && info=$(node "$REPO_ROOT/scripts/lib/kafka-ready.mjs" "$KF_BROKERS" 2>/dev/null); then
    say kafka "reachable   $KF_BROKERS$who ($info)"
  else
    say kafka "UNREACHABLE $KF_BROKERS${pid:+ (broker pid $pid is running but not answering)}"
    return 1
  fi
}
