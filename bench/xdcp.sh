#!/usr/bin/env bash
# 6. xdcp and nodecopy vs pdcp and clush --copy: a SIZE_MIB file (10 MiB) to N nodes, node
# names node0001..nodeN all mapped to one private sshd on 127.0.0.1, the same fanout for all.
# xdcp (the CLI) is cold by nature; REST nodecopy cold (the daemon restarted) and warm (the
# same request again: pooled connections). Targets live in /dev/shm so the disk does not
# decide. Client CPU: xdcp's, the daemon's, or pdcp's/clush's with their ssh children.
source "$(dirname "$0")/common.sh"
SIZES=${SIZES:-256}
FANOUT=${FANOUT:-64}
SIZE_MIB=${SIZE_MIB:-10}
FLOOR_N=${FLOOR_N:-64}
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
mkdir -p "$home/copy"
payload=$home/copy/payload
head -c "$((SIZE_MIB * 1024 * 1024))" /dev/urandom >"$payload"
sum=$(md5sum <"$payload" | cut -d' ' -f1)
dest=$(mktemp -d /dev/shm/cws-bench-xdcp-XXXXXX)
trap 'rm -rf "$dest"; cleanup' EXIT
sshd_cpu() { tree_ticks "$SSHD_PID"; }

# check LABEL: the copy on the "nodes" is whole (the floor runs write nothing)
check() {
  [[ $1 == floor* ]] && return 0
  if [[ "$(md5sum <"$dest/payload" | cut -d' ' -f1)" != "$sum" ]]; then
    echo "warning: $1: $dest/payload is not the payload" >&2
  fi
  rm -f "$dest/payload"
}

# measure LABEL CMD...: appends "wall client_cpu sshd_cpu" to $WORK/LABEL
measure() {
  local label=$1; shift
  local s0 s1 t
  s0=$(sshd_cpu)
  # (clush writes progress without a newline: the figures may not start a line)
  t=$(cws-run "$@" 2>"$WORK/run.err" >"$WORK/run.out"; grep -o 'wall [0-9.]* cpu [0-9.]*' "$WORK/run.err" | tail -1 | awk '{print $2, $4}')
  s1=$(sshd_cpu)
  [[ -s $WORK/run.out ]] && echo "warning: $label printed: $(head -c 300 "$WORK/run.out")" >&2
  echo "$t $(awk -v a="$s0" -v b="$s1" -v hz="$TICKS" 'BEGIN {printf "%.2f", (b-a)/hz}')" >>"$WORK/$label"
  check "$label"
}

# rest LABEL N: one nodecopy request; client CPU is the daemon's
rest() {
  local label=$1 n=$2
  local d0 s0 t0 t1 d1 s1 code
  d0=$(cpu_ticks "$DAEMON_PID"); s0=$(sshd_cpu); t0=$(date +%s.%N)
  code=$(curl -gs --cacert "$home/pki/ca-cert.pem" -X POST -H 'Content-Type: application/json' \
    -d "{\"src\":[\"$payload\"],\"target\":\"$dest/payload\"}" -o "$WORK/rest.json" -w '%{http_code}' \
    "https://127.0.0.1:$DAEMON_PORT/clusterws/nodes/node[0001-$(printf %04d "$n")]/nodecopy?userName=root&userPW=$pw&fanout=$FANOUT" || true)
  t1=$(date +%s.%N); d1=$(cpu_ticks "$DAEMON_PID"); s1=$(sshd_cpu)
  [[ $code == 201 ]] || echo "warning: nodecopy $label: HTTP $code $(head -c 300 "$WORK/rest.json")" >&2
  awk -v t0="$t0" -v t1="$t1" -v d0="$d0" -v d1="$d1" -v s0="$s0" -v s1="$s1" -v hz="$TICKS" \
    'BEGIN {printf "%.3f %.2f %.2f\n", t1-t0, (d1-d0)/hz, (s1-s0)/hz}' >>"$WORK/$label"
  check "$label"
}

