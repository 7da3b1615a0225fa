#!/usr/bin/env bash
# make test-e2e: a QEMU VM network-boots from clusterws (docs/provisioning.md, "End-to-end
# test"; issue #29's end-to-end proof).
#
# In a network namespace of its own (`cws-e2e-<pid>-s`: a bridge br0 with 10.99.0.1/24 and a
# ULA for router advertisements, a tap for QEMU, a veth to a second namespace
# `cws-e2e-<pid>-c` that plays "another machine on the provisioning network"), with a temp
# home: clusterwsd whose boot listener (`boot_listen`) is 10.99.0.1:8080 inside the
# namespace, nodes and the Debian 12 osimage defined with mkdef as an xCAT site would,
# `makedhcp -n` and `makedhcp -a`, dnsmasq started on the configuration makedhcp wrote (plus
# `enable-ra`: without router advertisements iPXE waits 13 s for IPv6), `nodeset <node>
# osimage`, then QEMU (TCG, BIOS, the iPXE ROM of ipxe-qemu, serial to a log file) boots:
#
#   1. mini:      a ~1.5 MB busybox initrd (built here) as the initrd of a second osimage (a
#                 pkgdir tree in the temp dir), on node02 with mgt=kvm: a libvirtd and
#                 virtlogd of this test's own (session mode, as a user the test creates and
#                 removes, inside the namespace) hold a diskless domain that network-boots
#                 from a tap of that user's on br0, and `rinstall node02 osimage=...` boots it:
#                 DHCP, then the status callbacks installing, installed, booted, next with the
#                 token from the kernel command line (then one more booted, refused: the token
#                 ended), then poweroff (~15 s); the node reads netbooting, installing,
#                 installed, booted, its state is boot and `rpower stat` reads off.
#   2. installer: Debian's netboot installer (debian-installer-12-netboot-amd64): kernel,
#                 initrd, the preseed fetched with the token, its early command calling back
#                 `installing` (~65 s); the VM is then stopped by its pid.
#   3. forgery:   callbacks from the other namespace with no token, a wrong token and another
#                 node's token change nothing; as many bad tokens as install_bad_token_limit
#                 mark the node failed.
#   4. deadline:  a node that fetched its kernel and nothing more reads `failed` after the
#                 stage deadline (clusterwsd restarted with a small install_deadline_installing).
#
# Every process is stopped by its pid, both namespaces and the temp directory go on any exit
# (trap); CLUSTERWS_E2E_KEEP=1 keeps the directory for a look at the logs. The boot listener
# is probed first: without it the test reports what it could not reach and stops before
# the boots (exit 0 with "PENDING", exit 1 under CLUSTERWS_E2E_STRICT=1).
#   pxe_boot_test.sh BUILD_DIR
set -euo pipefail

t0=$(date +%s.%N)
bin=$(cd "${1:?usage: pxe_boot_test.sh BUILD_DIR}" && pwd)/bin
src=$(cd "$(dirname "$0")/../.." && pwd) # the shipped templates: share/install
di=/usr/lib/debian-installer/images/12/amd64/text
srv=10.99.0.1
port=8080
mac1=52:54:00:e2:e0:11 # node01: the Debian installer
mac2=52:54:00:e2:e0:12 # node02: mgt=kvm, the busybox initrd through rinstall and libvirt
mac3=52:54:00:e2:e0:13 # node03: never boots; its fetches are made by hand (deadline)
deadline_s=8           # install_deadline_installing of the deadline part (seconds)
bad_token_limit=5      # install_bad_token_limit

E2E_NAME="test-e2e"
source "$(dirname "$0")/common.sh"

[[ $(id -u) -eq 0 ]] || { say "SKIP: needs root (network namespaces, tap)"; exit 77; }
for tool in ip nsenter qemu-system-x86_64 dnsmasq busybox curl zcat gzip timeout python3 \
  libvirtd virtlogd virsh useradd userdel; do
  command -v $tool >/dev/null || die "$tool is not installed (scripts/bootstrap installs it)"
done
[[ -f $di/debian-installer/amd64/linux && -f $di/debian-installer/amd64/initrd.gz ]] ||
  die "no $di (package debian-installer-12-netboot-amd64)"
[[ -f /usr/lib/ipxe/qemu/efi-virtio.rom ]] || die "no iPXE ROM (package ipxe-qemu)"
[[ -x $bin/clusterwsd && -x $bin/nodeset ]] || die "no $bin/clusterwsd (make build)"

