#!/usr/bin/env bash
# Builds the console, starts it on its own port and database with a real stack behind it — two worker
# processes on a queue of their own, the demo producer on a topic of its own, and a running ledger
# pipeline (e2e-ledger) on that topic — runs the Playwright tests (e2e/playwright.config.ts), and stops all of it.
# Expects the services to be up (scripts/setup.sh); the test database never touches the demo's.
# Two checkouts can run it at once: SLUICE_E2E_PORT (console), SLUICE_E2E_DB (database), and the
# topic and queue are unique per run; worker metrics ports are free ones unless SLUICE_E2E_METRICS_PORT is set.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source .data/services.env

port="${SLUICE_E2E_PORT:-3100}"
db="${SLUICE_E2E_DB:-sluice_e2e}"
run="e2e-$(date +%s)-$$"
topic="sluice-$run"
queue="sluice.$run"
metrics_port="${SLUICE_E2E_METRICS_PORT:-0}"
admin_url="${DATABASE_URL%/*}/postgres"
e2e_url="${DATABASE_URL%/*}/$db"
logs="$root/.data/logs/$run"
mkdir -p "$logs"

psql "$admin_url" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db"
DATABASE_URL="$e2e_url" npx prisma migrate deploy >/dev/null
# The demo on-call receiver on ports of its own (default: the console's port + 2 and + 3): the demo
# teams' contact points page it, as in the quick start.
receiver_port="${SLUICE_E2E_RECEIVER_PORT:-$((port + 2))}"
receiver_url="http://127.0.0.1:$receiver_port"
smtp_url="smtp://127.0.0.1:$((receiver_port + 1))"
DATABASE_URL="$e2e_url" SLUICE_DEMO_RECEIVER_URL="$receiver_url" npx tsx scripts/seed.ts

npx turbo run build --filter=@sluice/web --output-logs=errors-only

pids=()
stop_all() {
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  npx tsx scripts/delete-topic.ts "$topic" >/dev/null 2>&1 || true
}
trap stop_all EXIT
start() { # start NAME COMMAND...: its own process group, logged to .data/logs/<run>/NAME.log
  local name="$1"; shift
  setsid "$@" >"$logs/$name.log" 2>&1 </dev/null &
  pids+=("$!")
}

# A real OpenID Connect provider for the single sign-on tests (packages/testing/src/oidc/), on its
# own port; the console under test is configured to offer it.
oidc_port="${SLUICE_E2E_OIDC_PORT:-$((port + 1))}"
start oidc node --import tsx packages/testing/src/oidc/oidc-provider-process.ts "$oidc_port" "http://127.0.0.1:$port/api/auth/callback/sso"
for _ in $(seq 1 30); do curl -fsS -o /dev/null "http://127.0.0.1:$oidc_port/.well-known/openid-configuration" && break; sleep 1; done

# The alert receivers of the browser tests listen on 127.0.0.1 (refused unless allowed, docs/security.md).
export SLUICE_OUTBOUND_ALLOW=127.0.0.1 SLUICE_SIGNING_KEY="e2e-signing-key-$run-not-a-secret"
start receivers node --import tsx scripts/demo-receivers.ts "$receiver_port" "$((receiver_port + 1))"
for _ in $(seq 1 30); do curl -fsS -o /dev/null "$receiver_url/pages.json" && break; sleep 1; done

# Every browser test signs in from 127.0.0.1: the per-address limit (10 a minute) is for many people.
start web env DATABASE_URL="$e2e_url" PORT="$port" SLUICE_PUBLIC_URL="http://127.0.0.1:$port" SLUICE_SIGN_INS_PER_ADDRESS_PER_MINUTE=1000 \
  SLUICE_SSO_ISSUER="http://127.0.0.1:$oidc_port" SLUICE_SSO_CLIENT_ID=sluice-console \
  SLUICE_SSO_CLIENT_SECRET=test-client-secret-not-for-production SLUICE_SSO_LABEL="Test IdP" SLUICE_SMTP_URL="$smtp_url" \
  NODE_ENV=production SLUICE_LISTEN_HOST=127.0.0.1 node --import tsx apps/web/server.ts
# The producer creates the topic; adversarial like the demo's (duplicates, late, malformed).
start producer node --import tsx packages/producer/src/cli.ts --topic "$topic" --partitions 3 --rate "${SLUICE_E2E_RATE:-40}" \
  --seed "$run" --duplicates 0.05 --late 0.02 --out-of-order 0.05 --malformed 0.01
for i in 1 2; do
  port_i=$([ "$metrics_port" = 0 ] && echo 0 || echo $((metrics_port + i - 1)))
  start "worker-$i" env DATABASE_URL="$e2e_url" WORKER_QUEUE="$queue" WORKER_METRICS_PORT="$port_i" WORKER_OFFSET_SAMPLE_INTERVAL_MS=5000 \
    WORKER_ALERT_INTERVAL_MS=2000 WORKER_ROLLOUT_RECONCILE_INTERVAL_MS=10000 SLUICE_PUBLIC_URL="http://127.0.0.1:$port" SLUICE_SMTP_URL="$smtp_url" node --import tsx workers/src/main.ts
done
npx tsx scripts/wait-for-topic.ts "$topic" 60
spec="$logs/e2e-ledger.yaml"
sed -e 's/^name: payments-ledger/name: e2e-ledger/' -e "s/topic: payments,/topic: $topic,/" -e 's/table: payments_ledger/table: e2e_ledger/' \
  -e 's/^description: .*/description: "The browser tests ledger, fed by the demo producer on a topic of its own and run by two workers."/' \
  demo/pipelines/payments-ledger.yaml >"$spec"
DATABASE_URL="$e2e_url" node --import tsx packages/cli/src/main.ts start "$spec" "browser tests" --as admin@sluice.local

for _ in $(seq 1 60); do curl -fsS -o /dev/null "http://127.0.0.1:$port/sign-in" && break; sleep 1; done

# SLUICE_E2E_ONLY=<file in e2e/src> runs one test file against the same stack (the others take minutes).
# Results: .data/test-results/e2e.json, the HTML report (traces of failures) in .data/test-results/e2e-report/.
export SLUICE_URL="http://127.0.0.1:$port" SLUICE_E2E_DATABASE_URL="$e2e_url" SLUICE_E2E_RECEIVER_URL="$receiver_url" SLUICE_E2E_PIPELINE=e2e-ledger SLUICE_E2E_TOPIC="$topic"
(cd e2e && npx playwright test ${SLUICE_E2E_ONLY:+"src/$SLUICE_E2E_ONLY"})
