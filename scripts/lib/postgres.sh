# shellcheck shell=bash
# Postgres for scripts/services.sh: control-plane tables, checkpoints and sink tables live here.
# Sourced, never run on its own.

PG_DEFAULT_URL="postgresql://postgres@127.0.0.1:5432/sluice"
PG_STARTED_MARK="$SLUICE_DATA_DIR/postgres.started" # holds the cluster version this script started

# PG_FROM_ENV: the user pointed somewhere else, so never start anything local. The local default
# spelled out (as in a sourced .data/services.env) counts as the default.
pg_resolve() {
  PG_URL="${DATABASE_URL:-$PG_DEFAULT_URL}"
  PG_FROM_ENV=$([[ "$PG_URL" != "$PG_DEFAULT_URL" ]] && echo 1 || echo 0)
}

# The same server with another database in the path; query string (sslmode=...) kept.
pg_url_with_db() {
  if [[ "$1" =~ ^([a-zA-Z]+://[^/?]*)(/[^?]*)?(\?.*)?$ ]]; then
    echo "${BASH_REMATCH[1]}/$2${BASH_REMATCH[3]}"
  else
    echo "$1"
  fi
}

pg_url_db() {
  local path
  [[ "$1" =~ ^[a-zA-Z]+://[^/?]*/([^?]*) ]] && path=${BASH_REMATCH[1]}
  echo "${path:-postgres}"
}

pg_require_client() {
  command -v pg_isready >/dev/null && command -v psql >/dev/null && return
  die postgres "the PostgreSQL client tools (psql, pg_isready) are not installed" \
    "install them: apt-get install -y postgresql-client (macOS: brew install libpq)"
}

# The server accepts connections (whatever the database or credentials).
pg_reachable() { PGCONNECT_TIMEOUT=3 pg_isready -q -t 3 -d "$1" >/dev/null 2>&1; }

# Start the Debian cluster (this machine kind has one; a fresh Debian gets one from `apt-get install
# postgresql`). Only reached when nobody pointed DATABASE_URL elsewhere and the default is down.
pg_start_local() {
  local versions version out
  versions=$(find /etc/postgresql -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | sort -V || true)
  if ! command -v pg_ctlcluster >/dev/null || [[ -z "$versions" ]]; then
    die postgres "nothing answers at $PG_URL and no local PostgreSQL server is installed" \
      "install one: apt-get install -y postgresql (then run this script again)" \
      "or point Sluice at yours: export DATABASE_URL=postgresql://user@host:5432/sluice" \
      "$DOCKER_HINT"
  fi
  version=$(tail -n1 <<<"$versions")
  note postgres "not reachable at 127.0.0.1:5432; starting the local PostgreSQL $version cluster"
  if ! out=$(pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>&1 9>&-); then
    die postgres "PostgreSQL is down and could not be started: ${out//$'\n'/ }" \
      "start it yourself: pg_ctlcluster --skip-systemctl-redirect $version main start (as root or postgres)" \
      "and see its log: /var/log/postgresql/postgresql-$version-main.log" \
      "or point Sluice at another server: export DATABASE_URL=postgresql://user@host:5432/sluice" \
      "$DOCKER_HINT"
  fi
  mkdir -p "$SLUICE_DATA_DIR"
  echo "$version" >"$PG_STARTED_MARK"
  wait_for 30 pg_reachable "$PG_URL" ||
    die postgres "PostgreSQL $version started but does not answer at $PG_URL within 30 s" \
      "check port and listen_addresses in /etc/postgresql/$version/main/postgresql.conf" \
      "and its log: /var/log/postgresql/postgresql-$version-main.log" "$DOCKER_HINT"
  PG_STARTED=1
}

# Connect to the configured database; if only it is missing, create it from the maintenance db.
pg_ensure_database() {
  local db out
  db=$(pg_url_db "$PG_URL")
  if out=$(PGCONNECT_TIMEOUT=5 psql "$PG_URL" -XAtq -v ON_ERROR_STOP=1 -c 'SELECT 1' 2>&1); then
    return
  fi
  if [[ "$out" != *"database \"$db\" does not exist"* ]]; then
    die postgres "PostgreSQL at $PG_URL answers but refuses a query: ${out//$'\n'/ }" \
      "check the user, password and pg_hba.conf rules for that URL (DATABASE_URL)" "$DOCKER_HINT"
  fi
  # psql interpolates :"db" (as a quoted identifier) only in input, not in -c.
  if ! out=$(psql "$(pg_url_with_db "$PG_URL" postgres)" -XAtq -v ON_ERROR_STOP=1 -v db="$db" \
    <<<'CREATE DATABASE :"db"' 2>&1); then
    die postgres "database $db does not exist and could not be created: ${out//$'\n'/ }" \
      "create it yourself: createdb $db (as a user allowed to), or use a URL with an existing database"
  fi
  PG_CREATED_DB=1
}

postgres_start() {
  pg_resolve
  pg_require_client
  PG_STARTED=0 PG_CREATED_DB=0
  if ! pg_reachable "$PG_URL"; then
    if ((PG_FROM_ENV)); then
      die postgres "DATABASE_URL=$PG_URL is not reachable" \
        "start that server, or fix DATABASE_URL" \
        "or unset DATABASE_URL to use (or start) the local one at $PG_DEFAULT_URL" "$DOCKER_HINT"
    fi
    pg_start_local
  fi
  pg_ensure_database
  local how="already running"
  ((PG_STARTED)) && how="started local cluster $(cat "$PG_STARTED_MARK"); \`stop\` stops it"
  ((PG_FROM_ENV)) && how="from DATABASE_URL"
  ((PG_CREATED_DB)) && how="$how; created database $(pg_url_db "$PG_URL")"
  say postgres "$PG_URL ($how)"
}

postgres_stop() {
  local version
  version=$(cat "$PG_STARTED_MARK" 2>/dev/null || true)
  if [[ -z "$version" ]]; then
    say postgres "left as it was (not started by this script)"
    return
  fi
  if pg_ctlcluster --skip-systemctl-redirect "$version" main stop >/dev/null 2>&1; then
    say postgres "stopped local cluster $version (started by this script)"
  else
    say postgres "local cluster $version was already stopped"
  fi
  rm -f "$PG_STARTED_MARK"
}

postgres_status() {
  pg_resolve
  local who=""
  [[ -f "$PG_STARTED_MARK" ]] && who=", started by this script"
  if command -v pg_isready >/dev/null && pg_reachable "$PG_URL"; then
    say postgres "reachable   $PG_URL$who"
  else
    say postgres "UNREACHABLE $PG_URL"
    return 1
  fi
}
