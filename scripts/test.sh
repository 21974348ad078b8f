#!/usr/bin/env bash
# Runs every test: static checks, unit tests, integration tests against the real Postgres, Redis and
# Kafka (started here if needed), and the browser end-to-end test against a freshly built console
# on its own database. Exits non-zero when anything fails.
set -euo pipefail
source "$(dirname "$0")/setup.sh"
sluice_setup
cd "$sluice_root"

failed=()
step() { # step NAME COMMAND...
  local name="$1"; shift
  sluice_log "── $name"
  local started=$SECONDS
  if "$@"; then sluice_log "ok: $name ($((SECONDS - started)) s)"; else sluice_log "FAILED: $name ($((SECONDS - started)) s)"; failed+=("$name"); fi
}

# Steps that only read the tree run side by side, each into a log of its own, shown in order when all
# are done: on two cores the single-threaded ones (tsc, eslint, prettier) overlap.
logs="$sluice_root/.data/logs/test-steps"
rm -rf "$logs" && mkdir -p "$logs"
together=()
start_step() { # start_step NAME COMMAND...: runs in the background until finish_steps
  local name="$1"; shift
  ( started=$SECONDS; "$@" >"$logs/$name.log" 2>&1; echo "$? $((SECONDS - started))" >"$logs/$name.rc" ) &
  together+=("$name")
}
finish_steps() {
  wait
  local name rc secs
  for name in "${together[@]}"; do
    read -r rc secs <"$logs/$name.rc"
    sluice_log "── $name"
    cat "$logs/$name.log"
    if [ "$rc" = 0 ]; then sluice_log "ok: $name ($secs s)"; else sluice_log "FAILED: $name ($secs s)"; failed+=("$name"); fi
  done
  together=()
}

results="$sluice_root/.data/test-results"
rm -rf "$results" && mkdir -p "$results"
group_started=$SECONDS
# One TypeScript program for the whole repository (tsconfig.json): packages are consumed as source, so
# checking each workspace on its own re-checks the engine and services once per importer.
start_step typecheck npx tsc --noEmit -p tsconfig.json
# Lint includes sluice/declared-imports: every workspace lists in its package.json what it imports.
start_step lint npx eslint . --max-warnings 0
# knip: no workspace lists a dependency it does not use.
start_step "unused dependencies" npx knip --no-progress
# dependency-cruiser (.dependency-cruiser.cjs): the allowed arrows between packages, no cycles.
start_step "import boundaries" npm run -s boundaries
start_step format npx prettier --check . --log-level warn
start_step "unit tests" npx vitest run --project unit --reporter=default --reporter=json --outputFile.json="$results/unit.json"
finish_steps
sluice_log "static checks and unit tests together: $((SECONDS - group_started)) s"

# The console's production build does not need the databases: it runs beside the integration tests
# (which mostly wait on Kafka and Postgres), and scripts/e2e.sh's own build then comes from turbo's cache.
( npx turbo run build --filter=@sluice/web --output-logs=errors-only >"$logs/build.log" 2>&1 ) &
build_pid=$!
build_started=$SECONDS
step "integration tests" npx vitest run --project integration --reporter=default --reporter=json --outputFile.json="$results/integration.json"
if wait "$build_pid"; then
  sluice_log "console build beside the integration tests: done $((SECONDS - build_started)) s after it started"
else
  sluice_log "console build beside the integration tests failed (scripts/e2e.sh builds again and shows why): $logs/build.log"
fi
step "end-to-end tests" bash scripts/e2e.sh

if [ "${#failed[@]}" -gt 0 ]; then
  sluice_log "failed steps: ${failed[*]}"
  node scripts/test-summary.mjs "$results"
  exit 1
fi
sluice_log "all test steps passed"
node scripts/test-summary.mjs "$results"
