#!/usr/bin/env bash
# A loopback-only SSH "node farm": one private sshd on 127.0.0.1:PORT serving every node name.
#   bench/sshfarm.sh start DIR PORT   -> prints the sshd pid; DIR/ssh_config maps node* to it
#   bench/sshfarm.sh stop DIR
set -euo pipefail
cmd=$1 dir=$2
if [[ $cmd == stop ]]; then
  [[ -s $dir/sshd.pid ]] && kill "$(cat "$dir/sshd.pid")" 2>/dev/null || true
  exit 0
fi
port=$3
mkdir -p "$dir" /run/sshd
chmod 755 "$dir"
[[ -f $dir/host_key ]] || ssh-keygen -q -t ed25519 -N '' -f "$dir/host_key"
[[ -f $dir/id_ed25519 ]] || ssh-keygen -q -t ed25519 -N '' -f "$dir/id_ed25519"
touch "$dir/authorized_keys"
grep -qF "$(cat "$dir/id_ed25519.pub")" "$dir/authorized_keys" || cat "$dir/id_ed25519.pub" >>"$dir/authorized_keys"
cat >"$dir/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
AddressFamily inet
HostKey $dir/host_key
PidFile none
AuthorizedKeysFile $dir/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
StrictModes no
# many concurrent unauthenticated connections at high fanout
MaxStartups 4096
MaxSessions 1024
LogLevel ERROR
# root's .bashrc here runs pyenv (+250 ms a shell): keep bash from reading it
SetEnv SHLVL=1
# SFTP: xdcp and clush --copy (scp speaks SFTP since OpenSSH 9)
Subsystem sftp internal-sftp
CONF
cat >"$dir/ssh_config" <<CONF
Host node*
    HostName 127.0.0.1
    Port $port
    User root
    IdentityFile $dir/id_ed25519
    IdentitiesOnly yes
    StrictHostKeyChecking no
    UserKnownHostsFile /dev/null
    GlobalKnownHostsFile /dev/null
    CheckHostIP no
    BatchMode yes
    LogLevel ERROR
CONF
/usr/sbin/sshd -D -f "$dir/sshd_config" -E "$dir/sshd.log" </dev/null >/dev/null 2>&1 &
echo $! >"$dir/sshd.pid"
for _ in $(seq 200); do (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.02; done
cat "$dir/sshd.pid"
