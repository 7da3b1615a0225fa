#!/usr/bin/env bash
# 1. HTTPS API vs nginx: GET of one node from a 100,000-node store, against nginx serving the
# same JSON as a static file, both over TLS (same EC certificate) on loopback, wrk keep-alive.
source "$(dirname "$0")/common.sh"
DUR=${DUR:-8}
home=$WORK/home
pw=benchpw
init_home "$home" "$pw"
mkdef 'node[000001-100000]' groups=compute,all mgt=kvm os=rhels9.4 arch=x86_64 >/dev/null
start_daemon "$home"
ours="https://127.0.0.1:$DAEMON_PORT/clusterws/nodes/node000001?userName=root&userPW=$pw"

www=$WORK/www
mkdir -p "$www"
curl -gs --cacert "$home/pki/ca-cert.pem" "$ours" >"$www/node.json"
chmod -R a+rX "$WORK"
np=$(free_port)
cat >"$WORK/nginx.conf" <<CONF
worker_processes 2;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
daemon off;
events { worker_connections 4096; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$np ssl;
    ssl_certificate $home/pki/server-cert.pem;
    ssl_certificate_key $home/pki/server-key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:SSL:10m;
    keepalive_requests 1000000;
    location / { root $www; default_type application/json; }
  }
}
CONF
nginx -c "$WORK/nginx.conf" &
PIDS+=($!)
for _ in $(seq 200); do (echo >"/dev/tcp/127.0.0.1/$np") 2>/dev/null && break; sleep 0.02; done
peer="https://127.0.0.1:$np/node.json"

# run_wrk URL THREADS CONNS [HEADER]: prints "rps p99_ms"
run_wrk() {
  local url=$1 t=$2 c=$3 hdr=${4:-}
  local out
  if [[ -n $hdr ]]; then
    out=$(wrk -t"$t" -c"$c" -d"${DUR}s" --latency -H "$hdr" "$url")
  else
    out=$(wrk -t"$t" -c"$c" -d"${DUR}s" --latency "$url")
  fi
  local rps p99
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v/=1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v*=1000}; print v}' <<<"$out")
  if grep -q "Non-2xx" <<<"$out"; then echo "wrk saw errors: $out" >&2; fi
  echo "$rps $p99"
}

printf '%-34s %12s %10s %12s %10s %8s\n' "case" "clusterws/s" "p99 ms" "nginx/s" "p99 ms" "ratio"
# CASES limits the cases for quick experiments (e.g. CASES="64")
for c in ${CASES:-64 1 256 close}; do
  threads=2 conns=$c hdr=
  [[ $c == 1 ]] && threads=1
  [[ $c == close ]] && conns=16 hdr="Connection: close"
  : >"$WORK/a" ; : >"$WORK/b"
  for _ in $(seq "$ROUNDS"); do
    run_wrk "$ours" "$threads" "$conns" "$hdr" >>"$WORK/a"
    run_wrk "$peer" "$threads" "$conns" "$hdr" >>"$WORK/b"
  done
  a_rps=$(cut -d' ' -f1 "$WORK/a" | median); a_p99=$(cut -d' ' -f2 "$WORK/a" | median)
  b_rps=$(cut -d' ' -f1 "$WORK/b" | median); b_p99=$(cut -d' ' -f2 "$WORK/b" | median)
  label="GET node, $conns conns keep-alive"
  [[ $c == close ]] && label="GET node, new connection each"
  printf '%-34s %12s %10s %12s %10s %8s\n' "$label" "$a_rps" "$a_p99" "$b_rps" "$b_p99" "$(ratio "$a_rps" "$b_rps")x"
  case $c in
    64)
      goal "https-rps-64" "$(ratio "$a_rps" "$b_rps")" ">=" 0.9
      goal "https-p99-64" "$(ratio "$a_p99" "$b_p99")" "<=" 2
      ;;
    1) goal "https-rps-1" "$(ratio "$a_rps" "$b_rps")" ">=" 0.8 ;;
    close) goal "https-new-connection" "$(ratio "$a_rps" "$b_rps")" ">=" 0.8 ;;
  esac
done
echo "daemon peak RSS: $(rss_mib "$DAEMON_PID") MiB"
