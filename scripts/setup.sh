#!/usr/bin/env bash
# Shared set-up for the quick start and the test command: dependencies, services, Prisma client,
# migrations. Source it (it exports the service URLs), don't run it.
#
#   source scripts/setup.sh && sluice_setup

sluice_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export NEXT_TELEMETRY_DISABLED=1 TURBO_TELEMETRY_DISABLED=1

sluice_log() { printf '\033[1m[sluice]\033[0m %s\n' "$*"; }

# Install npm dependencies when node_modules is missing or older than the lock file.
sluice_install_deps() {
  cd "$sluice_root"
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    sluice_log "installing npm dependencies (npm ci)"
    npm ci --no-audit --no-fund
  fi
}

# Start or check Postgres, Redis and Kafka, then export their URLs.
sluice_services() {
  bash "$sluice_root/scripts/services.sh" start
  # shellcheck disable=SC1091
  source "$sluice_root/.data/services.env"
}

# Prisma's install scripts are not run (they download native engines); generate the JS-engine
# client explicitly. See docs/database.md.
sluice_prisma() {
  cd "$sluice_root"
  npx prisma generate >/dev/null
  sluice_log "applying migrations to ${DATABASE_URL%%\?*}"
  npx prisma migrate deploy >/dev/null
}

sluice_setup() {
  set -euo pipefail
  sluice_install_deps
  sluice_services
  sluice_prisma
}
