#!/usr/bin/env bash
# rpower stat over a farm of N simulated BMCs (ipmi_sim, 127.0.0.1, one UDP port each):
#   - a sequential `ipmitool -I lanplus -C 3 ... power status` loop (the shell-script way)
#   - FreeIPMI's ipmipower over the whole farm at once (its fast peer)
#   - clusterws: `rpower` (CLI, new sessions), and GET /nodes/{nr}/power twice on the daemon
#     (cold, then warm on pooled sessions)
#   - with a quarter of the BMCs dead: total time against one per-node deadline
#     (site.ipmitimeout x site.ipmiretries)
# Also reports the daemon's resident memory per pooled BMC session.
# Needs packages openipmi, ipmitool, freeipmi-tools (scripts/bootstrap bench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
N=${N:-256}
for tool in ipmi_sim ipmitool ipmipower; do
  command -v "$tool" >/dev/null || PATH=$PATH:/usr/sbin
  command -v "$tool" >/dev/null || { echo "rpower: $tool is not installed (scripts/bootstrap bench)"; exit 0; }
done

farm=$WORK/bmcs
mkdir -p "$farm"
cat >"$farm/chassis.sh" <<'SH'
#!/bin/sh
dir=$1; op=$2; shift 2
case $op in
  get) for p in "$@"; do case $p in power) echo "power:$(cat "$dir/power")";; boot) echo "boot:default";; esac; done;;
  set) [ "$1" = power ] && echo "$2" > "$dir/power";;
esac
exit 0
SH
chmod +x "$farm/chassis.sh"
declare -a PORTS SIMS
for i in $(seq 0 $((N - 1))); do
  d=$farm/b$i
  mkdir -p "$d/state"
  echo 1 >"$d/power"
  port=$((30000 + i))
  PORTS[$i]=$port
  cat >"$d/lan.conf" <<CONF
name "b$i"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 $port
    priv_limit admin
    guid a123456789abcdefa123456789abcdef
  endlan
  chassis_control "$farm/chassis.sh $d"
  user 2 true "admin" "secret" admin 10 none md2 md5 straight
CONF
  printf 'mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr\nmc_enable 0x20\n' >"$d/cmds.emu"
  ipmi_sim -c "$d/lan.conf" -f "$d/cmds.emu" -s "$d/state" -n >"$d/sim.log" 2>&1 &
  SIMS[$i]=$!
  PIDS+=("$!")
done
wait_udp_bound 30000 "$N"

home=$WORK/home
pw=benchpw
init_home "$home" "$pw"
clusterctl chdef -t site clustersite ipmitimeout=1 ipmiretries=2 >/dev/null
define_bmc_nodes "${PORTS[@]}"

# sequential ipmitool loop (each call: a new RMCP+ session)
t0=$(now)
ok=0
for i in $(seq 0 $((N - 1))); do
  ipmitool -I lanplus -C 3 -H 127.0.0.1 -p "${PORTS[$i]}" -U admin -P secret power status 2>/dev/null | grep -q 'is on' && ok=$((ok + 1))
done
t_ipmitool=$(secs "$t0" "$(now)")
echo "ipmitool loop:     ${t_ipmitool}s ($ok of $N on)"

hosts=$(for i in $(seq 0 $((N - 1))); do printf '127.0.0.1:%s,' "${PORTS[$i]}"; done)
t0=$(now)
ok=$(ipmipower -D LAN_2_0 -I 3 -l ADMIN -W opensesspriv -u admin -p secret -h "${hosts%,}" --stat 2>/dev/null | grep -c ': on' || true)
t_ipmipower=$(secs "$t0" "$(now)")
echo "ipmipower:         ${t_ipmipower}s ($ok of $N on)"

t0=$(now)
ok=$(rpower bmcs stat 2>/dev/null | grep -c ': on$' || true)
t_cli=$(secs "$t0" "$(now)")
echo "rpower (CLI):      ${t_cli}s ($ok of $N on)"

start_daemon "$home"
get() {
  curl -gs --cacert "$home/pki/ca-cert.pem" -o "$WORK/power.json" \
    "https://127.0.0.1:$DAEMON_PORT/clusterws/nodes/bmcs/power?userName=root&userPW=$pw"
}
rss0=$(awk '/VmRSS/ {print $2}' "/proc/$DAEMON_PID/status")
t0=$(now); get; t_cold=$(secs "$t0" "$(now)")
echo "REST cold:         ${t_cold}s ($(grep -o '"on"' "$WORK/power.json" | wc -l) of $N on)"
rss1=$(awk '/VmRSS/ {print $2}' "/proc/$DAEMON_PID/status")
warm=()
for _ in $(seq "$ROUNDS"); do
  t0=$(now); get; warm+=("$(secs "$t0" "$(now)")")
done
t_warm=$(printf '%s\n' "${warm[@]}" | median)
echo "REST warm:         ${t_warm}s ($(grep -o '"on"' "$WORK/power.json" | wc -l) of $N on, median of $ROUNDS)"
per_session=$(awk -v a="$rss0" -v b="$rss1" -v n="$N" 'BEGIN {printf "%.1f", (b - a) / n}')
echo "daemon RSS per pooled BMC session: ${per_session} KiB ($(( (rss1 - rss0) )) KiB for $N)"

# a quarter dead: their deadline is ipmitimeout (1 s) x ipmiretries (2) = 2 s
for i in $(seq 0 4 $((N - 1))); do
  kill "${SIMS[$i]}" 2>/dev/null || true
done
sleep 0.2
t0=$(now)
curl -gs --cacert "$home/pki/ca-cert.pem" -o "$WORK/dead.json" \
  "https://127.0.0.1:$DAEMON_PORT/clusterws/nodes/bmcs/power?userName=root&userPW=$pw&format=detail" || true
t_dead=$(secs "$t0" "$(now)")
echo "REST quarter dead: ${t_dead}s ($(grep -o '"error":"timeout"' "$WORK/dead.json" | wc -l) timeouts)"
stop_daemon

goal "rpower-vs-ipmitool-loop" "$(ratio "$t_ipmitool" "$t_cold")" ">=" 20
goal "rpower-vs-ipmipower" "$(ratio "$t_ipmipower" "$t_cold")" ">=" 1
goal "rpower-warm-vs-cold" "$(ratio "$t_cold" "$t_warm")" ">=" 1
goal "rpower-quarter-dead" "$(ratio "$t_dead" 2)" "<=" 1.5
