#!/usr/bin/env bash
# Event stream (issue #28): 10,000 node creates with PUT over 16 keep-alive connections
# (durable, group commit), alone and with 100 clients subscribed to GET /clusterws/events.
# The writer must not pay for the subscribers (>= 0.9x of its rate without them) and every
# subscriber must receive all 10,000 creations, ids only growing, no reset. Rounds alternate
# the two cases on one daemon, so both see the same disk and database size.
source "$(dirname "$0")/common.sh"
N=${N:-10000}
SUBS=${SUBS:-100}
ROUNDS=${EVENT_ROUNDS:-3}
CONNS=16
pw=benchpw
home=$WORK/home
init_home "$home" "$pw"
start_daemon "$home"
ca=$home/pki/ca-cert.pem

# put PREFIX: the writer's rate, then the daemon's CPU per write (us)
put() {
  local t0 t1 rate
  t0=$(cpu_ticks "$DAEMON_PID")
  rate=$(cws-put-load "$DAEMON_PORT" "$ca" "$pw" "$N" "$CONNS" "$1" | awk '{print $2}')
  t1=$(cpu_ticks "$DAEMON_PID")
  awk -v r="$rate" -v d=$((t1 - t0)) -v tck="$TICKS" -v n="$N" 'BEGIN {printf "%s %.1f\n", r, d * 1e6 / tck / n}'
}

: >"$WORK/alone"; : >"$WORK/watched"; : >"$WORK/subs"; : >"$WORK/subcpu"
for r in $(seq "$ROUNDS"); do
  put "a${r}n" >>"$WORK/alone"
  # the subscribers connect first; the writer starts once every stream is open
  cws-events-load "$DAEMON_PORT" "$ca" "$pw" "$SUBS" "$N" "w${r}n" 300 >"$WORK/sub.out" &
  sub_pid=$!
  PIDS+=("$sub_pid")
  for _ in $(seq 600); do grep -qs '^ready' "$WORK/sub.out" && break; sleep 0.1; done
  grep -q '^ready' "$WORK/sub.out" || { echo "the subscribers did not connect" >&2; exit 1; }
  put "w${r}n" >>"$WORK/watched"
  if wait "$sub_pid"; then echo ok >>"$WORK/subs"; fi
  summary=$(tail -1 "$WORK/sub.out")
  awk -v n="$N" '{for (i = 1; i < NF; ++i) if ($i == "cpu-us") printf "%.1f\n", $(i + 1) / n}' \
    <<<"$summary" >>"$WORK/subcpu"
  echo "round $r: $summary"
done
col() { cut -d' ' -f"$2" "$WORK/$1" | median; }
alone=$(col alone 1); watched=$(col watched 1)
complete=$(wc -l <"$WORK/subs")
printf '%-48s %8s %12s\n' "case (median of $ROUNDS)" "req/s" "daemon CPU" "" "" "us/write" \
  "clusterws PUT, no subscriber" "$alone" "$(col alone 2)" \
  "clusterws PUT, $SUBS subscribers of /events" "$watched" "$(col watched 2)"
echo "the subscribers' own CPU (one client process, TLS): $(median <"$WORK/subcpu") us per write"
echo "rounds in which every subscriber got all $N creations in order: $complete of $ROUNDS"
goal "events-writer-100-subscribers" "$(ratio "$watched" "$alone")" ">=" 0.9
goal "events-all-delivered-rounds" "$complete" ">=" "$ROUNDS" " of $ROUNDS"
