#!/usr/bin/env bash
# 6. nodestat: 1,024 nodes, a quarter of them dead (every probed port drops the SYN: a full
# accept queue that is never accepted from, on 127.0.0.3), the rest up (sshd accepts, the
# other application ports refuse, on 127.0.0.1). The peer is one connect timeout, measured in
# the same run: nodestat of one dead node. The whole range should cost about one deadline,
# not one per dead node. The tool and GET /nodes/all/nodestat.
source "$(dirname "$0")/common.sh"
N=${N:-1024}
DEAD=${DEAD:-256}
TIMEOUT_MS=${TIMEOUT_MS:-4000}
home=$WORK/home
pw=benchpw
init_home "$home" "$pw"
dead_ssh=$(free_port)
apps=()
for _ in 1 2 3 4 5; do apps+=("$(free_port)"); done
cws-probe-targets 127.0.0.1 127.0.0.3 "$dead_ssh" "${apps[@]}" >"$WORK/targets" &
PIDS+=("$!")
for _ in $(seq 500); do grep -q ready "$WORK/targets" 2>/dev/null && break; sleep 0.01; done
grep -q ready "$WORK/targets" || { echo "cws-probe-targets did not start" >&2; exit 1; }
open_port=$(head -1 "$WORK/targets")
cat >>"$home/clusterws.conf" <<CONF
nodestat_timeout_ms = $TIMEOUT_MS
nodestat_ports = https:${apps[0]},pbs:${apps[1]},xend:${apps[2]},rdp:${apps[3]},msrpc:${apps[4]}
CONF
live=$((N - DEAD))
mkdef -t group live sshport="$open_port" >/dev/null
mkdef -t group dead sshport="$dead_ssh" >/dev/null
mkdef "node[0001-$(printf %04d "$live")]" groups=live,all ip=127.0.0.1 >/dev/null
mkdef "dead[001-$(printf %03d "$DEAD")]" groups=dead,all ip=127.0.0.3 >/dev/null

# tool LABEL NODERANGE EXPECTED_LINES: appends the wall time of `nodestat NODERANGE`
tool() {
  local label=$1 nr=$2 want=$3 t got
  t=$(cws-run nodestat "$nr" 2>&1 >"$WORK/out" | awk '/^wall/ {print $2}')
  got=$(grep -c ': sshd$\|: noping$' "$WORK/out" || true)
  [[ $got -eq $want ]] || echo "warning: nodestat $nr: $got of $want nodes as expected" >&2
  echo "$t" >>"$WORK/$label"
}

# rest LABEL NODERANGE EXPECTED: the same over GET /nodes/{nr}/nodestat
rest() {
  local label=$1 nr=$2 want=$3 t0 t1 got
  t0=$(date +%s.%N)
  curl -gs --cacert "$home/pki/ca-cert.pem" -o "$WORK/rest.json" \
    "https://127.0.0.1:$DAEMON_PORT/clusterws/nodes/$nr/nodestat?userName=root&userPW=$pw" || true
  t1=$(date +%s.%N)
  got=$({ grep -o '"nodestat":"\(sshd\|noping\)"' "$WORK/rest.json" || true; } | wc -l)
  [[ $got -eq $want ]] || echo "warning: GET $nr/nodestat: $got of $want nodes as expected" >&2
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}' >>"$WORK/$label"
}

start_daemon "$home"
for _ in $(seq "$ROUNDS"); do
  tool one dead001 1
  tool all all "$N"
  rest rest_one dead001 1
  rest rest_all all "$N"
done
stop_daemon
printf '%-40s %9s\n' "case (nodestat_timeout_ms = $TIMEOUT_MS)" "wall s"
for c in "one:nodestat, 1 dead node" "all:nodestat, $N nodes ($DEAD dead)" \
  "rest_one:GET nodestat, 1 dead node" "rest_all:GET nodestat, $N nodes ($DEAD dead)"; do
  printf '%-40s %9s\n' "${c#*:}" "$(median <"$WORK/${c%%:*}")"
done
goal "nodestat-$N-$DEAD-dead" "$(ratio "$(median <"$WORK/all")" "$(median <"$WORK/one")")" "<=" 1.5
goal "nodestat-rest-$N-$DEAD-dead" \
  "$(ratio "$(median <"$WORK/rest_all")" "$(median <"$WORK/rest_one")")" "<=" 1.5
