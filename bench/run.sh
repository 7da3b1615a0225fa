#!/usr/bin/env bash
# make bench: micro-benchmarks, then every side-by-side comparison. Prints one table per
# comparison and a GOAL line per goal; the whole output also goes to bench/last-run.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${BUILD:-build}
export BUILD
{
  echo "# clusterws benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo
  echo "## micro-benchmarks"
  "$BUILD/bin/clusterws-bench" --benchmark_min_time=0.2 | tee "$BUILD/micro.txt"
  # regex group rows evaluated per node vs the same listing with plain values (issue #17)
  awk '$1 == "list_100k/plain" {p = $4} $1 == "list_100k/regex" {r = $4}
    END {v = r / p; printf "GOAL %-28s %10.2fx  (goal <= 2x)  %s\n", "regex-listing-100k", v, v <= 2 ? "MET" : "NOT MET"}' \
    "$BUILD/micro.txt"
  # one node create at 100,000 nodes vs at 1,000: a per-write cost growing with the cluster
  awk '$1 == "node_create/1000" {s = $4} $1 == "node_create/100000" {l = $4}
    END {v = l / s; printf "GOAL %-28s %10.2fx  (goal <= 2x)  %s\n", "node-create-100k-vs-1k", v, v <= 2 ? "MET" : "NOT MET"}' \
    "$BUILD/micro.txt"
  for s in noderange http_vs_nginx writes events scale nodeshell delegation sn_farms xdcp rpower rvitals ipmi_memory kvm nodestat jobs makehosts makedns makedhcp nodeset sol_hold consoles boot_listener nodetable; do
    echo
    echo "## $s"
    "$here/$s.sh"
  done
} 2>&1 | tee "$here/last-run.txt"
echo
grep -E '^(GOAL|INFO)' "$here/last-run.txt"
