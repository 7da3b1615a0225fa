#!/usr/bin/env bash
# 3. Scale: a 100,000-node store. GET /nodes, GET of every node's details, DELETE of all in one
# request, and the daemon's peak RSS, all read off the same run.
source "$(dirname "$0")/common.sh"
home=$WORK/home
pw=benchpw
init_home "$home" "$pw"
t0=$(date +%s.%N)
mkdef 'node[000001-100000]' groups=compute,all mgt=kvm os=rhels9.4 arch=x86_64 vmmemory=8192 >/dev/null
t1=$(date +%s.%N)
start_daemon "$home"
base="https://127.0.0.1:$DAEMON_PORT/clusterws"
q="userName=root&userPW=$pw"
c() { curl -s -o "$WORK/out" -w '%{time_total} %{http_code} %{size_download}\n' --cacert "$home/pki/ca-cert.pem" "$@"; }
: >"$WORK/list"; : >"$WORK/all"
for _ in $(seq 5); do c "$base/nodes?$q" >>"$WORK/list"; done
for _ in $(seq "$ROUNDS"); do c "$base/nodes/all?$q" >>"$WORK/all"; done
list=$(cut -d' ' -f1 "$WORK/list" | median)
all=$(cut -d' ' -f1 "$WORK/all" | median)
all_size=$(cut -d' ' -f3 "$WORK/all" | head -1)
del=$(c -X DELETE "$base/nodes/all?$q")
left=$(CLUSTERWS_HOME=$home nodels 2>/dev/null | wc -l || true)
rss=$(rss_mib "$DAEMON_PID")
printf '%-46s %s\n' "mkdef of 100,000 nodes (CLI, one transaction)" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f s", b-a}')" \
  "GET /clusterws/nodes (median of 5)" "$list s" \
  "GET /clusterws/nodes/all ($all_size bytes)" "$all s" \
  "DELETE /clusterws/nodes/all (one request)" "$(cut -d' ' -f1 <<<"$del") s, HTTP $(cut -d' ' -f2 <<<"$del"), $left nodes left" \
  "daemon peak RSS" "$rss MiB"
goal "list-100k-seconds" "$list" "<=" 0.2 s
goal "delete-100k-seconds" "$(cut -d' ' -f1 <<<"$del")" "<=" 2 s
goal "daemon-rss-mib" "$rss" "<=" 200 MiB

# 1,000,000 nodes: GET /nodes/all is streamed in pages (page_objects); the same request to a
# daemon that builds the answer whole (page_objects = 0) is the peer, in the same run.
stop_daemon
big=$WORK/big
init_home "$big" "$pw"
mkdef 'node[0000001-1000000]' groups=compute,all mgt=kvm os=rhels9.4 arch=x86_64 vmmemory=8192 >/dev/null
get_all() { # PAGE_OBJECTS: sets T (median seconds), RSS (daemon peak MiB), SIZE (bytes)
  sed -i '/^page_objects/d' "$big/clusterws.conf"
  echo "page_objects = $1" >>"$big/clusterws.conf"
  start_daemon "$big"
  : >"$WORK/big-all"
  for _ in $(seq "$ROUNDS"); do
    curl -s -o /dev/null -w '%{time_total} %{http_code} %{size_download}\n' \
      --cacert "$big/pki/ca-cert.pem" "https://127.0.0.1:$DAEMON_PORT/clusterws/nodes/all?$q" >>"$WORK/big-all"
  done
  T=$(cut -d' ' -f1 "$WORK/big-all" | median)
  RSS=$(rss_mib "$DAEMON_PID")
  SIZE=$(cut -d' ' -f3 "$WORK/big-all" | head -1)
  stop_daemon
}
get_all 5000
paged_s=$T paged_rss=$RSS size=$SIZE
get_all 0
whole_s=$T whole_rss=$RSS
printf '%-46s %s\n' "GET /nodes/all, 1,000,000 nodes ($size bytes)" \
  "paged $paged_s s, peak RSS $paged_rss MiB; built whole $whole_s s, $whole_rss MiB"
goal "stream-1m-time-vs-whole" "$(ratio "$paged_s" "$whole_s")" "<=" 1.0
goal "stream-1m-rss-mib" "$paged_rss" "<=" 200 MiB
