#!/usr/bin/env bash
# Local services for Sluice: Postgres, Redis and Kafka.
#   bash scripts/services.sh start|stop|status
# start: for each service use the URL from the environment (DATABASE_URL, REDIS_URL, KAFKA_BROKERS)
# if set, else the local default if it answers, else start a local one; then write the resolved URLs
# to .data/services.env. Idempotent. stop: stops only what this script started. See docs/services.md.
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/common.sh
source "$REPO_ROOT/scripts/lib/common.sh"
source "$REPO_ROOT/scripts/lib/postgres.sh"
source "$REPO_ROOT/scripts/lib/redis.sh"
source "$REPO_ROOT/scripts/lib/kafka.sh"

write_env_file() {
  pg_resolve
  redis_resolve
  kafka_resolve
  {
    echo "# Written by scripts/services.sh start; \`source\` it to reach the services it resolved."
    printf 'export DATABASE_URL=%q\n' "$PG_URL"
    printf 'export REDIS_URL=%q\n' "$RD_URL"
    printf 'export KAFKA_BROKERS=%q\n' "$KF_BROKERS"
  } >"$SERVICES_ENV.tmp"
  mv "$SERVICES_ENV.tmp" "$SERVICES_ENV"
  say env "wrote $SERVICES_ENV (source it to use these URLs)"
}

# One start/stop at a time per data dir: two concurrent starts (parallel test runners, two
# terminals) must not both launch a broker. Every daemon started under the lock gets `9>&-`, or it
# would inherit the lock's descriptor and hold the lock for as long as it runs.
with_lock() {
  mkdir -p "$SLUICE_DATA_DIR"
  exec 9>"$SLUICE_DATA_DIR/services.lock"
  flock -w 180 9 || die services "another services.sh start/stop holds $SLUICE_DATA_DIR/services.lock"
  "$@"
}

cmd_start() {
  postgres_start
  redis_start
  kafka_start
  write_env_file
}

cmd_stop() {
  kafka_stop
  redis_stop
  postgres_stop
}

cmd_status() {
  local rc=0
  postgres_status || rc=1
  redis_status || rc=1
  kafka_status || rc=1
  return "$rc"
}

case "${1:-}" in
  start) with_lock cmd_start ;;
  stop) with_lock cmd_stop ;;
  status) cmd_status ;;
  *)
    echo "usage: $0 start|stop|status   (see docs/services.md)" >&2
    exit 2
    ;;
esac
