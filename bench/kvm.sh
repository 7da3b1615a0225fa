#!/usr/bin/env bash
# rpower stat of N virtual machines (mgt=kvm) through libvirt's test driver (test:///FILE,
# N domains, every other one shut off):
#   - a sequential `virsh -c test:///FILE domstate DOMAIN` loop (the shell-script way: each
#     call a new connection, which reads the file)
#   - clusterws: `rpower` (CLI: one connection), GET /nodes/{nr}/power on the daemon cold (the
#     connection opened) and warm (held, kvm_idle)
# The issue sets no goal for kvm: INFO lines with the ratios.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
N=${N:-256}
command -v virsh >/dev/null || { echo "kvm: virsh is not installed (libvirt-clients)"; exit 0; }

xml=$WORK/vms.xml
{
  echo "<node>"
  for i in $(seq 0 $((N - 1))); do
    state=""
    ((i % 2)) && state="<test:runstate>5</test:runstate>"
    printf "<domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'><name>vm%04d</name><memory>65536</memory><os><type>hvm</type></os>%s</domain>\n" "$i" "$state"
  done
  echo "</node>"
} >"$xml"

home=$WORK/home
pw=benchpw
init_home "$home" "$pw"
{
  for i in $(seq 0 $((N - 1))); do
    printf 'vm%04d:\n    objtype=node\n    groups=vms,all\n    mgt=kvm\n    vmhost=test://%s\n' "$i" "$xml"
  done
} | clusterctl mkdef -z >/dev/null

t0=$(now)
ok=0
for i in $(seq 0 $((N - 1))); do
  [[ $(virsh -q -c "test://$xml" domstate "$(printf 'vm%04d' "$i")" 2>/dev/null) == running ]] && ok=$((ok + 1))
done
t_virsh=$(secs "$t0" "$(now)")
echo "virsh domstate loop: ${t_virsh}s ($ok of $N running)"

t0=$(now)
ok=$(rpower vms stat 2>/dev/null | grep -c ': on$' || true)
t_cli=$(secs "$t0" "$(now)")
echo "rpower (CLI):        ${t_cli}s ($ok of $N on)"

start_daemon "$home"
get() {
  curl -gs --cacert "$home/pki/ca-cert.pem" -o "$WORK/power.json" \
    "https://127.0.0.1:$DAEMON_PORT/clusterws/nodes/vms/power?userName=root&userPW=$pw"
}
t0=$(now); get; t_cold=$(secs "$t0" "$(now)")
echo "REST cold:           ${t_cold}s ($(grep -o '"on"' "$WORK/power.json" | wc -l) of $N on)"
warm=()
for _ in $(seq "$ROUNDS"); do
  t0=$(now); get; warm+=("$(secs "$t0" "$(now)")")
done
t_warm=$(printf '%s\n' "${warm[@]}" | median)
echo "REST warm:           ${t_warm}s (median of $ROUNDS)"
stop_daemon

printf 'INFO %-28s %10sx  (no goal in the issue)\n' "kvm-rpower-cli-vs-virsh-loop" "$(ratio "$t_virsh" "$t_cli")"
printf 'INFO %-28s %10sx  (no goal in the issue)\n' "kvm-rest-cold-vs-virsh-loop" "$(ratio "$t_virsh" "$t_cold")"
printf 'INFO %-28s %10sx  (no goal in the issue)\n' "kvm-rest-warm-vs-virsh-loop" "$(ratio "$t_virsh" "$t_warm")"
