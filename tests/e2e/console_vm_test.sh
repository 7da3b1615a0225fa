#!/usr/bin/env bash
# make test-e2e: real VMs' serial consoles held by clusterwsd (docs/consoles.md, "End-to-end
# tests"; issue #30).
#
# One clusterwsd with a temp home, one busybox initrd built here (it prints CWS-GUEST-READY
# and runs a shell on ttyS0 with the prompt `guest# `), Debian's installer kernel, QEMU TCG
# with -m 256. Two VMs, one after the other:
#
#   1. kvm:  a libvirtd and virtlogd started here (libvirtd's own sockets and pid file in the
#            temp dir; never systemctl), the VM a transient domain created paused; node with
#            mgt=kvm cons=kvm vmhost=<that libvirtd's URI>. Once the console is up the domain
#            runs: its kernel's boot messages are in the node's log file and in GET
#            .../console/log; a line typed over the WebSocket console (GET .../console, driven
#            by cws-ws-console) is answered by the guest's shell; libvirtd stopped and started
#            again: the log notes the loss and the console's return.
#   2. ipmi: an ipmi_sim BMC whose SOL is QEMU's serial port (QEMU listens, ipmi_sim connects
#            to it), QEMU started stopped (-S) and continued once the console is up; node with
#            cons=ipmi: boot messages in the log, a typed line answered.
#
# Each part prints its time. Only 127.0.0.1; every process is stopped by its pid and the temp
# directory goes on any exit (CLUSTERWS_E2E_KEEP=1 keeps it).
#   console_vm_test.sh BUILD_DIR
set -euo pipefail

t0=$(date +%s.%N)
bin=$(cd "${1:?usage: console_vm_test.sh BUILD_DIR}" && pwd)/bin
kernel=/usr/lib/debian-installer/images/12/amd64/text/debian-installer/amd64/linux

E2E_NAME="test-e2e consoles"
source "$(dirname "$0")/common.sh"

[[ $(id -u) -eq 0 ]] || { say "SKIP: needs root (libvirtd's QEMU driver)"; exit 77; }
for tool in qemu-system-x86_64 libvirtd virtlogd virsh ipmi_sim busybox curl gzip python3; do
  command -v $tool >/dev/null || die "$tool is not installed (scripts/bootstrap installs it)"
done
[[ -r $kernel ]] || die "no $kernel (package debian-installer-12-netboot-amd64)"
[[ -x $bin/clusterwsd && -x $bin/cws-ws-console ]] || die "no $bin/clusterwsd or cws-ws-console"

