# Shared helpers of the side-by-side benchmarks. Source it; BUILD must point at the build dir.
# Every process started here is stopped by its pid; everything listens on 127.0.0.1 only.

set -euo pipefail
BUILD=${BUILD:-build}
BIN=$(cd "$BUILD/bin" && pwd)
export PATH="$BIN:$PATH"
ROUNDS=${ROUNDS:-3}
WORK=${WORK:-$(mktemp -d /tmp/cws-bench-XXXXXX)}
PIDS=()

cleanup() {
  for pid in "${PIDS[@]:-}"; do
    [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  done
  [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$WORK"
}
trap cleanup EXIT

# median of the numbers on stdin
median() {
  sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "nan"} else if (NR%2) {print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'
}

# ratio A/B with 2 decimals
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b==0) print "inf"; else printf "%.2f", a/b}'; }

# goal NAME VALUE OP TARGET UNIT: prints one summary line, MET or NOT MET
goal() {
  local name=$1 value=$2 op=$3 target=$4 unit=${5:-x}
  local met
  met=$(awk -v v="$value" -v t="$target" -v op="$op" 'BEGIN {
    if (op == ">=") print (v >= t) ? "MET" : "NOT MET"; else print (v <= t) ? "MET" : "NOT MET" }')
  printf 'GOAL %-28s %10s%s  (goal %s %s%s)  %s\n' "$name" "$value" "$unit" "$op" "$target" "$unit" "$met"
}

free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 20000))
    (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
}

# init_home DIR PASSWORD: a fresh clusterws home, which the tools then use (CLUSTERWS_HOME)
init_home() {
  clusterctl init --home "$1" --admin-password "$2" >/dev/null
  # DAEMON_SETTINGS: extra clusterws.conf lines for experiments ("io_threads = 1")
  [[ -z "${DAEMON_SETTINGS:-}" ]] || printf '%s\n' "$DAEMON_SETTINGS" >>"$1/clusterws.conf"
  export CLUSTERWS_HOME=$1
}

# start_daemon HOME [PRELOAD]: starts clusterwsd on a free port, with the library PRELOAD
# loaded first if given; sets DAEMON_PID and DAEMON_PORT
start_daemon() {
  local home=$1
  rm -f "$home/port"
  LD_PRELOAD=${2:-} clusterwsd --home "$home" --listen 127.0.0.1:0 --port-file "$home/port" \
    >>"$home/daemon.log" 2>&1 &
  DAEMON_PID=$!
  PIDS+=("$DAEMON_PID")
  for _ in $(seq 1000); do [[ -s "$home/port" ]] && break; sleep 0.01; done
  [[ -s "$home/port" ]] || { echo "clusterwsd did not start; see $home/daemon.log" >&2; tail -5 "$home/daemon.log" >&2; exit 1; }
  DAEMON_PORT=$(cat "$home/port")
}

stop_daemon() {
  kill -TERM "$DAEMON_PID" 2>/dev/null || true
  wait "$DAEMON_PID" 2>/dev/null || true
}

# cpu_ticks PID: user+system ticks of the process and its reaped children
cpu_ticks() {
  awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat"
}

# tree_ticks PID: user+system ticks of the process and every descendant, alive or reaped
# (sshd's per-connection processes stay alive while a pooled connection lives). The stat
# files go through cat: a process may end between the glob and the read, and mawk stops at
# the first file it cannot open.
tree_ticks() {
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v root="$1" '
    {
      pid = $1; line = $0; sub(/^[0-9]+ \(.*\) /, "", line); split(line, f, " ")
      parent[pid] = f[2]; ticks[pid] = f[12] + f[13] + f[14] + f[15]
    }
    END {
      total = 0
      for (p in ticks) { q = p; while (q != "" && q != "0" && q != "1") { if (q == root) { total += ticks[p]; break } q = parent[q] } }
      print total
    }'
}

# rss_mib PID: peak resident set size in MiB
rss_mib() {
  awk '/VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"
}

TICKS=$(getconf CLK_TCK)

# now; secs A B: the wall clock, and B - A in seconds with 3 decimals
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", b - a}'; }

# wait_udp_bound FIRST COUNT: waits (10 s at most) until the COUNT UDP ports from FIRST are
# bound (a farm of ipmi_sim BMCs). /proc/net/udp has them in hex, read by bash: Debian's
# default awk (mawk) has no strtonum.
wait_udp_bound() {
  local first=$1 count=$2 c p
  for _ in $(seq 500); do
    c=0
    for p in $(awk 'NR > 1 {split($2, a, ":"); print a[2]}' /proc/net/udp); do
      ((16#$p >= first && 16#$p < first + count)) && c=$((c + 1))
    done
    ((c >= count)) && return 0
    sleep 0.02
  done
}

# define_bmc_nodes PORT...: nodes b0000, b0001, ... in group bmcs (mgt=ipmi, user admin,
# password secret), one per BMC listening on 127.0.0.1:PORT
define_bmc_nodes() {
  clusterctl mkdef -t group bmcs mgt=ipmi bmcusername=admin bmcpassword=secret >/dev/null
  local i=0 port
  for port in "$@"; do
    printf 'b%04d:\n    objtype=node\n    groups=bmcs,all\n    bmc=127.0.0.1\n    bmcport=%s\n' "$i" "$port"
    i=$((i + 1))
  done | clusterctl mkdef -z >/dev/null
}
