#!/usr/bin/env bash
# 2. Durable writes: 10,000 node creates with PUT over 16 keep-alive connections (every reply
# after its data is durable: group commit) against raw LMDB, one fsync'd commit per write.
# Two ceilings, same client and connections, alternated with the rest:
# - the same PUTs to a second daemon whose fsyncs are no-ops (libeatmydata): the rate if
#   group commit hid the disk completely, so PUT-without-fsync/raw is the highest ratio any
#   commit strategy can reach on this machine;
# - GETs of the nodes just made: the service's rate with no write at all.
source "$(dirname "$0")/common.sh"
N=${N:-10000}
ROUNDS=${WRITE_ROUNDS:-5} # cheap rounds: the write figures move most from run to run
CONNS=16
pw=benchpw
init_home "$WORK/nosync-home" "$pw"
start_daemon "$WORK/nosync-home" libeatmydata.so
nosync_pid=$DAEMON_PID nosync_port=$DAEMON_PORT
grep -q eatmydata "/proc/$nosync_pid/maps" || { echo "libeatmydata is not loaded" >&2; exit 1; }
home=$WORK/home
init_home "$home" "$pw"
start_daemon "$home"

exec 3>&2 # the load client's own errors, past the capture of `time`
# load HOME PID PORT METHOD PREFIX: one run of the load client; prints
# "rate daemon-CPU-us client-CPU-us" (CPU per request)
load() {
  local t0 t1 cpu TIMEFORMAT='%U %S'
  t0=$(cpu_ticks "$2")
  cpu=$( { time cws-put-load "$3" "$1/pki/ca-cert.pem" "$pw" "$N" "$CONNS" "$5" "$4" \
    >"$WORK/out" 2>&3; } 2>&1 )
  t1=$(cpu_ticks "$2")
  awk -v rate="$(awk '{print $2}' "$WORK/out")" -v d=$((t1 - t0)) -v tck="$TICKS" -v n="$N" \
    -v c="$cpu" 'BEGIN {split(c, u, " "); printf "%s %.1f %.1f\n", rate, d * 1e6 / tck / n, (u[1] + u[2]) * 1e6 / n}'
}

: >"$WORK/put"; : >"$WORK/nosync"; : >"$WORK/get"; : >"$WORK/raw"
for r in $(seq "$ROUNDS"); do
  load "$home" "$DAEMON_PID" "$DAEMON_PORT" PUT "r${r}n" >>"$WORK/put"
  rm -rf "$WORK/rawdb"
  cws-lmdb-commits "$WORK/rawdb" 3000 | awk '{print $2}' >>"$WORK/raw"
  load "$WORK/nosync-home" "$nosync_pid" "$nosync_port" PUT "r${r}n" >>"$WORK/nosync"
  load "$home" "$DAEMON_PID" "$DAEMON_PORT" GET "r${r}n" >>"$WORK/get"
done
created=$(CLUSTERWS_HOME=$home nodels bench 2>/dev/null | wc -l || true)
col() { cut -d' ' -f"$2" "$WORK/$1" | median; }
put=$(col put 1); nosync=$(col nosync 1); get=$(col get 1); raw=$(col raw 1)
printf '%-48s %8s %10s %10s\n' "case (median of $ROUNDS)" "req/s" "daemon" "client" \
  "" "" "CPU us/req" "CPU us/req" \
  "clusterws PUT, durable (group commit)" "$put" "$(col put 2)" "$(col put 3)" \
  "clusterws PUT, fsync a no-op (ceiling)" "$nosync" "$(col nosync 2)" "$(col nosync 3)" \
  "clusterws GET of the same nodes (no write)" "$get" "$(col get 2)" "$(col get 3)" \
  "raw LMDB, one fsync'd commit per write" "$raw" "-" "-"
echo "nodes created: $created (expected $((N * ROUNDS)))"
echo "ceilings: PUT without fsync $(ratio "$nosync" "$raw")x raw, GET $(ratio "$get" "$raw")x raw;" \
  "durable PUT reaches $(ratio "$put" "$nosync") of the PUT ceiling"
# the goals (issue #13): group commit hides the disk (durable PUT vs the same PUT with fsync a
# no-op), and a write costs the daemon little more CPU than a read (the 5x-raw-LMDB goal is
# retired: the run showed it bound by CPU per request, not by commits)
goal "durable-vs-nosync-put" "$(ratio "$put" "$nosync")" ">=" 0.8
goal "daemon-cpu-put-vs-get" "$(ratio "$(col put 2)" "$(col get 2)")" "<=" 1.5
