#!/usr/bin/env bash
# 4. Noderange vs ClusterShell: expanding node[000001-100000] and folding 100,000 names,
# `nodeset -e/-f` against `clusterctl noderange -e/-f`, whole processes, alternated.
source "$(dirname "$0")/common.sh"
RUNS=${RUNS:-15}
# ClusterShell's nodeset, not clusterws's xCAT nodeset (which build/bin puts first in PATH)
CS_NODESET=${CS_NODESET:-/usr/bin/nodeset}
clusterctl noderange 'node[000001-100000]' | tr ' ' '\n' >"$WORK/names"
wall() { cws-run "$@" 2>&1 >/dev/null | awk '/^wall/ {print $2}'; }
: >"$WORK/ea"; : >"$WORK/eb"; : >"$WORK/fa"; : >"$WORK/fb"
for _ in $(seq "$RUNS"); do
  wall clusterctl noderange 'node[000001-100000]' >>"$WORK/ea"
  wall "$CS_NODESET" -e 'node[000001-100000]' >>"$WORK/eb"
  wall sh -c "clusterctl noderange -f <'$WORK/names'" >>"$WORK/fa"
  wall sh -c "$CS_NODESET -f <'$WORK/names'" >>"$WORK/fb"
done
ea=$(median <"$WORK/ea"); eb=$(median <"$WORK/eb"); fa=$(median <"$WORK/fa"); fb=$(median <"$WORK/fb")
printf '%-36s %12s %12s %8s\n' "case" "clusterws s" "nodeset s" "ratio" \
  "expand node[000001-100000]" "$ea" "$eb" "$(ratio "$eb" "$ea")x" \
  "fold 100,000 names" "$fa" "$fb" "$(ratio "$fb" "$fa")x"
goal "noderange-expand-speedup" "$(ratio "$eb" "$ea")" ">=" 20
goal "noderange-fold-speedup" "$(ratio "$fb" "$fa")" ">=" 20
