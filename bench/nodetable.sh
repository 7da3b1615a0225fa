#!/usr/bin/env bash
# The web console's node table (GET /clusterws/nodetable, docs/web.md) at 100,000 nodes: one
# page of 100 rows in name order, sorted by an attribute (every node's value read), the last
# page, and a noderange filter; wall time of each request over TLS (curl, keep-alive off),
# median of ROUNDS. The browser's own numbers (first paint, filter, event) come from the
# browser test (tests/web/nodetable_test.cpp).
source "$(dirname "$0")/common.sh"
N=${N:-100000}
pw=benchpw
home=$WORK/home
init_home "$home" "$pw"
t0=$(now)
mkdef "node[000001-$(printf '%06d' "$N")]" groups=compute,all mgt=ipmi os=rhels9.4 arch=x86_64 >/dev/null
t1=$(now)
chdef 'node[000001-000500]' status=booted >/dev/null
start_daemon "$home"
base="https://127.0.0.1:$DAEMON_PORT/clusterws/nodetable"
auth="userName=root&userPW=$pw"

# time_of QUERY: median seconds of ROUNDS GETs of the table with QUERY
time_of() {
  for _ in $(seq "$ROUNDS"); do
    curl -gs -o /dev/null -w '%{time_total}\n' --cacert "$home/pki/ca-cert.pem" "$base?$1&$auth"
  done | median
}
curl -gs --cacert "$home/pki/ca-cert.pem" "$base?limit=1&$auth" | grep -q "\"total\":$N" \
  || { echo "the table does not hold $N nodes" >&2; exit 1; }
first=$(time_of "attrs=status,groups,mgt&limit=100")
sorted=$(time_of "attrs=status,groups,mgt&sort=status&order=desc&limit=100")
last=$(time_of "attrs=status,groups,mgt&offset=$((N - 100))&limit=100")
range=$(time_of "noderange=node[012000-012999],node0999[00-99]&attrs=status,groups,mgt&limit=100")
regex=$(time_of "noderange=%2Fnode0[0-4].*&attrs=status&sort=status&limit=100")
ms() { awk -v s="$1" 'BEGIN {printf "%.1f", s * 1000}'; }
printf '%-52s %10s\n' "node table at $N nodes (median of $ROUNDS)" "ms"
printf '%-52s %10s\n' "mkdef of the $N nodes (once)" "$(ms "$(secs "$t0" "$t1")")"
printf '%-52s %10s\n' "first page, name order, 3 columns" "$(ms "$first")"
printf '%-52s %10s\n' "first page sorted by status desc (all nodes read)" "$(ms "$sorted")"
printf '%-52s %10s\n' "last page" "$(ms "$last")"
printf '%-52s %10s\n' "noderange of 1,100 nodes" "$(ms "$range")"
printf '%-52s %10s\n' "regex noderange of 50,000 sorted by status" "$(ms "$regex")"
goal nodetable-page-100k "$(ms "$first")" "<=" 300 ms
goal nodetable-sorted-100k "$(ms "$sorted")" "<=" 1000 ms
