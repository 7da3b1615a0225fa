#!/usr/bin/env bash
# makedns -n of N nodes (issue #29: 10,000 nodes < 10 s as a whole command) against a named of
# our own (foreground, 127.0.0.1, a free port, zones in the work directory): the named.conf
# fragments and zone files, named's reload (SIGHUP), then every A and PTR record in TSIG-signed
# UPDATE batches of 300. Then the re-run with no change (nothing written, nothing sent). xCAT
# measured 462 s for 5,000 nodes (docs/performance.md).
source "$(dirname "$0")/common.sh"
N=${N:-10000}
home=$WORK/home
init_home "$home" benchpw
port=$(free_port)
mkdir -p "$WORK/conf" "$WORK/zones"
: >"$WORK/conf/clusterws.conf"
: >"$WORK/conf/clusterws-options.conf"
cat >"$WORK/named.conf" <<CONF
options {
  directory "$WORK/zones";
  pid-file "$WORK/named.pid";
  listen-on port $port { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  include "$WORK/conf/clusterws-options.conf";
};
controls { };
include "$WORK/conf/clusterws.conf";
CONF
named -g -c "$WORK/named.conf" -u root >"$WORK/named.log" 2>&1 &
NAMED_PID=$!
PIDS+=("$NAMED_PID")
for _ in $(seq 50); do grep -q running "$WORK/named.log" && break; sleep 0.1; done
cat >>"$home/clusterws.conf" <<CONF
dns_conf_dir = $WORK/conf
dns_zone_dir = $WORK/zones
dns_server = 127.0.0.1:$port
dns_key_file = $WORK/conf/clusterws.key
dns_reload_command = kill -HUP $NAMED_PID
CONF
chdef -t site clustersite domain=cluster.test master=10.0.0.1 >/dev/null
mkdef -t network -o net10 net=10.0.0.0 mask=255.255.0.0 >/dev/null
awk -v n="$N" 'BEGIN { for (i = 1; i <= n; i++) {
  printf "node%05d:\n    objtype=node\n    groups=compute\n    ip=10.0.%d.%d\n", i, int((i + 1) / 256), (i + 1) % 256 } }' \
  | mkdef -z >/dev/null
t0=$(now)
makedns -n >"$WORK/first.out"
t1=$(now)
first=$(secs "$t0" "$t1")
t0=$(now)
makedns -n >"$WORK/again.out"
t1=$(now)
again=$(secs "$t0" "$t1")
last=$(printf 'node%05d' "$N")
answer=$(dig @127.0.0.1 -p "$port" +short "$last.cluster.test" A)
ptr=$(dig @127.0.0.1 -p "$port" +short -x "$answer")
echo "makedns -n, $N nodes: ${first} s (then dig $last: $answer, $ptr)"
echo "makedns -n again, no change: ${again} s ($(cat "$WORK/again.out" | tr '\n' ' '))"
goal "makedns-n-${N}" "$first" "<=" 10 s
