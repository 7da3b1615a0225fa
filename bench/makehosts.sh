#!/usr/bin/env bash
# makehosts at 10,000 nodes (issue #29: < 1 s as a whole command). Each node has an address,
# a hostnames alias, a BMC in otherinterfaces and an ib0 in nics, so the file gets 30,000
# node lines beside 100 foreign ones. xCAT's own measurement: 202 s for 5,000 nodes
# (xcat-core #2024; docs/performance.md). Timed: the whole tool, on the file it wrote
# before (every line replaced in place), from scratch (-n), and --dry-run (render + diff).
source "$(dirname "$0")/common.sh"
N=${N:-10000}
home=$WORK/home
init_home "$home" benchpw
echo "hosts_file = $WORK/hosts" >>"$home/clusterws.conf"
chdef -t site clustersite domain=cluster.local >/dev/null
mkdef -t network ib net=10.128.0.0 mask=255.255.0.0 domain=ib.cluster.local >/dev/null
awk -v n="$N" 'BEGIN {
  for (i = 1; i <= n; i++) {
    a = int((i - 1) / 250); b = (i - 1) % 250 + 1
    printf "n%05d:\n    objtype=node\n    groups=compute,all\n    ip=10.0.%d.%d\n", i, a, b
    printf "    hostnames=c%05d\n    otherinterfaces=-bmc:10.64.%d.%d\n", i, a, b
    printf "    nicips.ib0=10.128.%d.%d\n\n", a, b
  }
}' >"$WORK/nodes.stanza"
mkdef -z <"$WORK/nodes.stanza" >/dev/null
{
  echo "127.0.0.1 localhost"
  for i in $(seq 100); do echo "192.168.200.$i foreign$i"; done
} >"$WORK/hosts"
makehosts >/dev/null # the first run appends every line
lines=$(wc -l <"$WORK/hosts")
[[ $lines -eq $((3 * N + 101)) ]] || { echo "makehosts wrote $lines lines" >&2; exit 1; }

time_it() { # seconds of one run of "$@"
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >/dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}'
}
: >"$WORK/again"; : >"$WORK/new"; : >"$WORK/dry"
for _ in $(seq "$ROUNDS"); do
  time_it makehosts >>"$WORK/again"
  time_it makehosts -n >>"$WORK/new"
  time_it makehosts --dry-run >>"$WORK/dry"
done
again=$(median <"$WORK/again")
printf '%-44s %8s s\n' "makehosts, $N nodes, file already written" "$again"
printf '%-44s %8s s\n' "makehosts -n, $N nodes" "$(median <"$WORK/new")"
printf '%-44s %8s s\n' "makehosts --dry-run, $N nodes" "$(median <"$WORK/dry")"
goal "makehosts-$N" "$again" "<=" 1 s
# xCAT: 202 s for 5,000 nodes, linear at best: 404 s for 10,000
echo "INFO makehosts-$N vs xCAT's 202 s for 5,000 nodes: $(ratio 202 "$again")x faster at twice the nodes"
