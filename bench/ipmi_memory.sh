#!/usr/bin/env bash
# Memory per pooled BMC session: the daemon's resident memory and open sockets before and
# after GET /nodes/{nr}/power over SESSIONS (4096) BMC sessions, which stay pooled. The farm is
# BMCS ipmi_sim BMCs with USERS users each (a session is pooled per BMC address, port, user
# and password). Then the same with ipmi_max_pooled = SESSIONS/4: the pool, and its memory,
# stay within the setting.
# Needs package openipmi.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
BMCS=${BMCS:-256}
USERS=${USERS:-16}
SESSIONS=$((BMCS * USERS))
command -v ipmi_sim >/dev/null || PATH=$PATH:/usr/sbin
command -v ipmi_sim >/dev/null || { echo "ipmi_memory: ipmi_sim is not installed (openipmi)"; exit 0; }

farm=$WORK/bmcs
mkdir -p "$farm"
printf '#!/bin/sh\n[ "$2" = get ] && echo "power:1"\nexit 0\n' >"$farm/chassis.sh"
chmod +x "$farm/chassis.sh"
declare -a PORTS
for i in $(seq 0 $((BMCS - 1))); do
  d=$farm/b$i
  mkdir -p "$d/state"
  port=$((31000 + i))
  PORTS[$i]=$port
  {
    printf 'name "b%s"\nset_working_mc 0x20\n  startlan 1\n    addr 127.0.0.1 %s\n' "$i" "$port"
    printf '    priv_limit admin\n    guid a123456789abcdefa123456789abcdef\n  endlan\n'
    printf '  chassis_control "%s %s"\n' "$farm/chassis.sh" "$d"
    for u in $(seq 2 $((USERS + 1))); do
      printf '  user %s true "u%s" "secret" admin 4 none md2 md5 straight\n' "$u" "$u"
    done
  } >"$d/lan.conf"
  printf 'mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr\nmc_enable 0x20\n' >"$d/cmds.emu"
  ipmi_sim -c "$d/lan.conf" -f "$d/cmds.emu" -s "$d/state" -n >"$d/sim.log" 2>&1 &
  PIDS+=("$!")
done
wait_udp_bound 31000 "$BMCS"

home=$WORK/home
pw=benchpw
init_home "$home" "$pw"
clusterctl chdef -t site clustersite ipmitimeout=2 ipmiretries=3 >/dev/null
{
  for i in $(seq 0 $((BMCS - 1))); do
    for u in $(seq 2 $((USERS + 1))); do
      printf 'b%04du%02d:\n    objtype=node\n    groups=bmcs,all\n    mgt=ipmi\n    bmc=127.0.0.1\n' "$i" "$u"
      printf '    bmcport=%s\n    bmcusername=u%s\n    bmcpassword=secret\n' "${PORTS[$i]}" "$u"
    done
  done
} | clusterctl mkdef -z >/dev/null

rss() { awk '/VmRSS/ {print $2}' "/proc/$DAEMON_PID/status"; }
sockets() { find "/proc/$DAEMON_PID/fd" -lname 'socket:*' 2>/dev/null | wc -l; }
measure() { # $1: label; sets POOLED and PER
  local r0 s0 r1 s1 failed
  # a first small request starts every thread and allocator arena, so the pool is what grows
  curl -gs --cacert "$home/pki/ca-cert.pem" -o /dev/null \
    "https://127.0.0.1:$DAEMON_PORT/clusterws/nodes/b0000u02/power?userName=root&userPW=$pw"
  sleep 0.5
  r0=$(rss); s0=$(sockets)
  curl -gs --cacert "$home/pki/ca-cert.pem" -o "$WORK/power.json" \
    "https://127.0.0.1:$DAEMON_PORT/clusterws/nodes/bmcs/power?userName=root&userPW=$pw&format=detail"
  r1=$(rss); s1=$(sockets)
  failed=$(grep -o '"rc":1' "$WORK/power.json" | wc -l || true)
  POOLED=$((s1 - s0 + 1))
  PER=$(awk -v a="$r0" -v b="$r1" -v n="$POOLED" 'BEGIN {printf "%.1f", (b - a) / n}')
  echo "$1: RSS $r0 -> $r1 KiB, sockets $s0 -> $s1 ($POOLED pooled sessions, $failed nodes failed): ${PER} KiB per pooled session"
}

start_daemon "$home"
measure "ipmi_max_pooled=4096 ($SESSIONS sessions)"
per_full=$PER
pooled_full=$POOLED
stop_daemon

cap=$((SESSIONS / 4))
echo "ipmi_max_pooled = $cap" >>"$home/clusterws.conf"
start_daemon "$home"
measure "ipmi_max_pooled=$cap"
pooled_cap=$POOLED
stop_daemon

printf 'INFO %-28s %10s KiB  (%s pooled sessions; docs/hardware.md)\n' "ipmi-memory-per-session" "$per_full" "$pooled_full"
goal "ipmi-pool-within-max-pooled" "$pooled_cap" "<=" "$cap" " sessions"
