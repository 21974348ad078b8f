#!/usr/bin/env bash
# Stops what `npm run up` started (console, workers, producer). Services stay up; stop them with
# `npm run services:stop`.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
quiet="${1:-}"
for pidfile in "$root"/.data/pids/*.pid; do
  [ -e "$pidfile" ] || continue
  pid="$(cat "$pidfile")"
  name="$(basename "$pidfile" .pid)"
  if kill -0 "$pid" 2>/dev/null; then
    # up.sh starts each process as a group leader (setsid): signal the whole group.
    kill -TERM -- "-$pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null
    [ "$quiet" = "--quiet" ] || echo "stopped $name"
  fi
  rm -f "$pidfile"
done