# -- everything this run owns, gone on any exit ------------------------------------------
run=$(mktemp -d /tmp/cws-e2e.XXXXXX)
ns=cws-e2e-$$-s
cns=cws-e2e-$$-c
home=$run/home
daemon_pid=
dnsmasq_pid=
poller_pid=
# node02 (mgt=kvm, part 1): a user of its own running libvirtd and virtlogd in session mode, their
# state under $lv (XDG_RUNTIME_DIR, XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME, HOME)
lv=$run/lv
lv_user=cwse2e$$
lv_uri="qemu+unix:///session?socket=$lv/run/libvirt/libvirt-sock"
lv_user_made=
libvirtd_pid=
virtlogd_pid=
show_logs() {
  show_tails "$run"/serial-*.log "$lv/serial-mini.log" "$home/clusterwsd.log" "$run/dnsmasq.log" \
    "$lv/libvirtd.log" "$lv/cache/libvirt/qemu/log/node02.log"
}
# kvm_teardown: the domain, its QEMU, libvirtd, virtlogd, then the user (once nothing runs as it)
kvm_teardown() {
  if [[ -n $libvirtd_pid ]] && kill -0 "$libvirtd_pid" 2>/dev/null; then
    virsh -c "$lv_uri" destroy node02 >/dev/null 2>&1 || true
  fi
  [[ -s $lv/run/libvirt/qemu/run/node02.pid ]] && stop_pid "$(cat "$lv/run/libvirt/qemu/run/node02.pid")"
  local p
  for p in $libvirtd_pid $virtlogd_pid; do # reaped: a zombie still counts as the user's
    stop_pid "$p"
    wait "$p" 2>/dev/null || true
  done
  libvirtd_pid=
  virtlogd_pid=
  if [[ -n $lv_user_made ]]; then
    for _ in $(seq 20); do # /etc/passwd may be locked a moment by another test's useradd
      userdel "$lv_user" 2>/dev/null && break
      sleep 0.5
    done
    id "$lv_user" >/dev/null 2>&1 && echo "test-e2e: could not remove user $lv_user" >&2
    lv_user_made=
  fi
  return 0
}
cleanup() {
  local rc=$?
  set +e
  [[ -f $run/qemu.pid ]] && stop_pid "$(cat "$run/qemu.pid")"
  stop_pid "$poller_pid"
  kvm_teardown
  stop_pid "$dnsmasq_pid"
  [[ -f $run/dnsmasq.pid ]] && stop_pid "$(cat "$run/dnsmasq.pid")"
  stop_pid "$daemon_pid"
  ip netns del "$cns" 2>/dev/null
  ip netns del "$ns" 2>/dev/null
  ((rc != 0)) && show_logs
  if [[ ${CLUSTERWS_E2E_KEEP:-0} == 1 ]]; then
    echo "test-e2e: kept $run"
  else
    rm -rf "$run"
  fi
  echo "test-e2e: $(since "$t0") s in all (exit $rc)"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

tool() { PATH=$bin:$PATH CLUSTERWS_HOME=$home "$@"; }
# `"${in_ns[@]}" cmd &`: nsenter runs cmd itself (no fork), so $! is cmd's pid (a shell
# function or `ip netns exec` would put a process between)
in_ns=(nsenter --net="/run/netns/$ns" --)
in_client() { ip netns exec "$cns" "$@"; }
status_of() { tool nodels "$1" nodelist.status 2>/dev/null | sed -n "s/^$1: //p"; }

# -- the network --------------------------------------------------------------------------
ip netns add "$ns"
ip netns add "$cns"
ip -n "$ns" link set lo up
ip -n "$cns" link set lo up
ip -n "$ns" link add br0 type bridge stp_state 0 forward_delay 0 # no STP: no 15-30 s stall
ip -n "$ns" addr add $srv/24 dev br0
ip -n "$ns" addr add fd99::1/64 dev br0 nodad # for the router advertisements only
ip -n "$ns" link set br0 up
ip -n "$ns" tuntap add dev tap0 mode tap
ip -n "$ns" link set tap0 master br0 up
ip link add e2e0 netns "$ns" type veth peer name e2e1 netns "$cns"
ip -n "$ns" link set e2e0 master br0 up
ip -n "$cns" addr add 10.99.0.50/24 dev e2e1
ip -n "$cns" link set e2e1 up
say "namespaces $ns and $cns"

# -- clusterws: home, settings, definitions -------------------------------------------------
mkdir -p "$run/dnsmasq.d" "$run/tftp"
tool clusterctl init --no-networks --admin-password e2e-admin-pw >/dev/null
listener=yes
grep -q '^#\? *boot_listen *=' "$home/clusterws.conf" || listener=no
{
  echo "dnsmasq_conf_dir = $run/dnsmasq.d"
  echo "tftp_root = $run/tftp"
  echo "dhcp_reload_command = if [ -f $run/dnsmasq.pid ]; then kill -HUP \$(cat $run/dnsmasq.pid); fi"
  echo "dhcp_restart_command = true"
  if [[ $listener == yes ]]; then
    echo "boot_listen = $srv:$port"
    echo "install_template_dir = $src/share/install"
    echo "install_bad_token_limit = $bad_token_limit"
    echo "install_deadline_check_s = 1"
  fi
} >>"$home/clusterws.conf"

tool chdef -t site domain=cluster.test dhcpinterfaces=br0 master=$srv >/dev/null
# the nodes' root password, which the preseed carries as a SHA-512 crypt
tool chtab key=system passwd.username=root passwd.password=e2e-root-pw >/dev/null
tool mkdef -t network -o prov net=10.99.0.0 mask=255.255.255.0 mgtifname=br0 \
  dynamicrange=10.99.0.100-10.99.0.149 >/dev/null
tool mkdef -t osimage -o debian12-x86_64-install-compute imagetype=linux provmethod=install \
  osname=Linux osvers=debian12 osarch=x86_64 profile=compute pkgdir=$di >/dev/null

# the busybox initrd, served as a second osimage's installer tree (pkgdir)
build_mini() {
  local w=$run/mini-build tree=$run/mini-tree/debian-installer/amd64 m l a
  mkdir -p $w/di $w/root/{bin,proc,sys,dev,tmp,lib/modules,usr/share/udhcpc} "$tree"
  (cd $w/di && zcat $di/debian-installer/amd64/initrd.gz | busybox cpio -id 'lib/modules/*' 2>/dev/null)
  m=$(echo $w/di/lib/modules/*/kernel)
  for l in drivers/virtio/virtio drivers/virtio/virtio_ring drivers/virtio/virtio_pci_modern_dev \
    drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci net/core/failover \
    drivers/net/net_failover drivers/net/virtio_net; do
    if [[ -f $m/$l.ko ]]; then
      cp "$m/$l.ko" $w/root/lib/modules/
      basename $l >>$w/root/lib/modules/order
    fi
  done
  # Debian's busybox is dynamic: its libraries come along
  cp /bin/busybox $w/root/bin/
  for l in $(ldd /bin/busybox | grep -o '/lib[^ ]*'); do
    mkdir -p "$w/root$(dirname "$l")"
    cp -L "$l" "$w/root$l"
  done
  for a in sh mount ip udhcpc wget cat sleep insmod poweroff sed; do ln -s busybox $w/root/bin/$a; done
  cat >$w/root/usr/share/udhcpc/default.script <<'EOF'
#!/bin/sh
case "$1" in bound|renew)
  ip addr flush dev "$interface"; ip addr add "$ip/${mask:-24}" dev "$interface"
  echo "IP=$ip" > /tmp/dhcp.env;;
esac
EOF
  # The status URL is the preseed URL of the kernel command line (url=...) with /preseed
  # replaced: http://H/boot/node/N/preseed?token=T -> http://H/boot/node/N/status
  cat >$w/root/init <<'EOF'
#!/bin/sh
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
[ -c /dev/ttyS0 ] && exec >/dev/ttyS0 2>&1
for m in $(cat /lib/modules/order); do insmod /lib/modules/$m.ko 2>/dev/null; done
IF=
for i in 1 2 3 4 5 6 7 8 9 10; do
  for d in /sys/class/net/*; do [ "${d##*/}" != lo ] && IF=${d##*/}; done
  [ -n "$IF" ] && break; sleep 0.2
done
ip link set lo up; ip link set "$IF" up
udhcpc -i "$IF" -s /usr/share/udhcpc/default.script -q -n -t 10 -T 1 >/dev/null 2>&1
[ -f /tmp/dhcp.env ] && . /tmp/dhcp.env
echo "cws-mini: dhcp $IP on $IF"
URL=; for a in $(cat /proc/cmdline); do case $a in url=*) URL=${a#url=};; esac; done
BASE=${URL%%/preseed*}; TOKEN=${URL##*token=}
[ "$TOKEN" = "$URL" ] && TOKEN=
# installing, installed, booted; then next (the chain leaves install: the token ends), so
# the last booted is refused
for s in installing installed booted next booted; do
  if wget -q -O /dev/null "$BASE/status?state=$s&token=$TOKEN"; then r=ok; else r=refused; fi
  echo "cws-mini: status $s $r"
  sleep 1
done
echo "cws-mini: poweroff"
poweroff -f
EOF
  chmod +x $w/root/init $w/root/usr/share/udhcpc/default.script
  (cd $w/root && find . | busybox cpio -o -H newc 2>/dev/null | gzip -6) >"$tree/initrd.gz"
  cp $di/debian-installer/amd64/linux "$tree/linux"
  rm -rf $w
}
build_mini
say "busybox initrd: $(stat -c %s "$run/mini-tree/debian-installer/amd64/initrd.gz") bytes"
tool mkdef -t osimage -o debian12-x86_64-install-mini imagetype=linux provmethod=install \
  osname=Linux osvers=debian12 osarch=x86_64 profile=compute pkgdir=$run/mini-tree >/dev/null

tool mkdef node01 groups=all,compute mac=$mac1 ip=10.99.0.11 arch=x86_64 netboot=xnba \
  provmethod=debian12-x86_64-install-compute >/dev/null
# a virtual machine on the test's own libvirtd (part 1): a full URI is used as it is
tool mkdef node02 groups=all,compute mac=$mac2 ip=10.99.0.12 arch=x86_64 netboot=xnba \
  provmethod=debian12-x86_64-install-mini mgt=kvm "vmhost=$lv_uri" >/dev/null
tool mkdef node03 groups=all,compute mac=$mac3 ip=10.99.0.13 arch=x86_64 netboot=xnba \
  provmethod=debian12-x86_64-install-compute >/dev/null

# -- clusterwsd and dnsmasq inside the namespace ---------------------------------------------
start_daemon() {
  rm -f "$run/port"
  "${in_ns[@]}" "$bin/clusterwsd" --home "$home" --listen 127.0.0.1:0 --port-file "$run/port" \
    >>"$home/clusterwsd.log" 2>&1 &
  daemon_pid=$!
  for _ in $(seq 300); do
    [[ -s $run/port ]] && break
    kill -0 $daemon_pid 2>/dev/null || die "clusterwsd exited at start"
    sleep 0.1
  done
  [[ -s $run/port ]] || die "clusterwsd did not start listening"
}
start_daemon
say "clusterwsd pid $daemon_pid (boot listener: $listener)"

out=$(tool makedhcp -n 2>&1) || die "makedhcp -n: $out"
out=$(tool makedhcp -a 2>&1) || die "makedhcp -a: $out"
grep -q "^$mac1,10.99.0.11,node01" "$run/dnsmasq.d/clusterws-dhcp/hosts" ||
  die "makedhcp -a wrote no reservation for node01"
"${in_ns[@]}" dnsmasq -k --port=0 --user=root --conf-file="$run/dnsmasq.d/clusterws-dhcp.conf" \
  --pid-file="$run/dnsmasq.pid" --dhcp-leasefile="$run/dnsmasq.leases" --log-dhcp \
  --log-facility="$run/dnsmasq.log" --enable-ra --dhcp-range=fd99::,ra-only \
  >"$run/dnsmasq.out" 2>&1 &
dnsmasq_pid=$!
for _ in $(seq 100); do
  [[ -s $run/dnsmasq.pid ]] && break
  kill -0 $dnsmasq_pid 2>/dev/null || die "dnsmasq exited at start: $(cat "$run/dnsmasq.out")"
  sleep 0.05
done
say "dnsmasq pid $dnsmasq_pid on makedhcp's configuration"

# -- DHCP as iPXE sees it, from the other namespace with node03's MAC ------------------------
cat >"$run/udhcpc.sh" <<EOF
#!/bin/sh
[ "\$1" = bound ] && env | grep -E '^(ip|hostname|bootfile|boot_file)=' | sort > $run/udhcpc.env
exit 0
EOF
chmod +x "$run/udhcpc.sh"
ip -n "$cns" link set e2e1 down
ip -n "$cns" link set e2e1 address $mac3 up
in_client busybox udhcpc -i e2e1 -s "$run/udhcpc.sh" -n -q -t 5 -T 1 -O bootfile -x 0xaf:0101 \
  >/dev/null 2>&1 || true
boot_url=$(sed -n 's/^bootfile=//p' "$run/udhcpc.env" 2>/dev/null)
grep -q '^ip=10.99.0.13$' "$run/udhcpc.env" 2>/dev/null || fail "node03's MAC got no 10.99.0.13"
[[ $boot_url == http://*/boot/ipxe ]] || fail "an iPXE client is not told /boot/ipxe: '$boot_url'"
say "DHCP: node03's MAC gets 10.99.0.13 and $boot_url"

# -- the boot listener, or why it cannot be reached -------------------------------------------
code=$(in_client curl -s -o "$run/ipxe.txt" -w '%{http_code}' --max-time 5 \
  "http://$srv:$port/boot/ipxe" || true)
if [[ $listener == no || $code != 200 ]]; then
  say "PENDING: the boot listener is not there (setting boot_listen known: $listener; GET http://$srv:$port/boot/ipxe answered '${code:-nothing}')"
  # what can be shown without it: the VM's iPXE gets its lease and asks for /boot/ipxe
  tool nodeset node01 osimage >/dev/null 2>&1 || true
  qemu_start=$(date +%s.%N)
  "${in_ns[@]}" timeout 60 qemu-system-x86_64 -machine pc,accel=tcg -m 256 -smp 1 -nographic \
    -monitor none -serial file:"$run/serial-pending.log" -boot n -no-reboot \
    -netdev tap,id=n0,ifname=tap0,script=no,downscript=no \
    -device virtio-net-pci,netdev=n0,mac=$mac1 -pidfile "$run/qemu.pid" >"$run/qemu.out" 2>&1 &
  qpid=$!
  seen=
  for _ in $(seq 120); do
    if grep -aq 'boot/ipxe' "$run/serial-pending.log" 2>/dev/null; then
      seen=yes
      sleep 3 # the failure line after it
      break
    fi
    sleep 0.5
  done
  stop_pid "$(cat "$run/qemu.pid" 2>/dev/null)"
  wait $qpid 2>/dev/null || true
  if [[ -n $seen ]]; then
    say "VM: iPXE got its lease and asked for /boot/ipxe after $(since "$qemu_start") s:"
    grep -a -m3 -E 'boot/ipxe|Connection|Could not' "$run/serial-pending.log" | tr -d '\r' |
      sed 's/^/    /'
  else
    fail "the VM's iPXE never asked for /boot/ipxe (serial log: $run/serial-pending.log)"
  fi
  ((failures == 0)) || exit 1
  [[ ${CLUSTERWS_E2E_STRICT:-0} == 1 ]] && die "PENDING under CLUSTERWS_E2E_STRICT=1"
  say "PENDING: stopped before the boots (no boot listener to boot from)"
  exit 0
fi
say "boot listener answers /boot/ipxe"

# -- status watcher: every change of a node's nodelist.status, with its time --------------------
watch_status() { # watch_status NODE FILE START
  local last="" now
  while :; do
    now=$(status_of "$1")
    if [[ $now != "$last" ]]; then
      echo "$(since "$3") $now" >>"$2"
      last=$now
    fi
    sleep 0.3
  done
}

# http_requests PCAP START: "<s after START> <request line>" for each HTTP request in a
# capture of the VM's NIC (QEMU's filter-dump: the ground truth of what the VM asked)
http_requests() {
  python3 - "$1" "$2" <<'PY'
import re, struct, sys
try:
    data = open(sys.argv[1], "rb").read()
except OSError:
    data = b""
start, off = float(sys.argv[2]), 24
while off + 16 <= len(data):
    sec, usec, incl, _ = struct.unpack_from("<IIII", data, off)
    packet = data[off + 16:off + 16 + incl]
    off += 16 + incl
    for m in re.finditer(rb"(GET|POST) (/[^ \r\n]*) HTTP/1\.[01]", packet):
        path = re.sub(rb"token=[0-9A-Za-z_-]+", b"token=...", m.group(2)).decode(errors="replace")
        print("%.1f %s %s" % (sec + usec / 1e6 - start, m.group(1).decode(), path))
PY
}

# boot_vm LABEL MAC MEM LIMIT STOP_REGEX NODE: QEMU in the namespace until it powers off, the
# VM's HTTP requests match STOP_REGEX (then stopped by pid, 1 s later), or LIMIT seconds pass.
boot_vm() {
  local label=$1 vmac=$2 mem=$3 limit=$4 stop_on=$5 node=$6 qpid start
  rm -f "$run/qemu.pid"
  start=$(date +%s.%N)
  : >"$run/status-$label.log"
  watch_status "$node" "$run/status-$label.log" "$start" &
  poller_pid=$!
  "${in_ns[@]}" timeout "$limit" qemu-system-x86_64 -machine pc,accel=tcg -m "$mem" -smp 1 -nographic \
    -monitor none -serial file:"$run/serial-$label.log" -boot n -no-reboot \
    -netdev tap,id=n0,ifname=tap0,script=no,downscript=no \
    -device virtio-net-pci,netdev=n0,mac="$vmac" -pidfile "$run/qemu.pid" \
    -object filter-dump,id=f0,netdev=n0,file="$run/vm-$label.pcap" >"$run/qemu-$label.out" 2>&1 &
  qpid=$!
  while kill -0 $qpid 2>/dev/null; do
    if [[ -n $stop_on ]] && http_requests "$run/vm-$label.pcap" "$start" | grep -qE "$stop_on"; then
      sleep 1
      stop_pid "$(cat "$run/qemu.pid" 2>/dev/null)"
    fi
    sleep 0.5
  done
  wait $qpid 2>/dev/null || true
  report_vm "$label" "$node" "$start" "$run/vm-$label.pcap"
}

# report_vm LABEL NODE START PCAP: once the VM is gone, the watcher stopped, then the node's
# statuses and the VM's HTTP requests printed (and kept in $run/http-LABEL.log)
report_vm() {
  local label=$1 node=$2 start=$3 pcap=$4
  sleep 0.6 # the watcher's last look
  stop_pid "$poller_pid"
  poller_pid=
  say "VM $label: $(since "$start") s; $node's status over time (s after the VM's start):"
  sed 's/^/    /' "$run/status-$label.log"
  # what the VM asked over HTTP, from the capture of its NIC (the ground truth)
  http_requests "$pcap" "$start" >"$run/http-$label.log"
  echo "    its HTTP requests (s after the VM's start):"
  cut -c1-110 "$run/http-$label.log" | sed 's/^/    /'
}

# stages STATUS_LOG WORD...: true if the words appear in this order among the statuses
in_order() {
  local log=$1 w n=0
  shift
  for w in "$@"; do
    n=$(awk -v w="$w" -v after="$n" 'NR > after && $2 == w { print NR; exit }' "$log")
    [[ -n $n ]] || return 1
  done
}

# -- 1. the busybox initrd on a mgt=kvm node, through rinstall: the whole state machine in ~15 s --
# As root, libvirtd shares /run/libvirt and /var/lib/libvirt/qemu with any other libvirtd on
# the machine: here it runs in session mode as a user of the test's own, its state in $lv,
# started inside the namespace (its QEMU opens the tap there), stopped by its pid.
mini_start=$(date +%s.%N)
for _ in $(seq 20); do # /etc/passwd may be locked a moment by another test's useradd
  useradd --system --no-create-home --home-dir "$lv/home" --shell /usr/sbin/nologin \
    --user-group "$lv_user" 2>"$run/useradd.err" && lv_user_made=yes && break
  sleep 0.5
done
[[ -n $lv_user_made ]] || die "useradd $lv_user: $(cat "$run/useradd.err")"
chmod 711 "$run" # the user reaches $lv, nothing else of the run's
mkdir -p "$lv"/{run,config/libvirt,data,cache,home}
chmod 700 "$lv/run"
echo "log_outputs = \"3:file:$lv/libvirtd.log\"" >"$lv/config/libvirt/libvirtd.conf"
# no AppArmor profile or relabelling for a session QEMU (virt-aa-helper needs root)
echo 'security_driver = "none"' >"$lv/config/libvirt/qemu.conf"
chown -R "$lv_user:$lv_user" "$lv"
# the user's tap (session libvirt cannot make one: managed='no' opens this one)
ip -n "$ns" tuntap add dev tapkvm mode tap user "$lv_user"
ip -n "$ns" link set tapkvm master br0 up
as_lv=(nsenter --net="/run/netns/$ns" -S "$(id -u "$lv_user")" -G "$(id -g "$lv_user")" --
  env -i HOME="$lv/home" XDG_RUNTIME_DIR="$lv/run" XDG_CONFIG_HOME="$lv/config"
  XDG_DATA_HOME="$lv/data" XDG_CACHE_HOME="$lv/cache" PATH=/usr/sbin:/usr/bin:/sbin:/bin)
"${as_lv[@]}" virtlogd >"$run/virtlogd.out" 2>&1 &
virtlogd_pid=$!
"${as_lv[@]}" libvirtd >"$run/libvirtd.out" 2>&1 &
libvirtd_pid=$!
for _ in $(seq 300); do
  virsh -c "$lv_uri" version >/dev/null 2>&1 && break
  kill -0 $libvirtd_pid 2>/dev/null || die "libvirtd exited at start: $(cat "$run/libvirtd.out")"
  sleep 0.1
done
virsh -c "$lv_uri" version >/dev/null 2>&1 || die "libvirtd did not answer on $lv_uri"
# a diskless domain that boots from the network, its NIC on the tap with node02's MAC, ACPI for
# the guest's power off (without it `poweroff -f` halts and the domain stays running); QEMU's
# capture of the NIC (libvirt names its netdev hostnet0) as for the other VMs
cat >"$lv/node02.xml" <<EOF
<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>node02</name>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type><boot dev='network'/></os>
  <features><acpi/></features>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <controller type='usb' model='none'/>
    <interface type='ethernet'>
      <mac address='$mac2'/>
      <target dev='tapkvm' managed='no'/>
      <model type='virtio'/>
    </interface>
    <serial type='file'><source path='$lv/serial-mini.log'/><target port='0'/></serial>
    <memballoon model='none'/>
  </devices>
  <qemu:commandline>
    <qemu:arg value='-object'/>
    <qemu:arg value='filter-dump,id=f0,netdev=hostnet0,file=$lv/vm-mini.pcap'/>
  </qemu:commandline>
</domain>
EOF
out=$(virsh -c "$lv_uri" define "$lv/node02.xml" 2>&1) || die "virsh define: $out"
say "libvirtd (session, user $lv_user, pid $libvirtd_pid) with domain node02: $(since "$mini_start") s"
st=$(tool rpower node02 stat 2>&1) || true
[[ $st == "node02: off" ]] || fail "rpower node02 stat before rinstall: '$st', not 'node02: off'"
: >"$run/status-mini.log"
vm_start=$(date +%s.%N)
watch_status node02 "$run/status-mini.log" "$vm_start" &
poller_pid=$!
out=$(tool rinstall node02 osimage=debian12-x86_64-install-mini -V 2>&1) || fail "rinstall node02: $out"
echo "$out" | sed 's/^/    rinstall: /'
grep -qx 'node02: rpower: off on' <<<"$out" || fail "rinstall did not power node02 on from off"
state=
for _ in $(seq 240); do # 120 s: the VM powers itself off after its callbacks
  state=$(virsh -c "$lv_uri" domstate node02 2>&1 | head -1) || true
  [[ $state == "shut off" ]] && break
  sleep 0.5
done
[[ $state == "shut off" ]] || fail "node02's domain is '$state' after 120 s, not shut off"
virsh -c "$lv_uri" destroy node02 >/dev/null 2>&1 || true
report_vm mini node02 "$vm_start" "$lv/vm-mini.pcap"
grep -a 'cws-mini:' "$lv/serial-mini.log" | tr -d '\r' | sed 's/^/    serial: /'
for s in installing installed booted next; do
  grep -q "GET /boot/node/node02/status?state=$s&token=" "$run/http-mini.log" ||
    fail "the busybox initrd did not call back $s with its token"
done
answers=$(grep -a -o 'cws-mini: status [a-z]* [a-z]*' "$lv/serial-mini.log" | cut -d' ' -f3- | tr '\n' ',')
[[ $answers == "installing ok,installed ok,booted ok,next ok,booted refused," ]] ||
  fail "the callbacks were not answered ok, ok, ok, ok, refused: $answers"
st=$(tool nodeset node02 stat)
[[ $st == "node02: boot" ]] || fail "node02's chain did not move to boot on next: $st"
in_order "$run/status-mini.log" netbooting installing installed booted ||
  fail "node02 did not read netbooting, installing, installed, booted in this order"
st=$(tool lsdef node02 -i status | sed -n 's/^ *status=//p')
say "lsdef node02 -i status: $st"
[[ $st == booted ]] || fail "node02 ends as '$st', not booted"
st=$(tool rpower node02 stat 2>&1) || true
say "rpower node02 stat: $st"
[[ $st == "node02: off" ]] || fail "rpower node02 stat after its power off: '$st', not 'node02: off'"
kvm_teardown
say "part 1 (libvirtd, rinstall, the VM): $(since "$mini_start") s"

# -- 3. forged callbacks for node01 (armed, not booted) change nothing -------------------------
tool nodeset node01 osimage >/dev/null || fail "nodeset node01 osimage"
tool nodeset node03 osimage >/dev/null || fail "nodeset node03 osimage"
# node03's token, as node03 itself reads it from its boot script
in_client curl -s --max-time 5 -o "$run/node03.ipxe" "http://$srv:$port/boot/node/node03" || true
token3=$(grep -o 'token=[0-9A-Za-z_-]*' "$run/node03.ipxe" | head -1 | cut -d= -f2)
[[ -n $token3 ]] || fail "node03's boot script carries no token: $(head -c 300 "$run/node03.ipxe")"
forge() { # forge METHOD PATH_AND_QUERY: the HTTP code (a 2xx is a failure of the test)
  local c
  c=$(in_client curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X "$1" \
    "http://$srv:$port/boot/node/node01/$2" || true)
  [[ $c == 2* ]] && fail "a forged request was accepted ($1 $2): $c"
  echo "$c"
}
before=$(status_of node01)
codes="$(forge GET 'status?state=installed') $(forge POST 'status?state=installed&token=0123456789abcdef0123456789abcdef')"
codes+=" $(forge GET "status?state=booted&token=$token3") $(forge GET "preseed?token=$token3")"
after=$(status_of node01)
[[ $after == "$before" ]] || fail "forged requests changed node01's status: '$before' -> '$after'"
say "forgery (no token, a wrong token, node03's token for a callback and the preseed): $codes; node01's status unchanged ('${after:-unset}')"

# -- 2. the Debian installer: kernel, initrd, preseed with the token, `installing` --------------
boot_vm installer $mac1 1024 480 'GET /boot/node/node01/status\?state=installing' node01
grep -q 'GET /boot/node/node01/preseed?token=' "$run/http-installer.log" ||
  fail "the installer did not fetch its preseed with a token"
grep -q 'GET /boot/node/node01/status?state=installing&token=' "$run/http-installer.log" ||
  fail "the installer's early command did not call back installing with a token"
grep -q ' installing$' "$run/status-installer.log" || fail "node01 never read installing"
in_order "$run/status-installer.log" netbooting installing ||
  fail "node01 did not read netbooting then installing"
st=$(tool lsdef node01 -i status | sed -n 's/^ *status=//p')
say "lsdef node01 -i status: $st"
[[ $st == installing ]] || fail "node01 reads '$st' after the installer's callback"

# repeated bad tokens mark the node (install_bad_token_limit)
for _ in $(seq $bad_token_limit); do forge GET 'status?state=installed&token=bad' >/dev/null; done
for _ in $(seq 20); do [[ $(status_of node01) == failed* ]] && break; sleep 0.2; done
st=$(status_of node01)
say "node01 after $bad_token_limit bad tokens: $st ($(tool lsdef node01 -i appstatus | sed -n 's/^ *appstatus=//p'))"
[[ $st == failed* ]] || fail "$bad_token_limit bad tokens did not mark node01 failed: '$st'"

# -- 4. deadline: node03 fetches its script and kernel and stops ----------------------------------
stop_pid "$daemon_pid"
echo "install_deadline_installing = $deadline_s" >>"$home/clusterws.conf"
start_daemon
tool nodeset node03 osimage >/dev/null || fail "nodeset node03 osimage (again)"
in_client curl -s --max-time 5 -o /dev/null "http://$srv:$port/boot/node/node03" || true
in_client curl -s --max-time 30 -o /dev/null "http://$srv:$port/boot/node/node03/kernel" || true
deadline_start=$(date +%s.%N)
st3=$(status_of node03)
[[ $st3 == netbooting ]] || fail "node03 reads '$st3' after its kernel, not netbooting"
for _ in $(seq $((deadline_s * 5 + 50))); do
  [[ $(status_of node03) == failed* ]] && break
  sleep 0.2
done
st3=$(status_of node03)
say "node03 (script and kernel, nothing more): '$st3' after $(since "$deadline_start") s ($(tool lsdef node03 -i appstatus | sed -n 's/^ *appstatus=//p'))"
[[ $st3 == failed* ]] || fail "node03 is not failed after the stage deadline: '$st3'"
elapsed=$(printf '%.0f' "$(since "$deadline_start")")
((elapsed >= deadline_s)) || fail "node03 was failed before its deadline (${elapsed} s < $deadline_s s)"

((failures == 0)) || die "$failures check(s) failed"
say "PASS"
