# shellcheck shell=bash
# Redis for scripts/services.sh: BullMQ's queues (job delivery and retries; no durable truth).
# Sourced, never run on its own.

REDIS_DEFAULT_URL="redis://127.0.0.1:6379"
REDIS_PIDFILE="$SLUICE_DATA_DIR/redis.pid" # exists only for a redis-server this script started

# RD_FROM_ENV: pointed elsewhere than the local default (see pg_resolve).
redis_resolve() {
  RD_URL="${REDIS_URL:-$REDIS_DEFAULT_URL}"
  RD_FROM_ENV=$([[ "$RD_URL" != "$REDIS_DEFAULT_URL" ]] && echo 1 || echo 0)
}

# PING answered with PONG. redis-cli understands every URL form (auth, db, rediss); without it, a
# raw PING over bash's /dev/tcp covers the plain host:port case.
redis_ping() {
  local url=$1 out
  if command -v redis-cli >/dev/null; then
    out=$(timeout 3 redis-cli --no-auth-warning -u "$url" ping 2>/dev/null || true)
  elif [[ "$url" =~ ^redis://([^:/@]+)(:([0-9]+))?/?$ ]]; then
    # shellcheck disable=SC2016 # expanded by the inner shell
    out=$(timeout 3 bash -c 'exec 3<>/dev/tcp/"$0"/"$1"; printf "PING\r\n" >&3; head -c 7 <&3' \
      "${BASH_REMATCH[1]}" "${BASH_REMATCH[3]:-6379}" 2>/dev/null || true)
  fi
  [[ "$out" == *PONG* ]]
}

redis_start_local() {
  if ! command -v redis-server >/dev/null; then
    die redis "nothing answers PING at $RD_URL and no redis-server is installed" \
      "install it: apt-get install -y redis-server (then run this script again)" \
      "or point Sluice at yours: export REDIS_URL=redis://host:6379" "$DOCKER_HINT"
  fi
  # The Debian package's dirs when they are usable, else our own data dir (nothing is saved anyway).
  local dir=/var/lib/redis logfile=/var/log/redis/ci.log
  [[ -d $dir && -w $dir ]] || dir=$SLUICE_DATA_DIR/redis
  [[ -d ${logfile%/*} && -w ${logfile%/*} ]] || logfile=$SLUICE_DATA_DIR/redis/redis.log
  mkdir -p "$SLUICE_DATA_DIR" "$dir" "${logfile%/*}"
  note redis "not reachable at $RD_URL; starting redis-server on 127.0.0.1:6379"
  local out
  if ! out=$(redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir "$dir" --logfile "$logfile" --pidfile "$REDIS_PIDFILE" 2>&1 9>&-); then
    die redis "redis-server could not be started: ${out//$'\n'/ }" "see $logfile" "$DOCKER_HINT"
  fi
  wait_for 15 redis_ping "$RD_URL" ||
    die redis "redis-server was started but does not answer PING at $RD_URL within 15 s" \
      "see $logfile; is port 6379 held by something else? $(port_holder 6379)" "$DOCKER_HINT"
  RD_STARTED=1
}

redis_start() {
  redis_resolve
  RD_STARTED=0
  if ! redis_ping "$RD_URL"; then
    if ((RD_FROM_ENV)); then
      die redis "REDIS_URL=$RD_URL does not answer PING" \
        "start that server, or fix REDIS_URL (password, TLS: rediss://)" \
        "or unset REDIS_URL to use (or start) the local one at $REDIS_DEFAULT_URL" "$DOCKER_HINT"
    fi
    if tcp_open 127.0.0.1 6379; then
      die redis "port 6379 is open but does not answer a Redis PING (held by $(port_holder 6379))" \
        "free the port, or point Sluice at a working Redis: export REDIS_URL=redis://host:port" \
        "$DOCKER_HINT"
    fi
    redis_start_local
  fi
  local how="already running"
  ((RD_STARTED)) && how="started redis-server pid $(read_pid "$REDIS_PIDFILE"); \`stop\` stops it"
  ((RD_FROM_ENV)) && how="from REDIS_URL"
  say redis "$RD_URL ($how)"
}

redis_stop() {
  local pid
  pid=$(read_pid "$REDIS_PIDFILE")
  if pid_matches "$pid" redis-server; then
    kill -TERM "$pid"
    wait_for 15 pid_gone "$pid" || kill -KILL "$pid" 2>/dev/null || true
    say redis "stopped redis-server pid $pid (started by this script)"
  else
    say redis "left as it was (not started by this script)"
  fi
  rm -f "$REDIS_PIDFILE"
}

redis_status() {
  redis_resolve
  local pid who=""
  pid=$(read_pid "$REDIS_PIDFILE")
  pid_matches "$pid" redis-server && who=", started by this script (pid $pid)"
  if redis_ping "$RD_URL"; then
    say redis "reachable   $RD_URL$who"
  else
    say redis "UNREACHABLE $RD_URL"
    return 1
  fi
}