# -- everything this run owns, gone on any exit ------------------------------------------
run=$(mktemp -d /tmp/cws-e2e-cons.XXXXXX)
chmod 755 "$run" # libvirt's QEMU (user libvirt-qemu) reads the initrd
home=$run/home
daemon_pid=
sim_pid=
qemu_pid=
node_kvm=cwsvm$$
node_ipmi=cwsbmc$$
uri="qemu+unix:///system?socket=$run/lv/libvirt-sock"
pid_of() { [[ -s $1 ]] && cat "$1" || true; }
show_logs() {
  show_tails "$home/consoles/$node_kvm" "$home/consoles/$node_ipmi" "$home/clusterwsd.log" \
    "$run/libvirtd.log" "$run/sim.out"
}
cleanup() {
  local rc=$?
  set +e
  if [[ -n $(pid_of "$run/libvirtd.pid") ]]; then
    virsh -c "$uri" destroy "$node_kvm" >/dev/null 2>&1
  fi
  # the domain's QEMU, should libvirtd be gone (its pid file is libvirt's)
  stop_pid "$(pid_of "/run/libvirt/qemu/$node_kvm.pid")"
  stop_pid "$(pid_of "$run/libvirtd.pid")"
  stop_pid "$(pid_of "$run/virtlogd.pid")"
  stop_pid "$qemu_pid"
  stop_pid "$sim_pid"
  stop_pid "$daemon_pid"
  ((rc != 0)) && show_logs
  if [[ ${CLUSTERWS_E2E_KEEP:-0} == 1 ]]; then
    echo "test-e2e consoles: kept $run"
  else
    rm -rf "$run"
  fi
  echo "test-e2e consoles: $(since "$t0") s in all (exit $rc)"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

tool() { PATH=$bin:$PATH CLUSTERWS_HOME=$home "$@"; }
# wait_for SECONDS FILE TEXT: true once FILE holds TEXT
wait_for() {
  local end=$(($(date +%s) + $1))
  while (($(date +%s) < end)); do
    [[ -f $2 ]] && grep -qaF -- "$3" "$2" && return 0
    sleep 0.2
  done
  return 1
}
# the BMC's and the daemon's free ports: asked from the kernel (bind port 0)
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# -- the guest: a busybox initrd with a shell on ttyS0 ---------------------------------------
build_initrd() {
  local w=$run/initrd-root l
  mkdir -p $w/{bin,proc,sys,dev}
  cp /bin/busybox $w/bin/ # Debian's busybox is dynamic: its libraries come along
  for l in $(ldd /bin/busybox | grep -o '/lib[^ ]*'); do
    mkdir -p "$w$(dirname "$l")"
    cp -L "$l" "$w$l"
  done
  cat >$w/init <<'EOF'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t devtmpfs dev /dev
/bin/busybox --install -s /bin
export PATH=/bin PS1='guest# '
echo "CWS-GUEST-READY $(uname -r)"
while true; do setsid cttyhack sh; done
EOF
  chmod +x $w/init
  (cd $w && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) >"$run/initrd.gz"
  chmod 644 "$run/initrd.gz"
  rm -rf $w
}
build_initrd
say "busybox initrd: $(stat -c %s "$run/initrd.gz") bytes"

# -- clusterwsd ----------------------------------------------------------------------------
tool clusterctl init --no-networks --admin-password e2e-admin-pw >/dev/null
{
  echo "console_backoff_min_ms = 500"
  echo "console_backoff_max_ms = 2000"
} >>"$home/clusterws.conf"
"$bin/clusterwsd" --home "$home" --listen 127.0.0.1:0 --port-file "$run/port" \
  >>"$home/clusterwsd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 300); do
  [[ -s $run/port ]] && break
  kill -0 $daemon_pid 2>/dev/null || die "clusterwsd exited at start"
  sleep 0.1
done
[[ -s $run/port ]] || die "clusterwsd did not start listening"
port=$(cat "$run/port")
auth="userName=root&userPW=e2e-admin-pw"
api="https://127.0.0.1:$port/clusterws"
say "clusterwsd pid $daemon_pid on port $port"

# check_console PART NODE: the boot in the log file and in GET .../console/log, then a line
# typed over the WebSocket answered by the guest's shell
check_console() {
  local part=$1 node=$2 log=$home/consoles/$2 r out
  wait_for 60 "$log" "guest# " || fail "$part: no shell prompt in $log within 60 s"
  grep -qa "Linux version" "$log" || fail "$part: no 'Linux version' (the kernel's first line) in $log"
  grep -qa "CWS-GUEST-READY" "$log" || fail "$part: no CWS-GUEST-READY in $log"
  out=$(curl -sS --cacert "$home/pki/ca-cert.pem" "$api/nodes/$node/console/log?$auth&tail=100000")
  grep -q "Linux version" <<<"$out" || fail "$part: GET console/log has no 'Linux version'"
  r=$RANDOM
  if out=$("$bin/cws-ws-console" "$port" "$home/pki/ca-cert.pem" \
    "/clusterws/nodes/$node/console?$auth&replay=65536" "guest# " \
    "echo mark-\$((6*7))-$r" "mark-42-$r" 30 2>"$run/ws-$part.err"); then
    say "$part: typed 'echo mark-\$((6*7))-$r' over the WebSocket, the guest answered mark-42-$r"
  else
    fail "$part: the guest did not answer over the WebSocket: $(tail -c 300 <<<"$out" | tr -d '\r') $(cat "$run/ws-$part.err")"
  fi
}

# -- 1. cons=kvm: a libvirt domain's console -------------------------------------------------
t1=$(date +%s.%N)
mkdir -p "$run/lv"
cat >"$run/libvirtd.conf" <<EOF
unix_sock_dir = "$run/lv"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:file:$run/libvirtd.log"
EOF
start_libvirtd() {
  rm -f "$run/libvirtd.pid"
  libvirtd -d -f "$run/libvirtd.conf" -p "$run/libvirtd.pid"
  for _ in $(seq 100); do
    virsh -c "$uri" version >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  die "libvirtd did not answer on $uri"
}
# virtlogd's socket is libvirt's fixed /run/libvirt/virtlogd-sock (no setting moves it)
if ! virtlogd -d -p "$run/virtlogd.pid"; then
  # a system virtlogd (socket-activated by the package) holds the socket: libvirtd uses that one
  [[ -S /run/libvirt/virtlogd-sock ]] || die "virtlogd did not start"
  say "virtlogd: the running one at /run/libvirt/virtlogd-sock"
fi
start_libvirtd
cat >"$run/domain.xml" <<EOF
<domain type='qemu'>
  <name>$node_kvm</name>
  <memory unit='MiB'>256</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='q35'>hvm</type>
    <kernel>$kernel</kernel>
    <initrd>$run/initrd.gz</initrd>
    <cmdline>console=ttyS0,115200 panic=-1</cmdline>
  </os>
  <on_poweroff>destroy</on_poweroff>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <serial type='pty'><target port='0'/></serial>
    <console type='pty'><target type='serial' port='0'/></console>
    <video><model type='none'/></video>
    <memballoon model='none'/>
  </devices>
</domain>
EOF
virsh -c "$uri" create "$run/domain.xml" --paused >/dev/null || die "virsh create failed"
say "kvm: libvirtd pid $(cat "$run/libvirtd.pid"), domain $node_kvm created (paused)"
tool mkdef "$node_kvm" groups=all mgt=kvm cons=kvm "vmhost=$uri" >/dev/null
wait_for 20 "$home/consoles/$node_kvm" "console up" || die "kvm: the console did not come up"
virsh -c "$uri" resume "$node_kvm" >/dev/null || die "virsh resume failed"
say "kvm: console up, domain running"
check_console kvm "$node_kvm"
# libvirtd goes away and comes back: the log notes the gap, the console comes back by itself
stop_pid "$(cat "$run/libvirtd.pid")"
wait_for 20 "$home/consoles/$node_kvm" "console lost" || fail "kvm: no 'console lost' after libvirtd stopped"
start_libvirtd
wait_for 30 "$home/consoles/$node_kvm" "console back" || fail "kvm: no 'console back' after libvirtd started again"
grep -a "clusterws: console" "$home/consoles/$node_kvm" | tr -d '\r' | sed 's/^/    /'
virsh -c "$uri" destroy "$node_kvm" >/dev/null 2>&1 || true
tool rmdef "$node_kvm" >/dev/null
stop_pid "$(cat "$run/libvirtd.pid")"
stop_pid "$(cat "$run/virtlogd.pid")"
say "kvm: done in $(since "$t1") s"

# -- 2. cons=ipmi: QEMU's serial port behind ipmi_sim's SOL ---------------------------------
t2=$(date +%s.%N)
lan_port=$(free_port)
sol_port=$(free_port)
mkdir -p "$run/bmc/state"
cat >"$run/bmc/lan.conf" <<EOF
name "e2ebmc"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 $lan_port
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid a123456789abcdefa123456789abcdef
  endlan
  sol "tcp:127.0.0.1:$sol_port" 115200
  user 2 true "admin" "password" admin 10 none md2 md5 straight
EOF
printf 'mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02\nmc_enable 0x20\n' \
  >"$run/bmc/bmc.emu"
# QEMU listens (the serial port), ipmi_sim connects to it; the guest waits stopped (-S) until
# the console is up, so the kernel's first line is in the log
qemu-system-x86_64 -machine q35 -accel tcg -m 256 -smp 1 -display none -nodefaults -S \
  -kernel "$kernel" -initrd "$run/initrd.gz" -append "console=ttyS0,115200 panic=-1" \
  -chardev "socket,id=s0,host=127.0.0.1,port=$sol_port,server=on,wait=off,nodelay=on" \
  -serial chardev:s0 -monitor "unix:$run/monitor.sock,server=on,wait=off" \
  >"$run/qemu.out" 2>&1 &
qemu_pid=$!
for _ in $(seq 50); do
  [[ -S $run/monitor.sock ]] && break
  sleep 0.1
done
(cd "$run/bmc" && exec ipmi_sim -c lan.conf -f bmc.emu -s state -n >"$run/sim.out" 2>&1) &
sim_pid=$!
say "ipmi: QEMU pid $qemu_pid (stopped), ipmi_sim pid $sim_pid (RMCP+ $lan_port, SOL to $sol_port)"
tool mkdef "$node_ipmi" groups=all mgt=ipmi cons=ipmi bmc=127.0.0.1 "bmcport=$lan_port" \
  bmcusername=admin bmcpassword=password >/dev/null
wait_for 20 "$home/consoles/$node_ipmi" "console up" || die "ipmi: the console did not come up"
python3 - "$run/monitor.sock" <<'EOF' || die "ipmi: QEMU's monitor did not take 'cont'"
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(0.2)
s.sendall(b"cont\n"); time.sleep(0.3); s.close()
EOF
say "ipmi: console up, guest running"
check_console ipmi "$node_ipmi"
say "ipmi: done in $(since "$t2") s"

((failures == 0)) || die "$failures check(s) failed"
say "PASS"
