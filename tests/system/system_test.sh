#!/usr/bin/env bash
# make test-system: the Debian package on a minimal Debian 12 under a real systemd
# (docs/operations.md, "Tested under systemd").
#
# A minimal Debian 12 (debootstrap --variant=minbase bookworm, from the mirror apt uses on
# this machine) is made once and cached in $CLUSTERWS_TEST_CACHE (default
# /var/cache/clusterws-test: bookworm-minbase/ and the downloaded packages, archives/). Each
# run lays an overlay over it (the cache is never changed), installs the package's
# dependencies with apt inside, boots it with `systemd-nspawn -b --keep-unit --register=no
# --private-network` (systemd need not be PID 1 here) and, through nsenter into the
# container: dpkg -i, clusterctl init, systemctl enable --now (Type=notify), HTTPS with the
# CA, a non-root user refused then allowed by a policy row over the local socket, reload
# (the audit log reopened), the watchdog restart after SIGSTOP, stop within TimeoutStopSec,
# apt-get remove (state kept) and purge (state removed). Every wait has a timeout; the
# container, the mounts and the run directory go on any exit (trap).
#   system_test.sh BUILD_DIR [PACKAGE.deb]   (default: the newest BUILD_DIR/packages/*.deb)
set -euo pipefail

t0=$(date +%s)
build=$(cd "${1:?usage: system_test.sh BUILD_DIR [PACKAGE.deb]}" && pwd)
deb=${2:-$(ls -t "$build"/packages/clusterws_*.deb 2>/dev/null | head -1)}
[[ -f $deb ]] || { echo "FAIL: no package (make deb)" >&2; exit 1; }
deb=$(realpath "$deb")
cache=${CLUSTERWS_TEST_CACHE:-/var/cache/clusterws-test}
base=$cache/bookworm-minbase
# (the watchdog interval of the test, in a drop-in: the shipped 30 s works the same way)
watchdog_sec=5

