#!/usr/bin/env bash
source "$(dirname "$0")/common.sh"
home=$WORK/home; pw=benchpw
init_home "$home" "$pw"
mkdef 'node[000001-001000]' groups=compute,all mgt=kvm os=rhels9.4 arch=x86_64 >/dev/null
start_daemon "$home"
url="https://127.0.0.1:$DAEMON_PORT/clusterws/nodes/node000001?userName=root&userPW=$pw"
wrk -t1 -c1 -d8s "$url" > /dev/null &
sleep 1
perf record -e cpu-clock -F 2000 -g -p $DAEMON_PID -o /tmp/perf1.data -- sleep 5 2>&1 | tail -1
wait
