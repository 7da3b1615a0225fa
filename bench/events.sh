#!/usr/bin/env bash
# Event stream (issue #28): 10,000 node creates with PUT over 16 keep-alive connections
# (durable, group commit), alone and with 100 clients subscribed to GET /clusterws/events.
# The writer must not pay for the subscribers (>= 0.9x of its rate without them) and every
# subscriber must receive all 10,000 creations, ids only growing, no reset. Rounds alternate
# the two cases on one daemon, so both see the same disk and database size.
#
# EVENTS_PIN="A B" (cpu lists for taskset, e.g. "0 1") adds a pinned pair of cases to each
# round: the daemon (every thread) and the writer on cpus A, the subscribers' client on cpus
# B, the same in the alone and the watched case (in the alone case a busy loop keeps cpus B
# from sitting idle, see spin). On a small machine the subscribers' own TLS
# client otherwise competes with the writer for the same cores: pinned, the writer's side pays
# only what the daemon spends on the subscribers. The daemon's CPU per write with and without
# subscribers is that cost measured directly, whatever the machine's load.
source "$(dirname "$0")/common.sh"
N=${N:-10000}
SUBS=${SUBS:-100}
ROUNDS=${EVENT_ROUNDS:-3}
CONNS=16
read -r PIN_D PIN_S <<<"${EVENTS_PIN:-}"
if [[ -n "${EVENTS_PIN:-}" && -z "$PIN_S" ]]; then
  echo "EVENTS_PIN: two cpu lists, the daemon's and the subscribers' (\"0 1\")" >&2
  exit 2
fi
ALL_CPUS=0-$(($(nproc --all) - 1))
pw=benchpw
home=$WORK/home
init_home "$home" "$pw"
start_daemon "$home"
ca=$home/pki/ca-cert.pem

# spin CPUS: keeps CPUS busy (its pid in SPIN_PID). In the pinned alone case the subscribers'
# cpus would be idle: on this VM an idle vCPU halts, and waking it for the disk's and the
# network's interrupts made the durable writer 2-3x slower than with the subscribers' client
# busy there (pinned alone 1.0-1.2k writes/s, pinned with subscribers 3.2-3.9k, 2026-11-27).
spin() {
  taskset -c "$1" bash -c 'while :; do :; done' &
  SPIN_PID=$!
  PIDS+=("$SPIN_PID")
}

# fresh: the nodes a case created go (not timed): a durable create costs more the more nodes
# the database holds, so each case starts from the same size (the rounds alternate the cases)
fresh() { rmdef -t node bench >/dev/null; }

# pin CPUS: moves every thread of the daemon to CPUS
pin() { taskset -a -p -c "$1" "$DAEMON_PID" >/dev/null; }

# put PREFIX [CPUS]: the writer's rate, then the daemon's CPU per write (us)
put() {
  local t0 t1 rate
  t0=$(cpu_ticks "$DAEMON_PID")
  rate=$(taskset -c "${2:-$ALL_CPUS}" cws-put-load "$DAEMON_PORT" "$ca" "$pw" "$N" "$CONNS" "$1" \
    | awk '{print $2}')
  t1=$(cpu_ticks "$DAEMON_PID")
  awk -v r="$rate" -v d=$((t1 - t0)) -v tck="$TICKS" -v n="$N" 'BEGIN {printf "%s %.1f\n", r, d * 1e6 / tck / n}'
}

# watched PREFIX SUFFIX [WRITER_CPUS SUBSCRIBER_CPUS]: the writer with the subscribers
watched() {
  # the subscribers connect first; the writer starts once every stream is open
  taskset -c "${4:-$ALL_CPUS}" cws-events-load "$DAEMON_PORT" "$ca" "$pw" "$SUBS" "$N" "$1" 300 \
    >"$WORK/sub.out" &
  sub_pid=$!
  PIDS+=("$sub_pid")
  for _ in $(seq 600); do grep -qs '^ready' "$WORK/sub.out" && break; sleep 0.1; done
  grep -q '^ready' "$WORK/sub.out" || { echo "the subscribers did not connect" >&2; exit 1; }
  put "$1" "${3:-}" >>"$WORK/watched$2"
  if wait "$sub_pid"; then echo ok >>"$WORK/subs"; fi
  summary=$(tail -1 "$WORK/sub.out")
  awk -v n="$N" '{for (i = 1; i < NF; ++i) if ($i == "cpu-us") printf "%.1f\n", $(i + 1) / n}' \
    <<<"$summary" >>"$WORK/subcpu$2"
  echo "round $r$2: $summary"
}

: >"$WORK/alone"; : >"$WORK/watched"; : >"$WORK/subs"; : >"$WORK/subcpu"
: >"$WORK/alone.pinned"; : >"$WORK/watched.pinned"; : >"$WORK/subcpu.pinned"
cases=1
for r in $(seq "$ROUNDS"); do
  put "a${r}n" >>"$WORK/alone"
  fresh
  watched "w${r}n" ""
  fresh
  if [[ -n "$PIN_D" ]]; then
    cases=2
    pin "$PIN_D"
    spin "$PIN_S"
    put "p${r}n" "$PIN_D" >>"$WORK/alone.pinned"
    kill "$SPIN_PID"
    wait "$SPIN_PID" 2>/dev/null || true
    fresh
    watched "q${r}n" .pinned "$PIN_D" "$PIN_S"
    fresh
    pin "$ALL_CPUS"
  fi
done
col() { cut -d' ' -f"$2" "$WORK/$1" | median; }
# per_sub FILE_SUFFIX: the daemon's CPU for the subscribers, per subscriber per write (us)
per_sub() { awk -v w="$(col "watched$1" 2)" -v a="$(col "alone$1" 2)" -v s="$SUBS" 'BEGIN {printf "%.2f", (w - a) / s}'; }
alone=$(col alone 1); watched=$(col watched 1)
complete=$(wc -l <"$WORK/subs")
printf '%-56s %8s %12s\n' "case (median of $ROUNDS)" "req/s" "daemon CPU" "" "" "us/write" \
  "clusterws PUT, no subscriber" "$alone" "$(col alone 2)" \
  "clusterws PUT, $SUBS subscribers of /events" "$watched" "$(col watched 2)"
if [[ -n "$PIN_D" ]]; then
  printf '%-56s %8s %12s\n' \
    "pinned (daemon+writer cpus $PIN_D), no subscriber" "$(col alone.pinned 1)" "$(col alone.pinned 2)" \
    "pinned, $SUBS subscribers (their client on cpus $PIN_S)" "$(col watched.pinned 1)" "$(col watched.pinned 2)"
fi
echo "the daemon's CPU for the subscribers: $(per_sub "") us per subscriber per write" \
  "${PIN_D:+(pinned: $(per_sub .pinned))}"
echo "the subscribers' own CPU (one client process, TLS): $(median <"$WORK/subcpu") us per write" \
  "${PIN_D:+(pinned: $(median <"$WORK/subcpu.pinned"))}"
echo "rounds in which every subscriber got all $N creations in order: $complete of $((ROUNDS * cases))"
goal "events-writer-100-subscribers" "$(ratio "$watched" "$alone")" ">=" 0.9
if [[ -n "$PIN_D" ]]; then
  goal "events-writer-pinned" "$(ratio "$(col watched.pinned 1)" "$(col alone.pinned 1)")" ">=" 0.9
fi
goal "events-all-delivered-rounds" "$complete" ">=" "$((ROUNDS * cases))" " of $((ROUNDS * cases))"
