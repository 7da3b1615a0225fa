#!/usr/bin/env bash
# The node-facing boot listener when a rack powers on (issue #29: 1,000 concurrent
# boot-script requests, p99 < 50 ms): N nodes (default 1,000) armed by one nodeset, then N
# requests at once, one per node (`GET /boot/mac/<mac>`, each on its own connection, as N
# iPXE clients ask), with curl --parallel on loopback. The peer, measured in the same run
# and the same way: nginx serving each node's script as a static file (what a site gets from
# xCAT's per-node files under /tftpboot/xcat/xnba/nodes behind a web server), with a listen
# backlog of 4096 (busybox httpd's 9 and Python's 5 drop SYNs of a burst: seconds of
# retransmits measure the backlog, not the server). ROUNDS bursts each; the latencies are
# curl's time_total per request (connect included), a request not done in 30 s an error.
source "$(dirname "$0")/common.sh"
N=${N:-1000}
ulimit -n 8192 # N client sockets at once, and the servers' ends
home=$WORK/home
init_home "$home" benchpw
port=$(free_port)
cat >>"$home/clusterws.conf" <<CONF
boot_listen = 127.0.0.1:$port
CONF
chdef -t site domain=cluster.test master=127.0.0.1 >/dev/null
mkdef -t osimage -o debian12-x86_64-install-compute imagetype=linux provmethod=install \
  osname=Linux osvers=debian12 osarch=x86_64 profile=compute \
  pkgdir=/usr/lib/debian-installer/images/12/amd64/text >/dev/null
awk -v n="$N" 'BEGIN {
  for (i = 1; i <= n; i++) {
    printf "node%05d:\n    objtype=node\n    groups=all,compute\n", i
    printf "    ip=10.0.%d.%d\n", int((i + 1) / 256), (i + 1) % 256
    printf "    mac=52:54:00:00:%02x:%02x\n", int(i / 256), i % 256
    printf "    provmethod=debian12-x86_64-install-compute\n\n"
  } }' | mkdef -z >/dev/null
nodeset compute osimage >/dev/null
start_daemon "$home"
macs() { awk -v n="$N" 'BEGIN { for (i = 1; i <= n; i++) printf "52:54:00:00:%02x:%02x\n", int(i / 256), i % 256 }'; }

# the peer: each node's script as clusterws renders it, as a static file
peer_port=$(free_port)
mkdir -p "$WORK/www/boot/mac"
first=$(macs | sed -n 1p) # reads all: after `head -1` awk can die of SIGPIPE (141 under pipefail)
curl -sf "http://127.0.0.1:$port/boot/mac/$first" >"$WORK/script" ||
  { echo "the boot listener does not answer /boot/mac/$first" >&2; exit 1; }
while read -r m; do cp "$WORK/script" "$WORK/www/boot/mac/$m"; done < <(macs)
chmod -R a+rX "$WORK"
cat >"$WORK/nginx.conf" <<CONF
worker_processes 2;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log;
daemon off;
events { worker_connections 4096; }
http {
  access_log off;
  server {
    listen 127.0.0.1:$peer_port backlog=4096;
    location / { root $WORK/www; default_type text/plain; }
  }
}
CONF
nginx -c "$WORK/nginx.conf" &
PIDS+=($!)
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$peer_port/boot/mac/$first" && break; sleep 0.05; done

# burst BASE_URL: N requests at once; appends "p50_ms p99_ms max_ms errors" for the round
burst() {
  local cfg=$WORK/urls
  macs | sed "s|^|url = \"$1/boot/mac/|; s|\$|\"\\noutput = /dev/null|" >"$cfg"
  timeout 120 curl -s --no-progress-meter --connect-timeout 10 --max-time 30 --parallel --parallel-immediate --parallel-max "$N" -K "$cfg" \
    -w '%{http_code} %{time_total}\n' >"$WORK/times" || true
  awk '$1 == 200 { print $2 * 1000 }' "$WORK/times" | sort -g >"$WORK/sorted"
  awk -v n="$N" '{ a[NR] = $1 } END {
    if (NR == 0) { printf "nan nan nan %d\n", n; exit }
    printf "%.1f %.1f %.1f %d\n", a[int(NR * 0.5 + 0.5)], a[int(NR * 0.99 + 0.5)], a[NR], n - NR }' \
    "$WORK/sorted"
}

: >"$WORK/ours"
: >"$WORK/peer"
for _ in $(seq "$ROUNDS"); do
  burst "http://127.0.0.1:$port" >>"$WORK/ours"
  burst "http://127.0.0.1:$peer_port" >>"$WORK/peer"
done
col() { awk -v c="$1" '{print $c}' "$2" | median; }
printf '%-44s %9s %9s %9s %7s\n' "case ($N requests at once, median of $ROUNDS)" "p50 ms" "p99 ms" "max ms" "errors" \
  "clusterws boot listener GET /boot/mac/<mac>" "$(col 1 "$WORK/ours")" "$(col 2 "$WORK/ours")" "$(col 3 "$WORK/ours")" "$(col 4 "$WORK/ours")" \
  "nginx, the same script as a static file" "$(col 1 "$WORK/peer")" "$(col 2 "$WORK/peer")" "$(col 3 "$WORK/peer")" "$(col 4 "$WORK/peer")"
errors=$(col 4 "$WORK/ours")
[[ $errors == 0 ]] || echo "INFO boot listener: $errors of $N requests failed in the median round"
goal "boot-listener-1k-burst-p99" "$(col 2 "$WORK/ours")" "<=" 50 " ms"
