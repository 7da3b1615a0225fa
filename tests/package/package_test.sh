#!/usr/bin/env bash
# The Debian package (make deb): its files, and the installed service working in the
# installed layout. The package is unpacked into a scratch root, which a private mount
# namespace lays over /usr, /etc and /var: the installed clusterctl and clusterwsd run with
# no --home (/etc/clusterws, /var/lib/clusterws, /var/log/clusterws) and the machine itself
# is not changed. Needs root (unshare, overlayfs).
#   package_test.sh BUILD_DIR
set -euo pipefail

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# -- inside the namespace: the installed tools and daemon ---------------------------------
inside() {
  local root=$1 tmp=$2
  for d in usr etc var; do
    mkdir -p "$root/$d" "$tmp/upper-$d" "$tmp/work-$d" # (the package ships nothing in /var)
    mount -t overlay overlay \
      -o "lowerdir=$root/$d:/$d,upperdir=$tmp/upper-$d,workdir=$tmp/work-$d" "/$d"
  done
  # a clusterws already on this machine would be taken for ours
  [[ -e /var/lib/clusterws ]] && mount -t tmpfs tmpfs /var/lib/clusterws
  unset CLUSTERWS_HOME
  install -d -m 0750 /var/log/clusterws # (postinst's part)
  export PATH=/usr/sbin:/usr/bin:/sbin:/bin

  local conf_before
  conf_before=$(sha256sum /etc/clusterws/clusterws.conf)
  clusterctl init --admin-password 'pkg-test-pw' >"$tmp/init.out" || fail "clusterctl init"
  [[ -f /var/lib/clusterws/db/data.mdb ]] || fail "init did not create /var/lib/clusterws/db"
  [[ -f /var/lib/clusterws/pki/ca-cert.pem ]] || fail "init did not create the CA"
  [[ $(stat -c %a /var/lib/clusterws) == 700 ]] || fail "/var/lib/clusterws is not 0700"
  [[ $(sha256sum /etc/clusterws/clusterws.conf) == "$conf_before" ]] ||
    fail "init changed the packaged /etc/clusterws/clusterws.conf"
  [[ ! -e /var/lib/clusterws/clusterws.conf ]] || fail "init wrote a config into the state dir"
  mkdef 'pk[01-03]' groups=compute,all mgt=kvm >/dev/null || fail "mkdef"
  [[ $(nodels compute | tr '\n' ' ') == "pk01 pk02 pk03 " ]] || fail "nodels: $(nodels compute)"

  for t in clusterctl lsdef nodels mkdef chdef rmdef tabdump gettab chtab tabch nodech nodeadd \
    noderm tabrestore tabprune makenetworks makehosts rcons; do
    [[ $($t --version) == "$t - clusterws Version "* ]] || fail "$t --version: $($t --version)"
  done
  [[ $(xdsh -V) == "xdsh - clusterws Version "* ]] || fail "xdsh -V"
  [[ $(clusterwsd --version) == "clusterwsd - clusterws Version "* ]] || fail "clusterwsd --version"

  # bash completion: a noderange from the store
  local words
  words=$(bash -c 'source /usr/share/bash-completion/completions/clusterctl
    COMP_WORDS=(lsdef pk0); COMP_CWORD=1; _clusterws; echo "${COMPREPLY[*]}"
    COMP_WORDS=(nodels compute,pk); COMP_CWORD=1; _clusterws; echo "${COMPREPLY[*]}"
    COMP_WORDS=(clusterctl tabd); COMP_CWORD=1; _clusterws; echo "${COMPREPLY[*]}"')
  [[ $words == $'pk01 pk02 pk03\ncompute,pk01 compute,pk02 compute,pk03\ntabdump' ]] ||
    fail "completion gave: $words"

  # the daemon, started as the unit starts it (plus a free port), with a notify socket
  python3 - "$tmp/notify.sock" "$tmp/notify.log" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(1)
end = time.time() + 60
with open(sys.argv[2], "a") as log:
    while time.time() < end:
        try:
            log.write(s.recv(4096).decode() + "\n")
            log.flush()
        except socket.timeout:
            pass
PY
  local listener=$!
  for _ in $(seq 100); do [[ -S $tmp/notify.sock ]] && break; sleep 0.1; done
  NOTIFY_SOCKET=$tmp/notify.sock WATCHDOG_USEC=400000 \
    clusterwsd --listen 127.0.0.1:0 --port-file "$tmp/port" >"$tmp/daemon.out" 2>&1 &
  local daemon=$!
  trap "kill $daemon $listener 2>/dev/null || true" EXIT
  for _ in $(seq 150); do [[ -s $tmp/port ]] && break; sleep 0.1; done
  [[ -s $tmp/port ]] || fail "clusterwsd did not start: $(cat "$tmp/daemon.out")"
  local url
  url="https://127.0.0.1:$(cat "$tmp/port")/clusterws"
  local body
  body=$(curl -sS --max-time 10 --cacert /var/lib/clusterws/pki/ca-cert.pem \
    "$url/nodes/pk02?userName=root&userPW=pkg-test-pw") || fail "request (CA verification)"
  [[ $body == *'"mgt":"kvm"'* ]] || fail "GET pk02: $body"
  curl -sS --max-time 10 --cacert /var/lib/clusterws/pki/ca-cert.pem -X PUT \
    -d '{"vmmemory":"4096"}' "$url/nodes/pk02?userName=root&userPW=pkg-test-pw" >/dev/null ||
    fail "PUT"
  [[ $(lsdef pk02 -i vmmemory -c) == "pk02: vmmemory=4096" ]] || fail "the tools do not see PUT"
  for _ in $(seq 50); do grep -q pk02 /var/log/clusterws/audit.log 2>/dev/null && break; sleep 0.1; done
  grep -q pk02 /var/log/clusterws/audit.log || fail "no audit line in /var/log/clusterws"
  # the watchdog pings while it runs; SIGHUP (ExecReload) keeps it running
  sleep 0.5
  kill -HUP $daemon
  sleep 0.3
  kill -0 $daemon || fail "clusterwsd ended on SIGHUP"
  kill -TERM $daemon
  for _ in $(seq 100); do kill -0 $daemon 2>/dev/null || break; sleep 0.1; done
  ! kill -0 $daemon 2>/dev/null || fail "clusterwsd did not stop on SIGTERM"
  wait $daemon || fail "clusterwsd exit status $?"
  sleep 0.3
  kill $listener 2>/dev/null || true
  local notes
  notes=$(cat "$tmp/notify.log")
  grep -qx 'READY=1' <<<"$notes" || fail "no READY=1: $notes"
  grep -q '^STATUS=listening on https://127.0.0.1:' <<<"$notes" || fail "no STATUS: $notes"
  [[ $(grep -cx 'WATCHDOG=1' <<<"$notes") -ge 2 ]] || fail "fewer than 2 watchdog pings: $notes"
  grep -qx 'STOPPING=1' <<<"$notes" || fail "no STOPPING=1: $notes"
  [[ $(grep -n -x -m1 'READY=1' <<<"$notes" | cut -d: -f1) -lt \
     $(grep -n -x 'STOPPING=1' <<<"$notes" | cut -d: -f1) ]] || fail "STOPPING before READY"
  echo "inside: ok"
}

if [[ ${1:-} == --inside ]]; then
  inside "$2" "$3"
  exit
fi

# -- outside: build the package, check its files ------------------------------------------
build=$(cd "${1:?usage: package_test.sh BUILD_DIR}" && pwd)
[[ $(id -u) -eq 0 ]] || { echo "SKIP: needs root (mount namespace)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -f "$build"/packages/clusterws_*.deb
cmake --build "$build" --target deb >"$tmp/deb.log" 2>&1 || { cat "$tmp/deb.log"; fail "make deb"; }
debs=("$build"/packages/clusterws_*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || fail "expected one package, found: ${debs[*]}"
deb=${debs[0]}

depends=$(dpkg-deb -f "$deb" Depends)
for lib in libc6 libssh2-1 liblmdb0 libssl3 libsystemd0; do
  grep -qE "(^|, )$lib( |,|$)" <<<"$depends" || fail "Depends (shlibdeps) lacks $lib: $depends"
done
dpkg-deb --ctrl-tarfile "$deb" | tar -x -C "$tmp" ./conffiles ./postinst ./prerm ./postrm
[[ $(cat "$tmp/conffiles") == $'/etc/clusterws/clusterws.conf\n/etc/logrotate.d/clusterws' ]] ||
  fail "conffiles: $(cat "$tmp/conffiles")"
# remove keeps the cluster's state, purge removes it (docs/operations.md)
awk '/"\$1" = purge/ { p = 1 } /rm -rf/ && !p { exit 1 }' "$tmp/postrm" ||
  fail "postrm removes files outside purge (the data must stay on remove)"
grep -qF 'rm -rf /var/lib/clusterws /var/lib/clusterws.replaced-* /var/log/clusterws' "$tmp/postrm" ||
  fail "postrm does not remove the state on purge"

# lintian: no error and no warning (docs/operations.md, "Package")
if command -v lintian >/dev/null; then
  lintian --fail-on error,warning "$deb" >"$tmp/lintian.out" 2>&1 ||
    fail "lintian: $(grep -v 'root privileges' "$tmp/lintian.out")"
fi

# paths and modes: "mode path" for files and directories, "link path -> target" for links
dpkg-deb -c "$deb" | awk '{ p = $6; sub(/^\./, "", p);
  if ($1 ~ /^l/) print "link " p " -> " $8; else print $1 " " p }' >"$tmp/files"
expect() {
  grep -qxF -e "$1" "$tmp/files" || fail "package lacks '$1'"
}
expect "-rwxr-xr-x /usr/sbin/clusterwsd"
expect "-rwxr-xr-x /usr/bin/clusterctl"
for t in lsdef nodels mkdef chdef rmdef xdsh tabdump gettab chtab tabch nodech nodeadd noderm \
  tabrestore tabprune makenetworks makehosts rcons; do
  expect "link /usr/bin/$t -> clusterctl"
  expect "-rw-r--r-- /usr/share/man/man1/$t.1.gz"
  expect "link /usr/share/bash-completion/completions/$t -> clusterctl"
done
expect "link /usr/sbin/rinstall -> ../bin/clusterctl"
expect "-rw-r--r-- /usr/share/man/man8/rinstall.8.gz"
expect "link /usr/share/bash-completion/completions/rinstall -> clusterctl"
expect "-rw-r--r-- /usr/share/man/man8/clusterwsd.8.gz"
expect "-rw-r--r-- /usr/share/man/man8/clusterctl.8.gz"
expect "-rw-r--r-- /usr/share/doc/clusterws/copyright"
expect "-rw-r--r-- /usr/share/doc/clusterws/changelog.gz"
expect "-rw-r--r-- /usr/share/bash-completion/completions/clusterctl"
expect "-rw-r--r-- /etc/clusterws/clusterws.conf"
expect "-rw-r--r-- /etc/logrotate.d/clusterws"
expect "-rw-r--r-- /lib/systemd/system/clusterwsd.service"
! grep -q ' /var/log' "$tmp/files" || fail "the package ships /var/log (postinst makes it)"
expect "-rw-r--r-- /usr/share/doc/clusterws/operations.md"
! grep -q ' /var/lib/clusterws' "$tmp/files" || fail "the package must not own /var/lib/clusterws"
! grep -q ' /usr/local' "$tmp/files" || fail "files under /usr/local"

mkdir "$tmp/root"
dpkg-deb -x "$deb" "$tmp/root"
zcat "$tmp/root/usr/share/man/man1/lsdef.1.gz" | grep -q '^lsdef \\- list object definitions' ||
  fail "lsdef.1 has no NAME line"
zcat "$tmp/root/usr/share/man/man1/mkdef.1.gz" | grep -A12 '^\.SH SYNOPSIS' | grep -q 'template' ||
  fail "mkdef.1's SYNOPSIS lacks its alternative forms"
unit=$tmp/root/lib/systemd/system/clusterwsd.service
grep -qx 'Type=notify' "$unit" && grep -qx 'ExecStart=/usr/sbin/clusterwsd' "$unit" ||
  fail "unit: Type=notify, ExecStart"
# a minimal Debian has no /bin/kill (procps, not a dependency): the shell's kill
grep -qxF "ExecReload=/bin/sh -c 'kill -HUP \"\$MAINPID\"'" "$unit" ||
  fail "unit: ExecReload $(grep ExecReload "$unit")"
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify --man=no "$unit" 2>&1 | grep -v 'is not executable' >&2 || true
  score=$(systemd-analyze security --offline=true "$unit" 2>/dev/null |
    sed -n 's/.*exposure level for clusterwsd.service: \([0-9.]*\).*/\1/p')
  [[ -n $score ]] && awk -v s="$score" 'BEGIN { exit !(s <= 3.0) }' ||
    fail "systemd-analyze security exposure '$score' (want <= 3.0)"
fi

unshare --mount --propagation private "$0" --inside "$tmp/root" "$tmp" ||
  fail "the installed service (see above)"
echo "package_test: ok ($(basename "$deb"))"
