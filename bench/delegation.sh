#!/usr/bin/env bash
# Service nodes (issue #31): N node names (10,000) through 4 service nodes over CAF's real
# link on 127.0.0.1 (BASP; the service nodes in a child process, 4 links), whose stub
# transport answers every node at once with 200 bytes, against the same call flat on the
# head's stub transport. The head process is measured alone: its CPU per node, the time to
# the first result, per-node completion p50/p99 (from the call's start), its peak RSS and the
# bytes its link sockets carried (TCP_INFO). docs/performance.md "Service nodes".
source "$(dirname "$0")/common.sh"
N=${N:-10000}
ROUNDS=${ROUNDS:-20}
out=$("$BIN/cws-delegation-link" "$N" "$ROUNDS")
echo "$out"
field() { echo "$out" | awk -v m="$1" -v k="$2" '$1 == m {for (i = 2; i <= NF; i++) {split($i, kv, "="); if (kv[1] == k) print kv[2]}}'; }
printf '%-10s %14s %10s %10s %10s %10s %14s\n' mode "head us/node" "first ms" "p50 ms" "p99 ms" "RSS MiB" "link B/node"
for m in flat delegated; do
  printf '%-10s %14s %10s %10s %10s %10s %14s\n' "$m" "$(field "$m" cpu_us_per_node)" \
    "$(field "$m" first_ms)" "$(field "$m" p50_ms)" "$(field "$m" p99_ms)" \
    "$(field "$m" rss_peak_mib)" "$(field "$m" link_bytes_per_node)"
done
goal "sn-head-cpu-per-node" "$(field delegated cpu_us_per_node)" "<=" 10 us
echo "INFO sn-delegated-first-result $(field delegated first_ms) ms, p99 $(field delegated p99_ms) ms, head RSS $(field delegated rss_peak_mib) MiB, $(field delegated link_bytes_per_node) link bytes/node"
