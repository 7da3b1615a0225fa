#!/usr/bin/env bash
# Service nodes over real sshd farms (issue #31: "delegated nodeshell over the sshd farms no
# slower than flat on the same machine"). N nodes (200) in two halves, each half behind its
# own loopback sshd farm (bench/sshfarm.sh) and its own `clusterwsd --service-node`; the
# head (sn_listen on 127.0.0.1) runs nodeshell `true` over all of them delegated (each half
# through its service node), then the same nodes flat from the head (servicenode cleared),
# with the same total fanout. Cold: the first call of each (no pooled connection in the
# process that runs it); warm: the median of ROUNDS calls after it. Wall time of the call,
# the head's CPU, the service nodes' CPU. Everything runs on this one machine, so delegated
# pays the link and the extra processes and gains nothing from more cores: the goal is that
# delegation costs (almost) nothing here. docs/performance.md "Service nodes".
source "$(dirname "$0")/common.sh"
N=${N:-200}
FANOUT=${FANOUT:-64}
ROUNDS=${ROUNDS:-3}
here=$(cd "$(dirname "$0")" && pwd)
half=$((N / 2))
home=$WORK/home
pw=benchpw
init_home "$home" "$pw"
clusterctl sn init >/dev/null
printf 'sn_listen = 127.0.0.1:0\nsn_heartbeat_ms = 500\nsn_dead_after_ms = 3000\n' >>"$home/clusterws.conf"
start_daemon "$home"
SN_PIDS=()
for k in 1 2; do
  port=$(free_port)
  pid=$("$here/sshfarm.sh" start "$WORK/farm$k" "$port")
  PIDS+=("$pid")
  eval "FARM${k}_PID=$pid"
  cat "$home/ssh/root/id_ed25519.pub" >>"$WORK/farm$k/authorized_keys"
  clusterctl sn add "sn$k" --out "$WORK/sn$k" >/dev/null
  mkdir -p "$WORK/sn$k/ssh/root"
  cp -p "$home/ssh/root/id_ed25519" "$home/ssh/root/id_ed25519.pub" "$WORK/sn$k/ssh/root/"
  clusterctl mkdef -t group "farm$k" sshport="$port" servicenode="sn$k" >/dev/null
  first=$(((k - 1) * half + 1))
  last=$((k * half))
  clusterctl mkdef "node[$(printf %04d "$first")-$(printf %04d "$last")]" groups="farm$k,all" \
    ip=127.0.0.1 >/dev/null
  clusterwsd --service-node --home "$WORK/sn$k" >>"$WORK/sn$k.log" 2>&1 &
  SN_PIDS+=($!)
  PIDS+=($!)
done
for _ in $(seq 300); do
  [[ $(clusterctl sn list | grep -c ' registered ') -eq 2 ]] && break
  sleep 0.05
done
[[ $(clusterctl sn list | grep -c ' registered ') -eq 2 ]] || { echo "service nodes did not register" >&2; clusterctl sn list >&2; tail -5 "$WORK"/sn*.log >&2; exit 1; }
range="node[0001-$(printf %04d "$N")]"

sn_cpu() { local t=0 p; for p in "${SN_PIDS[@]}"; do t=$((t + $(cpu_ticks "$p"))); done; echo "$t"; }
sshd_cpu() { echo $(($(tree_ticks "$FARM1_PID") + $(tree_ticks "$FARM2_PID"))); }

# call LABEL: one nodeshell `true` over the range; appends "wall head_cpu sn_cpu sshd_cpu ok"
call() {
  local label=$1 d0 n0 s0 t0 t1 d1 n1 s1 ok
  d0=$(cpu_ticks "$DAEMON_PID"); n0=$(sn_cpu); s0=$(sshd_cpu); t0=$(now)
  curl -gs --cacert "$home/pki/ca-cert.pem" -X POST -H 'Content-Type: application/json' \
    -d '{"command":"true"}' -o "$WORK/out.json" -w '%{http_code}' >"$WORK/out.status" \
    "https://127.0.0.1:$DAEMON_PORT/clusterws/nodes/$range/nodeshell?userName=root&userPW=$pw&format=detail&fanout=$FANOUT" || true
  t1=$(now); d1=$(cpu_ticks "$DAEMON_PID"); n1=$(sn_cpu); s1=$(sshd_cpu)
  ok=$({ grep -o '"rc":0' "$WORK/out.json" || true; } | wc -l)
  if [[ $ok -ne $N ]]; then
    echo "warning: $label: $ok of $N nodes ok (HTTP $(cat "$WORK/out.status")): $(head -c 300 "$WORK/out.json")" >&2
  fi
  awk -v t0="$t0" -v t1="$t1" -v d0="$d0" -v d1="$d1" -v n0="$n0" -v n1="$n1" -v s0="$s0" -v s1="$s1" -v hz="$TICKS" -v ok="$ok" \
    'BEGIN {printf "%.3f %.2f %.2f %.2f %d\n", t1-t0, (d1-d0)/hz, (n1-n0)/hz, (s1-s0)/hz, ok}' >>"$WORK/$label"
}

call delegated_cold
for _ in $(seq "$ROUNDS"); do call delegated_warm; done
clusterctl chdef -t group farm1 servicenode= >/dev/null
clusterctl chdef -t group farm2 servicenode= >/dev/null
call flat_cold
for _ in $(seq "$ROUNDS"); do call flat_warm; done

col() { cut -d' ' -f"$2" "$WORK/$1" | median; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-16s %5s %8s %12s %12s %12s %5s\n' mode N "wall s" "head ms/n" "SNs ms/n" "sshd ms/n" ok
for l in delegated_cold flat_cold delegated_warm flat_warm; do
  printf '%-16s %5s %8s %12s %12s %12s %5s\n' "$l" "$N" "$(col "$l" 1)" \
    "$(awk -v c="$(col "$l" 2)" -v n="$N" 'BEGIN {printf "%.2f", 1000*c/n}')" \
    "$(awk -v c="$(col "$l" 3)" -v n="$N" 'BEGIN {printf "%.2f", 1000*c/n}')" \
    "$(awk -v c="$(col "$l" 4)" -v n="$N" 'BEGIN {printf "%.2f", 1000*c/n}')" \
    "$(cut -d' ' -f5 "$WORK/$l" | sort -n | head -1)"
done
goal "sn-farms-delegated/flat-cold" "$(ratio "$(col delegated_cold 1)" "$(col flat_cold 1)")" "<=" 1.1
goal "sn-farms-delegated/flat-warm" "$(ratio "$(col delegated_warm 1)" "$(col flat_warm 1)")" "<=" 1.1
echo "INFO sn-farms-head-cpu delegated $(col delegated_warm 2) s, flat $(col flat_warm 2) s per warm call of $N nodes"
