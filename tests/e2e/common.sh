# Shared by the end-to-end scripts (tests/e2e/*_test.sh), sourced after they set `t0` (the
# start, date +%s.%N) and `E2E_NAME` (the prefix of their lines).

since() { awk -v s="$1" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }
say() { echo "$E2E_NAME [$(since "$t0") s]: $*"; }
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
die() {
  echo "FAIL: $*" >&2
  exit 1
}
stop_pid() { # stop_pid PID: SIGTERM, then SIGKILL after 5 s
  local p=$1
  [[ -n $p ]] && kill -0 "$p" 2>/dev/null || return 0
  kill -TERM "$p" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "$p" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$p" 2>/dev/null || true
}
show_tails() { # show_tails FILE...: the last lines of each file that is not empty
  local f
  for f in "$@"; do
    [[ -s $f ]] || continue
    echo "---- last lines of $f"
    tail -n 25 "$f" | tr -d '\r' | cut -c1-200
  done
}
