#!/usr/bin/env bash
# 12. Jobs: every fan-out call is a job. nodeshell of N nodes (one private sshd on 127.0.0.1,
# warm pool, command `hostname`) three ways in one run: synchronous (the job its caller
# awaits: what nodeshell.sh's warm row measures), async=1 then GET /jobs/{id}?stream=1, and
# async=1 then polling GET /jobs/{id} until done. BASELINE=path/to/an/older/clusterwsd adds
# that daemon's synchronous nodeshell in the same run (the path before jobs). Then memory: a
# nodestat job of BIG nodes (every probed port closed on 127.0.0.1) with
# job_output_max_bytes = OUTMAX, the daemon's RSS before and after.
source "$(dirname "$0")/common.sh"
N=${N:-1024}
FANOUT=${FANOUT:-64}
BIG=${BIG:-10000}
OUTMAX=${OUTMAX:-65536}
here=$(cd "$(dirname "$0")" && pwd)
farm=$WORK/farm
port=$(free_port)
SSHD_PID=$("$here/sshfarm.sh" start "$farm" "$port")
PIDS+=("$SSHD_PID")
home=$WORK/home
pw=benchpw
init_home "$home" "$pw"
cat "$home/ssh/root/id_ed25519.pub" >>"$farm/authorized_keys"
mkdef -t group farm sshport="$port" >/dev/null
mkdef "node[0001-$(printf %04d "$N")]" groups=farm,all ip=127.0.0.1 >/dev/null
base="https://127.0.0.1"
q="userName=root&userPW=$pw"
range="node[0001-$(printf %04d "$N")]"
c() { curl -gs --cacert "$home/pki/ca-cert.pem" "$@"; }

# sync LABEL: one synchronous nodeshell, its wall time appended to $WORK/LABEL
sync() {
  local t0 t1
  t0=$(now)
  c -X POST -d '{"command":"hostname"}' -o "$WORK/out.json" \
    "$base:$DAEMON_PORT/clusterws/nodes/$range/nodeshell?$q&format=detail&fanout=$FANOUT"
  t1=$(now)
  local ok; ok=$({ grep -o '"rc":0' "$WORK/out.json" || true; } | wc -l)
  [[ $ok -eq $N ]] || echo "warning: $1: $ok of $N nodes ok" >&2
  echo "$(secs "$t0" "$t1")" >>"$WORK/$1"
}

# start_job: POST async=1; prints the job id
start_job() {
  c -X POST -d '{"command":"hostname"}' \
    "$base:$DAEMON_PORT/clusterws/nodes/$range/nodeshell?$q&fanout=$FANOUT&async=1" |
    sed 's/.*"job":"\([0-9a-f]*\)".*/\1/'
}

stream() {
  local t0 t1 id
  t0=$(now)
  id=$(start_job)
  c -o "$WORK/stream.out" "$base:$DAEMON_PORT/clusterws/jobs/$id?$q&stream=1"
  t1=$(now)
  grep -q "\"nodes\":$N,\"failed\":0" "$WORK/stream.out" || echo "warning: stream: $(tail -1 "$WORK/stream.out")" >&2
  echo "$(secs "$t0" "$t1")" >>"$WORK/$1"
}

poll() {
  local t0 t1 id
  t0=$(now)
  id=$(start_job)
  while c "$base:$DAEMON_PORT/clusterws/jobs/$id?$q" | grep -q '"state":"running"'; do
    sleep 0.005
  done
  t1=$(now)
  echo "$(secs "$t0" "$t1")" >>"$WORK/$1"
}

printf '%-34s %5s %9s\n' "nodeshell of N nodes, warm" "N" "wall s"
row() { printf '%-34s %5s %9s\n' "$1" "$N" "$(median <"$WORK/$2")"; }
if [[ -n "${BASELINE:-}" ]]; then
  clusterwsd() { exec "$BASELINE" "$@"; } # (in start_daemon's background subshell)
  start_daemon "$home"
  sync base; : >"$WORK/base"
  for _ in $(seq "$ROUNDS"); do sync base; done
  stop_daemon
  unset -f clusterwsd
fi
start_daemon "$home"
sync sync; : >"$WORK/sync" # the pool filled
for _ in $(seq "$ROUNDS"); do
  sync sync
  stream stream
  poll poll
done
stop_daemon
[[ -z "${BASELINE:-}" ]] || row "before jobs (BASELINE), sync" base
row "job, sync" sync
row "job, async + stream=1" stream
row "job, async + poll" poll
s=$(median <"$WORK/sync")
[[ -z "${BASELINE:-}" ]] || goal "jobs-sync-vs-before-$N" "$(ratio "$s" "$(median <"$WORK/base")")" "<=" 1.05
goal "jobs-async-stream-vs-sync-$N" "$(ratio "$(median <"$WORK/stream")" "$s")" "<=" 1.05
echo "INFO jobs-async-poll-vs-sync-$N $(ratio "$(median <"$WORK/poll")" "$s")x (polling every 5 ms with a new curl each time)"

# memory: one job of BIG nodes' results
closed=()
for _ in 1 2 3 4 5 6; do closed+=("$(free_port)"); done
cat >>"$home/clusterws.conf" <<CONF
job_output_max_bytes = $OUTMAX
max_nodes_in_flight_per_user = 100000
nodestat_ports = https:${closed[0]},pbs:${closed[1]},xend:${closed[2]},rdp:${closed[3]},msrpc:${closed[4]}
CONF
mkdef -t group big sshport="${closed[5]}" >/dev/null
mkdef "big[00001-$(printf %05d "$BIG")]" groups=big ip=127.0.0.1 >/dev/null
start_daemon "$home"
c -o /dev/null "$base:$DAEMON_PORT/clusterws/nodes/big00001/nodestat?$q"
rss() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$DAEMON_PID/status"; }
rss0=$(rss)
rsses=()
for round in 1 2 3; do
  t0=$(now)
  id=$(c "$base:$DAEMON_PORT/clusterws/nodes/big/nodestat?$q&async=1" | sed 's/.*"job":"\([0-9a-f]*\)".*/\1/')
  while c "$base:$DAEMON_PORT/clusterws/jobs/$id?$q" -o "$WORK/job.json"; grep -q '"state":"running"' "$WORK/job.json"; do
    sleep 0.05
  done
  t1=$(now)
  rsses+=("$(rss)")
  printf 'nodestat job %d of %d nodes: %s s, %s, job body %d bytes, daemon RSS %s MiB\n' "$round" "$BIG" \
    "$(secs "$t0" "$t1")" "$(grep -o '"finished":[0-9]*,"failed":[0-9]*,"truncated":[0-9]*' "$WORK/job.json")" \
    "$(wc -c <"$WORK/job.json")" "${rsses[-1]}"
done
stop_daemon
# the first job's growth is the allocator's arenas and the engines' tables as much as the
# job; three jobs kept (jobs_keep_max) must not grow it three times
echo "INFO jobs-rss-$BIG-nodes before ${rss0} MiB, after 1 job ${rsses[0]}, 2 jobs ${rsses[1]}, 3 jobs ${rsses[2]} MiB (job_output_max_bytes $OUTMAX)"
goal "jobs-rss-3rd-vs-1st-$BIG" "$(ratio "$(awk -v a="$rss0" -v b="${rsses[2]}" 'BEGIN {print b-a}')" "$(awk -v a="$rss0" -v b="${rsses[0]}" 'BEGIN {print b-a}')")" "<=" 1.5
