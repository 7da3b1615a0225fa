#!/usr/bin/env bash
# 5. nodeshell vs pdsh and clush: one private sshd on 127.0.0.1, node names node0001..nodeN
# all mapped to it, command `hostname`, the same fanout for all three. Cold: fresh connections
# (the daemon restarted); warm: the same request again (pooled connections). CPU seconds per
# node of the client side and of sshd.
source "$(dirname "$0")/common.sh"
SIZES=${SIZES:-64 256 1024}
FANOUT=${FANOUT:-64}
here=$(cd "$(dirname "$0")" && pwd)
farm=$WORK/farm
port=$(free_port)
SSHD_PID=$("$here/sshfarm.sh" start "$farm" "$port")
PIDS+=("$SSHD_PID")
home=$WORK/home
pw=benchpw
init_home "$home" "$pw"
cat "$home/ssh/root/id_ed25519.pub" >>"$farm/authorized_keys"
max=$(echo "$SIZES" | tr ' ' '\n' | sort -n | tail -1)
mkdef -t group farm sshport="$port" >/dev/null
mkdef "node[0001-$(printf %04d "$max")]" groups=farm,all ip=127.0.0.1 >/dev/null
export PDSH_SSH_ARGS="-F $farm/ssh_config -x -l%u %h"

sshd_cpu() { tree_ticks "$SSHD_PID"; }

# measure LABEL CMD...: appends "wall client_cpu sshd_cpu ok" to $WORK/LABEL
measure() {
  local label=$1; shift
  local s0 t
  s0=$(sshd_cpu)
  t=$(cws-run "$@" 2>"$WORK/run.err" >"$WORK/run.out"; cat "$WORK/run.err" | awk '/^wall/ {print $2, $4}')
  local s1 ok
  s1=$(sshd_cpu)
  ok=$(grep -c ': ' "$WORK/run.out" || true)
  echo "$t $(awk -v a="$s0" -v b="$s1" -v hz="$TICKS" 'BEGIN {printf "%.2f", (b-a)/hz}') $ok" >>"$WORK/$label"
}

# ours LABEL N: one nodeshell request; client CPU is the daemon's
ours() {
  local label=$1 n=$2
  local d0 s0 t0 t1 d1 s1 ok
  d0=$(cpu_ticks "$DAEMON_PID"); s0=$(sshd_cpu); t0=$(date +%s.%N)
  curl -gs --cacert "$home/pki/ca-cert.pem" -X POST -H 'Content-Type: application/json' \
    -d '{"command":"hostname"}' -o "$WORK/ours.json" -w '%{http_code}' >"$WORK/ours.status" \
    "https://127.0.0.1:$DAEMON_PORT/clusterws/nodes/node[0001-$(printf %04d "$n")]/nodeshell?userName=root&userPW=$pw&format=detail&fanout=$FANOUT" || true
  t1=$(date +%s.%N); d1=$(cpu_ticks "$DAEMON_PID"); s1=$(sshd_cpu)
  ok=$({ grep -o '"rc":0' "$WORK/ours.json" || true; } | wc -l)
  if [[ $ok -ne $n ]]; then
    echo "warning: clusterws $label: $ok of $n nodes ok (HTTP $(cat "$WORK/ours.status")): $(head -c 300 "$WORK/ours.json")" >&2
  fi
  awk -v t0="$t0" -v t1="$t1" -v d0="$d0" -v d1="$d1" -v s0="$s0" -v s1="$s1" -v hz="$TICKS" -v ok="$ok" \
    'BEGIN {printf "%.3f %.2f %.2f %d\n", t1-t0, (d1-d0)/hz, (s1-s0)/hz, ok}' >>"$WORK/$label"
}

printf '%-22s %5s %9s %8s %12s %12s %6s\n' "tool" "N" "wall s" "nodes/s" "client ms/n" "sshd ms/n" "ok"
report() {
  local label=$1 n=$2 name=$3
  local wall cc sc ok
  wall=$(cut -d' ' -f1 "$WORK/$label" | median)
  cc=$(cut -d' ' -f2 "$WORK/$label" | median)
  sc=$(cut -d' ' -f3 "$WORK/$label" | median)
  ok=$(cut -d' ' -f4 "$WORK/$label" | sort -n | head -1)
  printf '%-22s %5s %9s %8s %12s %12s %6s\n' "$name" "$n" "$wall" \
    "$(awk -v n="$n" -v w="$wall" 'BEGIN {printf "%.0f", n/w}')" \
    "$(awk -v n="$n" -v c="$cc" 'BEGIN {printf "%.1f", 1000*c/n}')" \
    "$(awk -v n="$n" -v c="$sc" 'BEGIN {printf "%.1f", 1000*c/n}')" "$ok"
  echo "$wall" >"$WORK/$label.wall"
}

for n in $SIZES; do
  range="node[0001-$(printf %04d "$n")]"
  for _ in $(seq "$ROUNDS"); do
    start_daemon "$home"
    ours "cold$n" "$n"
    ours "warm$n" "$n"
    stop_daemon
    measure "pdsh$n" pdsh -R ssh -f "$FANOUT" -w "$range" hostname
    measure "clush$n" clush -o "-F $farm/ssh_config" -f "$FANOUT" -w "$range" hostname
  done
  report "cold$n" "$n" "clusterws cold"
  report "warm$n" "$n" "clusterws warm (pool)"
  report "pdsh$n" "$n" "pdsh -f $FANOUT"
  report "clush$n" "$n" "clush -f $FANOUT"
done
best=$(printf '%s\n%s\n' "$(cat "$WORK/pdsh$max.wall")" "$(cat "$WORK/clush$max.wall")" | sort -g | head -1)
goal "nodeshell-cold-$max" "$(ratio "$best" "$(cat "$WORK/cold$max.wall")")" ">=" 4
goal "nodeshell-warm-$max" "$(ratio "$best" "$(cat "$WORK/warm$max.wall")")" ">=" 20
