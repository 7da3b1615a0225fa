#!/usr/bin/env bash
# Consoles held and logged (issue #30, "Speed"): N IPMI SOL consoles (1,000 by default) to a
# farm of N ipmi_sim BMCs whose serial sides get a numbered line every INTERVAL (0.1 s) from
# one feeder (bench/sol_feeder.py), held and logged at once by
#   ours       clusterwsd (cons=ipmi nodes, console_hold = on, logs in <home>/consoles)
#   conserver  Debian's conserver, `type exec` ipmitool sol activate per console (Debian's build
#              has no FreeIPMI; xCAT's makeconservercf writes the same), logs &.log
#   conman     conmand, `ipmi:` consoles (FreeIPMI's libipmiconsole), logs %N.log
# each on a fresh farm (a libipmiconsole or killed ipmitool session leaves ipmi_sim stuck:
# shared notes/consoles.md 1.6 #5). Per way: consoles up, CPU of the whole process tree while
# holding (HOLD s) and PSS of the tree, per console; and the bytes lost: the feeder marks the
# first and last line number of the held window, and every node's log must have each of
# those lines once (a line is ~36 bytes; a lost line is reported with its count).
# Then the keystroke echo round trip (ECHO_KEYS keystrokes, one at a time, the serial side
# echoing) through the WebSocket console and through `ipmitool sol activate` on a pty, on the
# same quiet BMC, alternated ROUNDS times; through `rcons` too when it is built.
# Knobs: CONSOLES (1000), HOLD (30), INTERVAL (0.1), ECHO_KEYS (500), ROUNDS (3), PEERS
# ("conserver conman"), OURS (1; 0: the peers only, no echo: to find how many a peer holds),
# CONSERVER_NOFILE (conserver's `ulimit -n`; the hard limit),
# LAN_NET (127.38: BMC i at LAN_NET.(i/250).(i%250+1):623), SOL0 (28500: the feeder's first
# port). Needs openipmi, ipmitool, conserver-server, conman.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
mkdir -p "$WORK"
N=${CONSOLES:-1000}
HOLD=${HOLD:-30}
INTERVAL=${INTERVAL:-0.1}
ECHO_KEYS=${ECHO_KEYS:-500}
PEERS=${PEERS-"conserver conman"}
LAN_NET=${LAN_NET:-127.38}
SOL0=${SOL0:-28500}
ECHO_SOL=$((SOL0 + N))
command -v ipmi_sim >/dev/null || PATH=$PATH:/usr/sbin
command -v ipmi_sim >/dev/null || { echo "consoles: ipmi_sim is not installed (openipmi)"; exit 0; }
IPMITOOL="ipmitool -I lanplus -U admin -P password -C 3"

bmc_addr() { echo "$LAN_NET.$(($1 / 250)).$(($1 % 250 + 1))"; }
echo_addr="$LAN_NET.250.1"

# start_bmc DIR NAME ADDR SOLPORT: one ipmi_sim with SOL to 127.0.0.1:SOLPORT; prints its pid
start_bmc() {
  local d=$1
  rm -rf "$d"
  mkdir -p "$d/state"
  {
    printf 'name "%s"\nset_working_mc 0x20\n  startlan 1\n    addr %s 623\n' "$2" "$3"
    printf '    priv_limit admin\n    guid a123456789abcdefa123456789abcdef\n  endlan\n'
    printf '  sol "tcp:127.0.0.1:%s" 115200\n' "$4"
    printf '  user 2 true "admin" "password" admin 10 none md2 md5 straight\n'
  } >"$d/lan.conf"
  printf 'mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02\nmc_enable 0x20\n' >"$d/cmds.emu"
  ipmi_sim -c "$d/lan.conf" -f "$d/cmds.emu" -s "$d/state" -n >"$d/sim.log" 2>&1 &
  echo $!
}

# our BMCs bound in /proc/net/udp (LAN_NET.x.y:623, little-endian hex)
net_hex=$(printf '%02X%02X' "${LAN_NET#*.}" "${LAN_NET%%.*}")
bound_bmcs() { awk -v h="$net_hex" '$2 ~ ("^[0-9A-F][0-9A-F][0-9A-F][0-9A-F]" h ":0277$")' /proc/net/udp | wc -l; }

