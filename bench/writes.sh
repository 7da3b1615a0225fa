#!/usr/bin/env bash
# 2. Durable writes: 10,000 node creates with PUT over 16 keep-alive connections (every reply
# after its data is durable: group commit) against raw LMDB, one fsync'd commit per write.
source "$(dirname "$0")/common.sh"
N=${N:-10000}
home=$WORK/home
pw=benchpw
init_home "$home" "$pw"
start_daemon "$home"

printf '%-44s %12s\n' "case" "writes/s"
: >"$WORK/a"; : >"$WORK/b"
for r in $(seq "$ROUNDS"); do  cws-put-load "$DAEMON_PORT" "$home/pki/ca-cert.pem" "$pw" "$N" 16 "r${r}n" | awk '{print $2}' >>"$WORK/a"
  rm -rf "$WORK/raw"
  cws-lmdb-commits "$WORK/raw" 3000 | awk '{print $2}' >>"$WORK/b"
done
created=$(CLUSTERWS_HOME=$home nodels bench 2>/dev/null | wc -l || true)
a=$(median <"$WORK/a"); b=$(median <"$WORK/b")
printf '%-44s %12s\n' "clusterws PUT, 16 conns, group commit" "$a" "raw LMDB, one fsync'd commit per write" "$b"
echo "nodes created: $created (expected $((N * ROUNDS)))"
goal "durable-writes" "$(ratio "$a" "$b")" ">=" 5
