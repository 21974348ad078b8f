#!/usr/bin/env bash
# Quick start: from a fresh clone to a running Sluice (console, two workers, demo producer, demo data).
# Processes run in the background; logs in .data/logs/, stop them with `npm run down`. The demo
# pipelines are started through the lifecycle service (`sluice start`) and run by the worker processes;
# their run state lives in Postgres, so after `npm run down` and `npm run up` they simply continue.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
sluice_setup
cd "$sluice_root"

PORT="${PORT:-3000}"
logs="$sluice_root/.data/logs"
pids="$sluice_root/.data/pids"
mkdir -p "$logs" "$pids"

bash scripts/down.sh --quiet

# The demo on-call receiver (scripts/demo-receivers.ts): the demo teams' contact points page it.
receiver_url="http://127.0.0.1:4010"
smtp_url="smtp://127.0.0.1:4025"

sluice_log "seeding demo teams, users, contact points and pipelines"
SLUICE_DEMO_RECEIVER_URL="$receiver_url" npx tsx scripts/seed.ts

sluice_log "building the console (next build)"
npx turbo run build --filter=@sluice/web --output-logs=errors-only

# start NAME COMMAND...: run in the background in its own process group (so `down` can stop the
# whole tree), remember the pid, log to .data/logs/NAME.log
start() {
  local name="$1"; shift
  setsid nohup "$@" >"$logs/$name.log" 2>&1 < /dev/null &
  echo $! >"$pids/$name.pid"
}

# Outbound HTTP (docs/security.md): Sluice sends only to public addresses unless SLUICE_OUTBOUND_ALLOW
# lists an internal receiver — here the demo's own receivers (the fraud webhook and the on-call pages),
# that port only — and signs every webhook and notification with keys derived from SLUICE_SIGNING_KEY
# (generated once into .data/).
export SLUICE_OUTBOUND_ALLOW="${SLUICE_OUTBOUND_ALLOW:-127.0.0.1:4010}"
if [ -z "${SLUICE_SIGNING_KEY:-}" ]; then
  [ -s .data/signing-key ] || (umask 077 && node -e 'process.stdout.write(require("crypto").randomBytes(48).toString("base64"))' >.data/signing-key)
  SLUICE_SIGNING_KEY="$(cat .data/signing-key)"
fi
export SLUICE_SIGNING_KEY

# The demo receivers first: the fraud-alerts webhook and the on-call receiver (HTTP 4010, SMTP 4025).
start webhook-receiver node --import tsx scripts/demo-receivers.ts 4010 4025
PORT="$PORT" SLUICE_PUBLIC_URL="${SLUICE_PUBLIC_URL:-http://127.0.0.1:$PORT}" SLUICE_SMTP_URL="${SLUICE_SMTP_URL:-$smtp_url}" NODE_ENV=production SLUICE_LISTEN_HOST=127.0.0.1 start web node --import tsx apps/web/server.ts
# A new seed per start: the same seed re-sends the same event ids, which the pipelines would (rightly)
# count as duplicates of the previous run's events. Set SLUICE_DEMO_SEED to replay a stream.
demo_seed="${SLUICE_DEMO_SEED:-$(date +%s)}"
# --customers 500: the customer change feed's 500 customers (cus_000001..cus_000500, the same ids), so
# the payments-enriched pipeline's join finds each payment's customer in the feed.
start producer node --import tsx packages/producer/src/cli.ts --topic payments --rate "${SLUICE_DEMO_RATE:-50}" \
  --seed "$demo_seed" --duplicates 0.05 --late 0.02 --out-of-order 0.05 --malformed 0.01 --customers 500
# The customer change feed: customer-status (CDC) applies it, payments-enriched joins the payments with it.
start cdc-producer node --import tsx packages/producer/src/customer-changes-cli.ts --topic customer-changes --rate 5 --seed "$demo_seed"
# Two worker processes share the pipelines' batches (BullMQ queue sluice.batches); metrics on 9464, 9465.
# Alert email goes to the demo receiver's SMTP server unless SLUICE_SMTP_URL names another.
# Notifications link to the console's pages.
export SLUICE_SMTP_URL="${SLUICE_SMTP_URL:-$smtp_url}" SLUICE_PUBLIC_URL="${SLUICE_PUBLIC_URL:-http://127.0.0.1:$PORT}"
WORKER_METRICS_PORT=9464 start worker-1 node --import tsx workers/src/main.ts
WORKER_METRICS_PORT=9465 start worker-2 node --import tsx workers/src/main.ts

sluice_log "starting the demo pipelines on the workers"
npx tsx scripts/wait-for-topic.ts payments 60
npx tsx scripts/wait-for-topic.ts customer-changes 60
# The demo's admin starts them (the CLI acts as a named user; see README "The sluice command").
for spec in demo/pipelines/*.yaml; do
  node --import tsx packages/cli/src/main.ts start "$spec" "quick start" --as admin@sluice.local
done

# Wait for the console to answer before printing its URL.
for _ in $(seq 1 60); do
  if curl -fs -o /dev/null "http://127.0.0.1:$PORT/api/health"; then break; fi
  sleep 1
done
if ! curl -fsS -o /dev/null "http://127.0.0.1:$PORT/sign-in"; then
  sluice_log "the console did not come up; see $logs/web.log"
  tail -n 30 "$logs/web.log" >&2
  exit 1
fi
sleep 3
for name in worker-1 worker-2 producer cdc-producer webhook-receiver; do
  if ! kill -0 "$(cat "$pids/$name.pid")" 2>/dev/null; then
    sluice_log "$name exited; see $logs/$name.log"; tail -n 30 "$logs/$name.log" >&2; exit 1
  fi
done

cat <<MSG

  Sluice is running:  http://127.0.0.1:$PORT
  Sign in as operator@sluice.local (or admin@, owner@, viewer@) with password ${SLUICE_DEMO_PASSWORD:-sluice-demo}
  Demo pipelines: $(ls demo/pipelines | sed 's/\.yaml$//' | paste -sd, -) on 2 workers (status: npx sluice status payments-ledger;
                  pause/resume/stop: SLUICE_ACTOR=operator@sluice.local npx sluice pause payments-ledger "why")
  What was paged:     $receiver_url/  (the demo teams' Slack, PagerDuty and email contact points page this
                      local receiver; try: pause payments-ledger and watch its alert arrive within a few minutes)
  Logs: .data/logs/*.log      Stop: npm run down

MSG