farm_pids=()
start_farm() {
  local i p
  farm_pids=()
  for i in $(seq 0 $((N - 1))); do
    p=$(start_bmc "$WORK/farm/b$i" "b$i" "$(bmc_addr "$i")" $((SOL0 + i)))
    farm_pids+=("$p")
    PIDS+=("$p")
  done
  for _ in $(seq 1000); do
    (($(bound_bmcs) >= N)) && break
    sleep 0.05
  done
  sleep 1 # each ipmi_sim connects its SOL link to the feeder as it starts
}
stop_farm() {
  local p
  for p in "${farm_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${farm_pids[@]}"; do wait "$p" 2>/dev/null || true; done
}

# tree_pids PID: the process and every live descendant
tree_pids() {
  { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v root="$1" '
    { pid = $1; line = $0; sub(/^[0-9]+ \(.*\) /, "", line); split(line, f, " "); parent[pid] = f[2] }
    END { for (p in parent) { q = p; while (q != "" && q != "0" && q != "1") { if (q == root) { print p; break } q = parent[q] } } }'
}

# tree_pss_kib PID: PSS of the process and every live descendant
tree_pss_kib() {
  local p total=0 v
  for p in $(tree_pids "$1"); do
    v=$(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)
    total=$((total + ${v:-0}))
  done
  echo "$total"
}

# mark: the feeder's last line number (and the bytes it still holds)
mark() {
  local before
  before=$(wc -l <"$WORK/feeder.state" 2>/dev/null || echo 0)
  kill -USR1 "$feeder"
  for _ in $(seq 200); do
    (($(wc -l <"$WORK/feeder.state") > before)) && break
    sleep 0.01
  done
  tail -1 "$WORK/feeder.state"
}

# logs_with_lines DIR SUFFIX: how many of the N logs hold a feeder line
logs_with_lines() {
  local c=0 i
  for i in $(seq 0 $((N - 1))); do
    grep -qs "line " "$1/$(printf 'b%04d' "$i")$2" && c=$((c + 1))
  done
  echo "$c"
}

# lost DIR SUFFIX K1 K2: lines K1+1..K2 missing from the N logs, summed ("missing nodes-short")
lost_lines() {
  local dir=$1 suffix=$2 k1=$3 k2=$4 i f miss=0 short=0 m
  for i in $(seq 0 $((N - 1))); do
    f="$dir/$(printf 'b%04d' "$i")$suffix"
    m=$({ grep -ao "node$(printf '%04d' "$i") line [0-9]*" "$f" 2>/dev/null || true; } | awk -v a="$k1" -v b="$k2" '
      { k = $3; if (k > a && k <= b && !(k in seen)) { seen[k] = 1; n++ } } END { print (b - a) - n }')
    miss=$((miss + m))
    ((m == 0)) || short=$((short + 1))
  done
  echo "$miss $short"
}

# hold WAY ROOTPID DIR SUFFIX: waits for the consoles, then measures the held window
hold() {
  local way=$1 root=$2 dir=$3 suffix=$4 t0 up=0 m1 m2 k1 k2 c0 c1 pss lost cpu_pct us_per per
  t0=$(now)
  for _ in $(seq 120); do
    up=$(logs_with_lines "$dir" "$suffix")
    ((up >= N)) && break
    sleep 0.5
  done
  local setup
  setup=$(secs "$t0" "$(now)")
  sleep 2
  m1=$(mark)
  k1=${m1% *}
  c0=$(tree_ticks "$root")
  sleep "$HOLD"
  c1=$(tree_ticks "$root")
  pss=$(tree_pss_kib "$root")
  m2=$(mark)
  k2=${m2% *}
  local alive=yes
  kill -0 "$root" 2>/dev/null || alive=no
  sleep 3 # what ipmi_sim and the holder still had in flight
  lost=$(lost_lines "$dir" "$suffix" "$k1" "$k2")
  cpu_pct=$(awk -v t=$((c1 - c0)) -v hz="$TICKS" -v s="$HOLD" 'BEGIN {printf "%.1f", 100 * t / hz / s}')
  # CPU per console: µs of CPU per console per second held; PSS per console in KiB
  us_per=$(awk -v t=$((c1 - c0)) -v hz="$TICKS" -v s="$HOLD" -v n="$N" 'BEGIN {printf "%.1f", 1e6 * t / hz / s / n}')
  per=$(awk -v p="$pss" -v n="$N" 'BEGIN {printf "%.1f", p / n}')
  # CPU per line that reached its log (a holder that loses lines also spends less)
  local per_line
  per_line=$(awk -v t=$((c1 - c0)) -v hz="$TICKS" -v w=$((k2 - k1)) -v n="$N" -v l="${lost% *}" \
    'BEGIN {d = w * n - l; if (d <= 0) print "inf"; else printf "%.1f", 1e6 * t / hz / d}')
  printf 'INFO consoles way=%s n=%s up=%s setup-s=%s cpu-pct=%s cpu-us-per-console-s=%s pss-mib=%.1f pss-kib-per-console=%s window-lines=%s lost-lines=%s nodes-short=%s feeder-pending=%s cpu-us-per-line-logged=%s load=%s holder-alive=%s\n' \
    "$way" "$N" "$up" "$setup" "$cpu_pct" "$us_per" "$(awk -v p="$pss" 'BEGIN {print p / 1024}')" "$per" \
    $((k2 - k1)) "${lost% *}" "${lost#* }" "${m2#* }" "$per_line" "$(cut -d' ' -f1-3 /proc/loadavg)" "$alive"
  if [[ $alive == no ]]; then
    # the holder ended while holding (conserver's master at 1,000 consoles): no figures
    echo "INFO consoles way=$way: the holder (pid $root) ended during the hold; see its log in $WORK"
    return
  fi
  eval "cpu_$way=$us_per pss_$way=$per lostl_$way=${lost% *} up_$way=$up line_$way=$per_line"
}

echo "consoles: N=$N, a line every ${INTERVAL}s per console, held ${HOLD}s; load $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$WORK/feeder.state"
python3 "$here/sol_feeder.py" --port0 "$SOL0" --n "$N" --interval "$INTERVAL" --seconds 3600 \
  --state "$WORK/feeder.state" &
feeder=$!
PIDS+=("$feeder")
python3 "$here/sol_feeder.py" --port0 "$ECHO_SOL" --n 1 --interval 3600 --seconds 3600 &
PIDS+=("$!")
sleep 0.5

# -- ours, and the echo round trip on the same daemon before it holds the N ---------------------
echo_ws=() echo_ipmitool=() echo_rcons=()
if [[ ${OURS:-1} != 0 ]]; then
  home=$WORK/home
  init_home "$home" benchpw
  cat >>"$home/clusterws.conf" <<EOF
console_hold = on
console_max = $((N + 16))
EOF
  start_daemon "$home"
  echo_pid=$(start_bmc "$WORK/echo-bmc" echo0 "$echo_addr" "$ECHO_SOL")
  PIDS+=("$echo_pid")
  for _ in $(seq 200); do (($(bound_bmcs) >= 1)) && break; sleep 0.05; done
  sleep 1
  p99() { sed -n 's/.*p99-us \([0-9]*\).*/\1/p'; }
  clusterctl mkdef echo0 groups=all mgt=ipmi cons=ipmi bmc="$echo_addr" bmcusername=admin bmcpassword=password >/dev/null
  for r in $(seq "$ROUNDS"); do
    # ours holds echo0; the WebSocket client is its writer
    for _ in $(seq 100); do grep -qs "console up\|console back" "$home/consoles/echo0" && break; sleep 0.1; done
    out=$(cws-console-echo ws "$DAEMON_PORT" "$home/pki/ca-cert.pem" benchpw echo0 "$ECHO_KEYS" || true)
    echo "INFO echo way=websocket round=$r $out"
    echo_ws+=("$(p99 <<<"$out")")
    if [[ -x "$BIN/rcons" ]]; then
      # rcons on a pty over the local socket. It shows conserver's "[Enter `^Ec?' for help]"
      # (RCONS_READY) before the daemon's answer to its attach (keys typed before the answer
      # wait for it); cws-console-echo then waits for a first keystroke's echo. -f: the
      # WebSocket client's detach may not have landed yet (an rw attach would then be read-only
      # and every keystroke refused); --replay 0: the replay holds the letters echoed in the
      # WebSocket round, which would pass for echoes. Ended by SIGTERM after the "\r~."
      # (ipmitool's escape) that it ignores.
      out=$(cws-console-echo pty "$ECHO_KEYS" "${RCONS_READY:-for help]}" -- "$BIN/rcons" echo0 -f --replay 0 || true)
      echo "INFO echo way=rcons round=$r $out"
      echo_rcons+=("$(p99 <<<"$out")")
    fi
    # ipmitool on the same BMC: the daemon lets go of it first (makeconservercf -d deactivates)
    clusterctl makeconservercf -d echo0 >/dev/null
    sleep 0.5
    out=$(cws-console-echo pty "$ECHO_KEYS" "SOL Session operational" -- $IPMITOOL -H "$echo_addr" sol activate || true)
    echo "INFO echo way=ipmitool round=$r $out"
    echo_ipmitool+=("$(p99 <<<"$out")")
    : >"$home/consoles/echo0"
    clusterctl makeconservercf echo0 >/dev/null
  done
  clusterctl makeconservercf -d echo0 >/dev/null
  kill "$echo_pid" 2>/dev/null || true

  rss0=$(awk '/VmRSS/ {print $2}' "/proc/$DAEMON_PID/status")
  start_farm
  {
    printf 'cons:\n    objtype=group\n    mgt=ipmi\n    cons=ipmi\n    bmcusername=admin\n    bmcpassword=password\n'
    for i in $(seq 0 $((N - 1))); do
      printf 'b%04d:\n    objtype=node\n    groups=cons,all\n    mgt=ipmi\n    cons=ipmi\n    bmc=%s\n' "$i" "$(bmc_addr "$i")"
    done
  } | clusterctl mkdef -z >/dev/null
  hold ours "$DAEMON_PID" "$home/consoles" ""
  rss1=$(awk '/VmRSS/ {print $2}' "/proc/$DAEMON_PID/status")
  echo "INFO consoles way=ours rss-before-kib=$rss0 rss-after-kib=$rss1 growth-kib-per-console=$(awk -v a="$rss0" -v b="$rss1" -v n="$N" 'BEGIN {printf "%.1f", (b - a) / n}')"
  stop_daemon
  stop_farm
fi

# -- conserver: type exec ipmitool per console ---------------------------------------------------
if [[ " $PEERS " == *" conserver "* ]] && command -v conserver >/dev/null; then
  cdir=$WORK/conserver
  mkdir -p "$cdir/logs"
  cport=$(free_port)
  {
    echo 'config * { defaultaccess allowed; reinitcheck 1; }'
    echo 'default full { rw *; }'
    echo "default * { logfile $cdir/logs/&.log; include full; master 127.0.0.1; }"
    for i in $(seq 0 $((N - 1))); do
      printf 'console b%04d { type exec; exec %s -H %s sol activate; }\n' "$i" "$IPMITOOL" "$(bmc_addr "$i")"
    done
    echo 'access * { trusted 127.0.0.1; allowed 127.0.0.1; }'
  } >"$cdir/conserver.cf"
  : >"$cdir/conserver.passwd"
  start_farm
  # its open files: the hard limit (CONSERVER_NOFILE), as an administrator running it this
  # large would set it (its master uses a few; each child, 16 consoles, about 54; here it
  # held 1,000 with a soft limit of 1,024 and of 20,000 alike)
  (
    ulimit -n "${CONSERVER_NOFILE:-$(ulimit -Hn)}"
    exec conserver -C "$cdir/conserver.cf" -P "$cdir/conserver.passwd" -p "$cport" -M 127.0.0.1 \
      -L "$cdir/server.log"
  ) >"$cdir/out.log" 2>&1 &
  cpid=$!
  PIDS+=("$cpid")
  hold conserver "$cpid" "$cdir/logs" .log
  # its children (one per 16 consoles, a sh and an ipmitool per console): stopped by pid too
  kids=$(tree_pids "$cpid")
  kill "$cpid" 2>/dev/null && wait "$cpid" 2>/dev/null || true
  sleep 1
  for p in $kids; do [[ "$p" == "$cpid" ]] || kill "$p" 2>/dev/null || true; done
  stop_farm
fi

# -- conman: ipmi: consoles (libipmiconsole) -------------------------------------------------------
if [[ " $PEERS " == *" conman "* ]] && command -v conmand >/dev/null; then
  mdir=$WORK/conman
  mkdir -p "$mdir"
  {
    echo "SERVER keepalive=ON"
    echo "SERVER loopback=ON"
    echo "SERVER logdir=\"$mdir\""
    echo "SERVER logfile=\"conmand.log\""
    echo "SERVER pidfile=\"$mdir/conmand.pid\""
    echo "SERVER port=$(free_port)"
    echo "GLOBAL log=\"%N.log\""
    echo "GLOBAL logopts=\"nosanitize\""
    echo 'GLOBAL ipmiopts="U:admin,P:password,C:3,L:admin,W:opensesspriv,W:134217728,W:solpayloadsize"'
    for i in $(seq 0 $((N - 1))); do
      printf 'CONSOLE name="b%04d" dev="ipmi:%s"\n' "$i" "$(bmc_addr "$i")"
    done
  } >"$mdir/conman.conf"
  start_farm
  conmand -c "$mdir/conman.conf" >"$mdir/out.log" 2>&1 || true
  for _ in $(seq 100); do [[ -s "$mdir/conmand.pid" ]] && break; sleep 0.05; done
  mpid=$(cat "$mdir/conmand.pid")
  PIDS+=("$mpid")
  hold conman "$mpid" "$mdir" .log
  kill "$mpid" 2>/dev/null || true
  for _ in $(seq 300); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$mpid" 2>/dev/null || true # its engine waits for sessions to BMCs about to go
  stop_farm
fi

# -- goals -------------------------------------------------------------------------------------
printf '\n| way | consoles up | CPU µs per console-second | PSS KiB per console | lines lost |\n|---|---|---|---|---|\n'
for w in ours conserver conman; do
  v="cpu_$w"
  [[ -n "${!v:-}" ]] || continue
  u="up_$w" p="pss_$w" l="lostl_$w"
  printf '| %s | %s / %s | %s | %s | %s |\n' "$w" "${!u}" "$N" "${!v}" "${!p}" "${!l}"
done
best_cpu="" best_pss="" best_line=""
for w in conserver conman; do
  v="cpu_$w" p="pss_$w" q="line_$w"
  [[ -n "${!v:-}" ]] || continue
  [[ -z "$best_cpu" ]] || awk -v a="${!v}" -v b="$best_cpu" 'BEGIN {exit !(a < b)}' && best_cpu=${!v}
  [[ -z "$best_pss" ]] || awk -v a="${!p}" -v b="$best_pss" 'BEGIN {exit !(a < b)}' && best_pss=${!p}
  [[ -z "$best_line" ]] || awk -v a="${!q}" -v b="$best_line" 'BEGIN {exit !(a < b)}' && best_line=${!q}
done
if [[ ${OURS:-1} == 0 ]]; then
  exit 0
fi
goal "consoles-lines-lost-ours" "$lostl_ours" "<=" 0 " lines"
if [[ -n "$best_cpu" ]]; then
  goal "consoles-cpu-vs-best-peer" "$(ratio "$cpu_ours" "$best_cpu")" "<=" 1 x
  goal "consoles-pss-vs-best-peer" "$(ratio "$pss_ours" "$best_pss")" "<=" 1 x
  goal "consoles-cpu-per-line-vs-best-peer" "$(ratio "$line_ours" "$best_line")" "<=" 1 x
fi
ws99=$(printf '%s\n' "${echo_ws[@]}" | median)
it99=$(printf '%s\n' "${echo_ipmitool[@]}" | median)
echo "INFO echo p99 medians: websocket ${ws99} us, ipmitool ${it99} us"
goal "echo-p99-websocket-vs-ipmitool" "$(ratio "$ws99" "$it99")" "<=" 1.2 x
if ((${#echo_rcons[@]} > 0)); then
  rc99=$(printf '%s\n' "${echo_rcons[@]}" | median)
  goal "echo-p99-rcons-vs-ipmitool" "$(ratio "$rc99" "$it99")" "<=" 1.2 x
else
  echo "INFO echo rcons: not measured (no rcons in $BIN)"
fi
