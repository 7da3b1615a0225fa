#!/usr/bin/env bash
# What holding N SOL consoles costs: ipmi/sol.hpp in one thread (cws-sol-hold ours) against
# FreeIPMI's libipmiconsole (cws-sol-hold libipmiconsole, as conman uses it), each on a fresh
# farm of N ipmi_sim BMCs with SOL (a stuck ipmi_sim state after a libipmiconsole session
# would spoil the next run: notes/consoles.md 1.6 #5), fed by one process writing a line per
# console every INTERVAL s. Prints one line per run: threads, RSS before/after and per
# console, CPU while holding, bytes received. N=100,256 by default (CONSOLES="100 256").
# Needs package openipmi; libipmiconsole-dev for the peer.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
CONSOLES=${CONSOLES:-"100 256"}
HOLD=${HOLD:-20}
INTERVAL=${INTERVAL:-1}
command -v ipmi_sim >/dev/null || PATH=$PATH:/usr/sbin
command -v ipmi_sim >/dev/null || { echo "sol_hold: ipmi_sim is not installed (openipmi)"; exit 0; }
# libipmiconsole 1.6.10 refuses "host:port": every BMC has its own address 127.31.x.y:623
LAN0=623

farm_pids=()
start_farm() { # N
  local n=$1 i d
  farm_pids=()
  for i in $(seq 0 $((n - 1))); do
    d=$WORK/farm/b$i
    rm -rf "$d"
    mkdir -p "$d/state"
    {
      printf 'name "b%s"\nset_working_mc 0x20\n  startlan 1\n    addr 127.31.%s.%s 623\n' "$i" $((i / 250)) $((i % 250 + 1))
      printf '    priv_limit admin\n    guid a123456789abcdefa123456789abcdef\n  endlan\n'
      printf '  sol "tcp:127.0.0.1:%s" 115200\n' $((SOL0 + i))
      printf '  user 2 true "admin" "password" admin 10 none md2 md5 straight\n'
    } >"$d/lan.conf"
    printf 'mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02\nmc_enable 0x20\n' >"$d/cmds.emu"
    ipmi_sim -c "$d/lan.conf" -f "$d/cmds.emu" -s "$d/state" -n >"$d/sim.log" 2>&1 &
    farm_pids+=("$!")
    PIDS+=("$!")
  done
  for _ in $(seq 500); do
    (($(grep -c ':0277 ' /proc/net/udp) >= n)) && break # 623 = 0x277; others may run BMCs too
    sleep 0.02
  done
  sleep 1 # the SOL links connect as each ipmi_sim starts
}
stop_farm() {
  local p
  for p in "${farm_pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
}

modes=(ours)
cws-sol-hold libipmiconsole 0 1 0 >/dev/null 2>&1 && modes+=(libipmiconsole)
round=0
for n in $CONSOLES; do
  # a fresh range per round (no port still held), below the ephemeral ports (32768-)
  SOL0=$((${SOL0_BASE:-26000} + round * 1200))
  round=$((round + 1))
  python3 "$here/sol_feeder.py" --port0 "$SOL0" --n "$n" --interval "$INTERVAL" --seconds 600 &
  feeder=$!
  PIDS+=("$feeder")
  sleep 0.5
  for mode in "${modes[@]}"; do
    start_farm "$n"
    cws-sol-hold "$mode" "$n" "$LAN0" "$HOLD" | sed "s/^mode=/INFO sol-hold mode=/"
    stop_farm
  done
  kill "$feeder" 2>/dev/null && wait "$feeder" 2>/dev/null || true
done
