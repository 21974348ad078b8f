#!/usr/bin/env bash
# Builds the console, starts it on its own port and database, runs the Playwright tests, stops it.
# Expects the services to be up (scripts/setup.sh); the test database never touches the demo's.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source .data/services.env

port="${SLUICE_E2E_PORT:-3100}"
# SLUICE_E2E_DB: two checkouts on one machine can run their browser tests at once on their own port and database.
db="${SLUICE_E2E_DB:-sluice_e2e}"
admin_url="${DATABASE_URL%/*}/postgres"
e2e_url="${DATABASE_URL%/*}/$db"
psql "$admin_url" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
DATABASE_URL="$e2e_url" npx prisma migrate deploy >/dev/null
DATABASE_URL="$e2e_url" npx tsx scripts/seed.ts

npx turbo run build --filter=@sluice/web --output-logs=errors-only
log="$root/.data/logs/e2e-web.log"
mkdir -p "$(dirname "$log")"
DATABASE_URL="$e2e_url" setsid node node_modules/next/dist/bin/next start apps/web -p "$port" -H 127.0.0.1 >"$log" 2>&1 &
web=$!
trap 'kill -TERM -- "-$web" 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do curl -fsS -o /dev/null "http://127.0.0.1:$port/sign-in" && break; sleep 1; done

SLUICE_URL="http://127.0.0.1:$port" SLUICE_E2E_DATABASE_URL="$e2e_url" npm run test --workspace e2e
