#!/usr/bin/env bash
# makedhcp at scale (issue #29): N nodes (default 10,000) with a MAC and an address on one
# network, as whole commands: `makedhcp -n` (the server configuration), `makedhcp -a` (every
# reservation, one dnsmasq hosts file), `makedhcp -a` again (nothing changed: nothing written), `makedhcp -q all`, and the Kea backend's -n and -a (one
# kea-dhcp4.conf of N reservations; Kea not running, so no config-set). xCAT: 456 s for 5,000
# nodes (xcat-core #2024). Reload and restart commands are `true`: the servers are not timed.
source "$(dirname "$0")/common.sh"
N=${N:-10000}
home=$WORK/home
init_home "$home" benchpw
cat >>"$home/clusterws.conf" <<CONF
dnsmasq_conf_dir = $WORK/dnsmasq.d
dhcp_reload_command = true
dhcp_restart_command = true
kea_conf_file = $WORK/kea/kea-dhcp4.conf
kea_control_socket = $WORK/kea/kea.sock
kea_lease_file = $WORK/kea/leases.csv
CONF
chdef -t site domain=cluster.test dhcpinterfaces=eth1 master=10.0.0.1 >/dev/null
mkdef -t network -o prov net=10.0.0.0 mask=255.255.0.0 mgtifname=eth1 \
  dynamicrange=10.0.200.0-10.0.255.254 nameservers=10.0.0.1 >/dev/null
# N nodes in one stanza input: node00001 10.0.0.1+i, MAC 52:54:00:00:hh:ll
awk -v n="$N" 'BEGIN {
  for (i = 1; i <= n; i++) {
    printf "node%05d:\n    objtype=node\n    groups=all,compute\n", i
    printf "    ip=10.0.%d.%d\n", int((i + 1) / 256), (i + 1) % 256
    printf "    mac=52:54:00:00:%02x:%02x\n\n", int(i / 256), i % 256
  } }' | mkdef -z >/dev/null

timed() { # LABEL COMMAND...: the command's wall time appended to $WORK/LABEL
  local label=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  "$@" >/dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", b - a}' >>"$WORK/$label"
}

for _ in $(seq "$ROUNDS"); do
  rm -rf "$WORK/dnsmasq.d" "$WORK/kea"
  mkdir -p "$WORK/kea"
  chdef -t site dhcpbackend=dnsmasq >/dev/null
  timed dn_n makedhcp -n
  timed dn_a makedhcp -a
  timed dn_a2 makedhcp -a
  timed dn_q makedhcp -q all
  chdef -t site dhcpbackend=kea >/dev/null
  timed kea_n makedhcp -n 2>/dev/null
  timed kea_a makedhcp -a 2>/dev/null
done
[[ $(grep -c '^52:' "$WORK/dnsmasq.d/clusterws-dhcp/hosts") -eq $N ]] || echo "warning: not $N dnsmasq reservations" >&2
[[ $(grep -c '"hw-address"' "$WORK/kea/kea-dhcp4.conf") -eq $N ]] || echo "warning: not $N Kea reservations" >&2
printf '%-52s %9s\n' "case ($N nodes)" "wall s"
for c in "dn_n:dnsmasq makedhcp -n" "dn_a:dnsmasq makedhcp -a ($N reservations)" \
  "dn_a2:dnsmasq makedhcp -a again (no change)" "dn_q:dnsmasq makedhcp -q all" \
  "kea_n:kea makedhcp -n" "kea_a:kea makedhcp -a ($N reservations)"; do
  printf '%-52s %9s\n' "${c#*:}" "$(median <"$WORK/${c%%:*}")"
done
goal "makedhcp-n-$N" "$(median <"$WORK/dn_n")" "<=" 2 s
goal "makedhcp-a-$N" "$(median <"$WORK/dn_a")" "<=" 2 s
goal "makedhcp-kea-a-$N" "$(median <"$WORK/kea_a")" "<=" 2 s
