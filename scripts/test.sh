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

# One TypeScript program for the whole repository (tsconfig.json): packages are consumed as source, so
# checking each workspace on its own re-checks the engine and services once per importer.
step typecheck npx tsc --noEmit -p tsconfig.json
# Lint includes sluice/declared-imports: every workspace lists in its package.json what it imports.
step lint npx eslint . --max-warnings 0
# knip: no workspace lists a dependency it does not use (~40 s wall, ~9 s CPU).
step "unused dependencies" npx knip --no-progress
# dependency-cruiser (.dependency-cruiser.cjs): the allowed arrows between packages, no cycles (~40 s wall, ~9 s CPU).
step "import boundaries" npm run -s boundaries
step format npx prettier --check . --log-level warn
results="$sluice_root/.data/test-results"
rm -rf "$results" && mkdir -p "$results"
step "unit tests" npx vitest run --project unit --reporter=default --reporter=json --outputFile.json="$results/unit.json"
step "integration tests" npx vitest run --project integration --reporter=default --reporter=json --outputFile.json="$results/integration.json"
step "end-to-end tests" bash scripts/e2e.sh

if [ "${#failed[@]}" -gt 0 ]; then
  sluice_log "failed steps: ${failed[*]}"
  node scripts/test-summary.mjs "$results"
  exit 1
fi
sluice_log "all test steps passed"
node scripts/test-summary.mjs "$results"
