# shellcheck shell=bash
# Shared helpers for scripts/services.sh. Sourced, never run on its own.

# Where things live. Overridable so the start logic can be exercised next to a running stack
# (another data dir, other ports) without touching it.
SLUICE_DATA_DIR="${SLUICE_DATA_DIR:-$REPO_ROOT/.data}"
SLUICE_CACHE_DIR="${SLUICE_CACHE_DIR:-$REPO_ROOT/.cache}"
# shellcheck disable=SC2034 # used by services.sh
SERVICES_ENV="$SLUICE_DATA_DIR/services.env"

say() { printf '%-9s %s\n' "$1:" "$2"; }
# Progress goes to stderr so stdout stays one line per service.
note() { printf '%-9s %s\n' "$1:" "$2" >&2; }

# Print a clear error: what is wrong, then what to do instead, and exit non-zero.
die() {
  local service=$1 problem=$2
  shift 2
  {
    printf '%-9s ERROR: %s\n' "$service:" "$problem"
    local hint
    for hint in "$@"; do printf '          - %s\n' "$hint"; done
  } >&2
  exit 1
}

# shellcheck disable=SC2034 # used by every service's messages
DOCKER_HINT="or use Docker instead: \`docker compose up -d\` in the repo root, then run this script again"

# True if something accepts TCP connections on host:port (any protocol). Bash's /dev/tcp needs no
# extra tools; `timeout` keeps a filtered port from hanging us.
tcp_open() {
  # shellcheck disable=SC2016 # expanded by the inner shell
  timeout 2 bash -c ': </dev/tcp/"$1"/"$2"' _ "$1" "$2" 2>/dev/null
}

# Describe which process listens on a local TCP port (root sees every process; others may not).
port_holder() {
  local port=$1 line
  line=$(ss -Hltnp "sport = :$port" 2>/dev/null | head -n1 || true)
  if [[ -z "$line" ]]; then
    echo "unknown process (ss could not tell)"
  elif [[ "$line" =~ users:\(\((.*)\)\) ]]; then
    local pid comm
    comm=$(sed -E 's/^"([^"]*)".*/\1/' <<<"${BASH_REMATCH[1]}")
    pid=$(sed -nE 's/.*pid=([0-9]+).*/\1/p' <<<"${BASH_REMATCH[1]}")
    if [[ -n "$pid" && -r "/proc/$pid/cmdline" ]]; then
      echo "pid $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-160)"
    else
      echo "$comm${pid:+ (pid $pid)}"
    fi
  else
    echo "a process ss cannot name (run as root to see it): $line"
  fi
}

# True if pid is alive and its command line contains every given fragment. Guards against acting on a
# recycled pid from a stale pid file.
pid_matches() {
  local pid=$1 cmd
  shift
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline")
  local frag
  for frag in "$@"; do [[ "$cmd" == *"$frag"* ]] || return 1; done
}

read_pid() {
  if [[ -f "$1" ]]; then tr -dc '0-9' <"$1"; fi
}

pid_gone() { ! kill -0 "$1" 2>/dev/null; }

# Poll `cmd...` until it succeeds or `seconds` pass.
wait_for() {
  local seconds=$1
  shift
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.5
  done
}