printf '%-24s %5s %9s %9s %12s %12s\n' "tool" "N" "wall s" "MiB/s" "client ms/n" "sshd ms/n"
report() {
  local label=$1 n=$2 name=$3
  local wall cc sc
  wall=$(cut -d' ' -f1 "$WORK/$label" | median)
  cc=$(cut -d' ' -f2 "$WORK/$label" | median)
  sc=$(cut -d' ' -f3 "$WORK/$label" | median)
  printf '%-24s %5s %9s %9s %12s %12s\n' "$name" "$n" "$wall" \
    "$(awk -v n="$n" -v w="$wall" -v m="$SIZE_MIB" 'BEGIN {printf "%.0f", n*m/w}')" \
    "$(awk -v n="$n" -v c="$cc" 'BEGIN {printf "%.1f", 1000*c/n}')" \
    "$(awk -v n="$n" -v c="$sc" 'BEGIN {printf "%.1f", 1000*c/n}')"
  echo "$wall" >"$WORK/$label.wall"
}

for n in $SIZES; do
  range="node[0001-$(printf %04d "$n")]"
  for _ in $(seq "$ROUNDS"); do
    measure "xdcp$n" xdcp "$range" -f "$FANOUT" "$payload" "$dest/payload"
    start_daemon "$home"
    rest "cold$n" "$n"
    rest "warm$n" "$n"
    stop_daemon
    measure "pdcp$n" pdcp -R ssh -f "$FANOUT" -w "$range" "$payload" "$dest/payload"
    measure "clush$n" clush -o "-F $farm/ssh_config" -f "$FANOUT" -w "$range" --copy "$payload" --dest "$dest/payload"
    # the floor under any copy over this sshd, with the engine's client library, one node
    # after another: the login alone, and the bytes into `cat >/dev/null` (paced, unpaced)
    for mode in connect sink blast; do
      measure "floor-$mode" cws-ssh-floor "$port" "$farm/id_ed25519" root "$mode" "$payload" "$FLOOR_N"
    done
  done
  report "xdcp$n" "$n" "xdcp (cold)"
  report "cold$n" "$n" "nodecopy cold"
  report "warm$n" "$n" "nodecopy warm (pool)"
  report "pdcp$n" "$n" "pdcp -f $FANOUT"
  report "clush$n" "$n" "clush --copy -f $FANOUT"
done
report floor-connect "$FLOOR_N" "floor: login only"
report floor-sink "$FLOOR_N" "floor: bytes, paced"
report floor-blast "$FLOOR_N" "floor: bytes, unpaced"
# per node CPU (ms) of a row: client + sshd
cpu_ms() { awk -v n="$2" -v c="$(cut -d' ' -f2 "$WORK/$1" | median)" -v s="$(cut -d' ' -f3 "$WORK/$1" | median)" 'BEGIN {printf "%.1f", 1000*(c+s)/n}'; }
peer=$(awk -v c="$(cat "$WORK/clush$max.wall")" -v p="$(cat "$WORK/pdcp$max.wall")" -v m="$max" 'BEGIN {print (c < p ? "clush" : "pdcp") m}')
# client and sshd share the cores, so wall time follows the CPU both spend: the best ratio
# a client can reach here is the faster peer's CPU per node over (xdcp's client CPU + the
# sshd floor of receiving the bytes)
xc=$(awk -v n="$max" -v c="$(cut -d' ' -f2 "$WORK/xdcp$max" | median)" 'BEGIN {printf "%.1f", 1000*c/n}')
fs=$(awk -v n="$FLOOR_N" -v c="$(cut -d' ' -f3 "$WORK/floor-sink" | median)" 'BEGIN {printf "%.1f", 1000*c/n}')
echo "ceiling: $peer spends $(cpu_ms "$peer" "$max") ms CPU per node; xdcp's client $xc + sshd's floor $fs ms: at most $(ratio "$(cpu_ms "$peer" "$max")" "$(awk -v a="$xc" -v b="$fs" 'BEGIN {print a+b}')")x on shared cores"
best=$(printf '%s\n%s\n' "$(cat "$WORK/pdcp$max.wall")" "$(cat "$WORK/clush$max.wall")" | sort -g | head -1)
goal "xdcp-cold-$max" "$(ratio "$best" "$(cat "$WORK/xdcp$max.wall")")" ">=" 4
goal "nodecopy-cold-$max" "$(ratio "$best" "$(cat "$WORK/cold$max.wall")")" ">=" 4
goal "nodecopy-warm-vs-cold-$max" "$(ratio "$(cat "$WORK/cold$max.wall")" "$(cat "$WORK/warm$max.wall")")" ">=" 1