say() { echo "test-system: $*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
elapsed() { echo $(($(date +%s) - t0)); }

[[ $(id -u) -eq 0 ]] || { say "SKIP: needs root (debootstrap, mounts, systemd-nspawn)"; exit 77; }
for tool in debootstrap systemd-nspawn nsenter curl flock; do
  command -v $tool >/dev/null || fail "$tool is not installed (scripts/bootstrap installs it)"
done

# -- the cached minimal Debian 12 --------------------------------------------------------
# the Debian mirror of this machine's apt sources (one-line or deb822), not the security one
mirror() {
  {
    sed -e 's/\[[^]]*\]//' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk '$1 == "deb" && $3 == "bookworm" { print $2 }'
    awk '/^URIs:/ { u = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") print u }' \
      /etc/apt/sources.list.d/*.sources 2>/dev/null
  } | grep -v security | head -1
}

mkdir -p "$cache/archives/partial"
exec 9>"$cache/.lock" # one run at a time makes the cache or uses apt's archives
timeout 900 flock 9 || fail "the cache $cache stayed locked for 15 minutes"
debootstrap_s=cached
if [[ ! -e $base/.clusterws-ready ]]; then
  url=$(mirror)
  url=${url:-http://deb.debian.org/debian}
  say "debootstrap --variant=minbase bookworm from $url into $base (once; cached)"
  s=$(date +%s)
  rm -rf "$base.tmp" "$base"
  timeout 900 debootstrap --variant=minbase --include=systemd-sysv bookworm "$base.tmp" "$url" \
    >"$cache/debootstrap.log" 2>&1 || fail "debootstrap (log: $cache/debootstrap.log)"
  chroot "$base.tmp" apt-get clean
  touch "$base.tmp/.clusterws-ready"
  mv "$base.tmp" "$base"
  debootstrap_s=$(($(date +%s) - s))
  say "debootstrap took ${debootstrap_s} s"
fi

# -- one run: an overlay on the cache, a container booted on it ---------------------------
run=$(mktemp -d "$build/test-system.XXXXXX")
root=$run/root
machine=cws-test-$$
nspawn_pid=
cleanup() {
  local rc=$?
  set +e
  if [[ -n $nspawn_pid ]] && kill -0 "$nspawn_pid" 2>/dev/null; then
    kill -TERM "$nspawn_pid" # nspawn shuts the container's systemd down
    for _ in $(seq 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$nspawn_pid" 2>/dev/null && kill -KILL "$nspawn_pid"
    wait "$nspawn_pid" 2>/dev/null
  fi
  if mountpoint -q "$root"; then
    umount -R "$root" || umount -R -l "$root"
  fi
  rm -rf "$run"
  ((rc == 0)) || say "failed after $(elapsed) s"
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

mkdir -p "$run/upper" "$run/work" "$root"
mount -t overlay overlay -o "lowerdir=$base,upperdir=$run/upper,workdir=$run/work" "$root"
cp "$deb" "$root/root/clusterws.deb"
archives=(--bind="$cache/archives:/var/cache/apt/archives")

# the package's dependencies from the mirror (the lists of the cache, refreshed if stale),
# and a user who is not root; the container shares the host's network for this step only
in_chroot() {
  timeout 600 systemd-nspawn -q -D "$root" --register=no --keep-unit -M "$machine" \
    "${archives[@]}" -E DEBIAN_FRONTEND=noninteractive "$@"
}
depends=$(dpkg-deb -f "$deb" Depends)
satisfy=(apt-get satisfy -y -q --no-install-recommends "$depends")
if ! in_chroot "${satisfy[@]}" >"$run/apt.log" 2>&1; then
  in_chroot apt-get update -q >>"$run/apt.log" 2>&1 &&
    in_chroot "${satisfy[@]}" >>"$run/apt.log" 2>&1 ||
    fail "apt-get satisfy '$depends': $(tail -5 "$run/apt.log")"
fi
in_chroot useradd -m alice >>"$run/apt.log" 2>&1 || fail "useradd: $(tail -3 "$run/apt.log")"
exec 9>&- # (the cache's lock)
say "dependencies installed at $(elapsed) s"

systemd-nspawn -q -D "$root" -b --keep-unit --register=no --private-network -M "$machine" \
  >"$run/console.log" 2>&1 </dev/null &
nspawn_pid=$!
# the container's systemd: nspawn's child
leader=
for _ in $(seq 100); do
  leader=$(cat /proc/$nspawn_pid/task/*/children 2>/dev/null | awk '{ print $1 }')
  [[ -n $leader ]] && [[ $(cat /proc/$leader/comm 2>/dev/null) == systemd ]] && break
  leader=
  sleep 0.1
done
[[ -n $leader ]] || fail "the container did not start: $(tail -5 "$run/console.log")"

# a command in the container (all its namespaces), bounded; `ns_t SECONDS cmd...`
ns_t() {
  local secs=$1
  shift
  timeout "$secs" nsenter -t "$leader" -a \
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
}
ns() { ns_t 60 "$@"; }
prop() { ns systemctl show -p "$1" --value clusterwsd; }
# waits up to $1 seconds for the shell condition $2 (run on the host)
wait_for() {
  local secs=$1 cond=$2
  for _ in $(seq $((secs * 5))); do
    eval "$cond" && return 0
    sleep 0.2
  done
  return 1
}

# (systemctl fails until systemd has its private socket, then says "starting" until booted)
state=
wait_for 90 'state=$(ns_t 10 systemctl is-system-running 2>/dev/null); [[ $state == running || $state == degraded ]]' ||
  fail "the container's systemd is '$state': $(tail -5 "$run/console.log")"
say "container booted at $(elapsed) s ($state)"

# -- install, init, start -----------------------------------------------------------------
ns_t 120 dpkg -i /root/clusterws.deb >"$run/dpkg.log" 2>&1 || fail "dpkg -i: $(tail "$run/dpkg.log")"
[[ $(stat -c %a "$root/var/log/clusterws") == 750 ]] || fail "postinst: /var/log/clusterws not 0750"
[[ $(ns systemctl is-enabled clusterwsd) == disabled ]] || fail "the install enabled the unit"
ns clusterctl init --admin-password 'sys-test-pw' >"$run/init.log" 2>&1 ||
  fail "clusterctl init: $(cat "$run/init.log")"
ns mkdef 'sys[01-03]' groups=compute mgt=kvm >/dev/null || fail "mkdef"
ns systemctl enable --now clusterwsd >/dev/null 2>&1 ||
  fail "enable --now: $(ns systemctl status --no-pager clusterwsd)"
# Type=notify: `start` returned once READY=1 arrived
[[ $(prop ActiveState) == active && $(prop SubState) == running ]] ||
  fail "not active: $(ns systemctl status --no-pager clusterwsd)"
[[ $(prop Type) == notify ]] || fail "Type $(prop Type)"
[[ $(prop StatusText) == "listening on https://127.0.0.1:8443/clusterws" ]] ||
  fail "STATUS: $(prop StatusText)"
say "clusterwsd active (Type=notify) at $(elapsed) s"

# HTTPS from the host's curl in the container's network namespace, with the new CA
https() {
  timeout 30 nsenter -t "$leader" -n curl -sS --max-time 20 \
    --cacert "$root/var/lib/clusterws/pki/ca-cert.pem" "$@"
}
url='https://127.0.0.1:8443/clusterws'
body=$(https "$url/nodes/sys02?userName=root&userPW=sys-test-pw") || fail "HTTPS with the CA"
[[ $body == *'"mgt":"kvm"'* ]] || fail "GET /nodes/sys02: $body"

# a user other than root: through the local socket, refused, then allowed by a policy row
as_alice() { ns runuser -u alice -- "$@"; }
out=$(as_alice nodels compute 2>&1) && fail "alice was not refused: $out"
[[ $out == *"Error: Permission denied for request"* ]] || fail "alice refused with: $out"
ns mkdef -t policy -o 6 name=alice rule=allow commands=lsdef,nodels >/dev/null || fail "policy"
out=$(as_alice nodels compute 2>&1) || fail "alice refused after the policy row: $out"
[[ $out == $'sys01\nsys02\nsys03' ]] || fail "alice's nodels: $out"
say "HTTPS and the local socket at $(elapsed) s"

# -- reload: the audit log reopened (what logrotate does: move it, then reload) -------------
log=$root/var/log/clusterws/audit.log
audited() { # a change is audited
  https -X PUT -d "{\"usercomment\":\"$1\"}" "$url/nodes/$1?userName=root&userPW=sys-test-pw" >/dev/null
}
audited sys02 || fail "PUT"
wait_for 10 "grep -q sys02 '$log' 2>/dev/null" || fail "no audit line for the request"
mv "$log" "$log.1"
pid=$(prop MainPID)
ns_t 30 systemctl reload clusterwsd || fail "systemctl reload"
[[ $(prop MainPID) == "$pid" && $(prop ActiveState) == active ]] || fail "reload restarted it"
ns journalctl -u clusterwsd -o cat | grep -q 'audit log reopened$' ||
  fail "no 'audit log reopened' in the journal"
audited sys03 || fail "HTTPS after reload"
wait_for 10 "grep -q sys03 '$log' 2>/dev/null" || fail "the reopened audit log has no new line"
! grep -q sys03 "$log.1" || fail "the old audit log got the line after the reload"
say "reload reopened the audit log at $(elapsed) s"

# -- the watchdog: a stopped main process is killed and restarted --------------------------
mkdir -p "$root/etc/systemd/system/clusterwsd.service.d"
printf '[Service]\nWatchdogSec=%ss\n' "$watchdog_sec" \
  >"$root/etc/systemd/system/clusterwsd.service.d/test-watchdog.conf"
ns systemctl daemon-reload
ns_t 60 systemctl restart clusterwsd || fail "restart"
pid=$(prop MainPID)
restarts=$(prop NRestarts)
ns sh -c "kill -STOP $pid"
wait_for $((watchdog_sec * 4 + 30)) \
  '[[ $(prop NRestarts) -gt $restarts && $(prop ActiveState) == active && $(prop MainPID) != "$pid" ]]' ||
  fail "no watchdog restart: NRestarts $(prop NRestarts), $(prop ActiveState), pid $(prop MainPID)"
ns journalctl -u clusterwsd -o cat | grep -qi 'watchdog timeout' || fail "no watchdog timeout logged"
https "$url/nodes/sys01?userName=root&userPW=sys-test-pw" >/dev/null || fail "HTTPS after restart"
rm -r "$root/etc/systemd/system/clusterwsd.service.d"
ns systemctl daemon-reload
say "watchdog restart (NRestarts $restarts -> $(prop NRestarts)) at $(elapsed) s"

# -- restore --replace under systemd: the old home kept aside, the service restarted on the new
ns clusterctl backup /root/backup >/dev/null || fail "backup"
ns mkdef after1 groups=compute >/dev/null || fail "mkdef after the backup"
pid=$(prop MainPID)
out=$(ns_t 90 clusterctl restore --replace /root/backup 2>&1) || fail "restore --replace: $out"
[[ $out == *"the home it replaced is /var/lib/clusterws.replaced-"*"Restarted clusterwsd.service on the restored home"* ]] ||
  fail "restore --replace said: $out"
[[ $(prop ActiveState) == active && $(prop MainPID) != "$pid" ]] || fail "not restarted"
[[ $(ns nodels compute) == $'sys01\nsys02\nsys03' ]] || fail "nodels after restore: $(ns nodels compute)"
body=$(https "$url/nodes?userName=root&userPW=sys-test-pw") || fail "HTTPS after restore --replace"
[[ $body == *sys01* && $body != *after1* ]] || fail "the daemon serves: $body"
ls -d "$root"/var/lib/clusterws.replaced-* >/dev/null || fail "no old home kept aside"
say "restore --replace at $(elapsed) s"

# -- stop within TimeoutStopSec -------------------------------------------------------------
stop_max=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)s*$/\1/p' "$root/lib/systemd/system/clusterwsd.service")
[[ -n $stop_max ]] || fail "the unit has no TimeoutStopSec in seconds"
s=$(date +%s%N)
ns_t 90 systemctl stop clusterwsd || fail "systemctl stop"
stop_ms=$((($(date +%s%N) - s) / 1000000))
[[ $(prop ActiveState) == inactive && $(prop Result) == success ]] ||
  fail "stop: $(prop ActiveState) $(prop Result)"
((stop_ms < stop_max * 1000)) || fail "stop took ${stop_ms} ms (TimeoutStopSec ${stop_max} s)"
say "stopped in ${stop_ms} ms at $(elapsed) s"

# -- remove keeps the state, purge removes it -----------------------------------------------
ns systemctl start clusterwsd || fail "start before remove"
ns_t 120 apt-get remove -y -q clusterws >"$run/remove.log" 2>&1 ||
  fail "apt-get remove: $(tail "$run/remove.log")"
[[ $(prop ActiveState) == inactive ]] || fail "remove did not stop the service"
[[ ! -e $root/usr/sbin/clusterwsd ]] || fail "remove left /usr/sbin/clusterwsd"
for kept in var/lib/clusterws/db/data.mdb var/lib/clusterws/pki/ca-cert.pem \
  var/log/clusterws/audit.log etc/clusterws/clusterws.conf; do
  [[ -e $root/$kept ]] || fail "remove deleted /$kept"
done
ns_t 120 apt-get purge -y -q clusterws >"$run/purge.log" 2>&1 ||
  fail "apt-get purge: $(tail "$run/purge.log")"
for gone in var/lib/clusterws var/log/clusterws etc/clusterws; do
  [[ ! -e $root/$gone ]] || fail "purge left /$gone"
done
! ls -d "$root"/var/lib/clusterws.replaced-* 2>/dev/null || fail "purge left the old home"
[[ $(ns dpkg-query -W -f '${db:Status-Abbrev}' clusterws 2>/dev/null || true) != ii* ]] ||
  fail "still installed"
say "remove kept the state, purge removed it"

[[ $debootstrap_s == cached ]] || debootstrap_s="$debootstrap_s s"
say "ok in $(elapsed) s (debootstrap: $debootstrap_s)"
