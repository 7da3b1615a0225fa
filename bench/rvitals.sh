#!/usr/bin/env bash
# rvitals temp over a farm of N simulated BMCs (ipmi_sim, 127.0.0.1, one UDP port each), each
# holding 4 sensor records compiled by sdrcomp:
#   - a sequential `ipmitool -I lanplus -C 3 ... sdr type Temperature` loop (the shell way)
#   - FreeIPMI's ipmi-sensors over the whole farm at once (its SDR cache filled first)
#   - clusterws: GET /nodes/{nr}/vitals/temp on the daemon, cold (every SDR repository read)
#     and warm (SDRs from the cache, sessions pooled)
# Needs packages openipmi, ipmitool, freeipmi-tools (scripts/bootstrap bench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
N=${N:-256}
for tool in ipmi_sim sdrcomp ipmitool ipmi-sensors; do
  command -v "$tool" >/dev/null || PATH=$PATH:/usr/sbin
  command -v "$tool" >/dev/null || { echo "rvitals: $tool is not installed (scripts/bootstrap bench)"; exit 0; }
done

farm=$WORK/bmcs
mkdir -p "$farm"
record() { # number type unit m r_exp name
  printf 'sdr type 1\n  sensor_owner_id 0x20\n  sensor_owner_lun 0\n  channel_number 0\n'
  printf '  sensor_number %s\n  entity_id 7\n  entity_instance 1\n  sensor_type %s\n' "$1" "$2"
  printf '  event_reading_type_code 1\n  analog_data_format unsigned\n  base_unit %s\n' "$3"
  printf '  linearization 0\n  m %s\n  b 0\n  r_exp %s\n  b_exp 0\n  init_scanning true\n' "$4" "$5"
  printf '  default_sensor_scan_on true\n  id_string "%s"\nendsdr\n' "$6"
}
{ record 1 1 1 1 0 "CPU Temp"; record 2 2 4 6 -2 "12V"; record 3 4 18 50 0 "Fan 1"
  record 4 1 1 1 0 "Inlet Temp"; } >"$farm/sdrs.txt"
sdrcomp -r -o "$farm/sdrs.bin" "$farm/sdrs.txt"
# one main_sdr_add per record: a 5-byte header whose last byte is the body's length
read -ra sdr_bytes <<<"$(od -An -v -tx1 "$farm/sdrs.bin" | tr -s ' \n' ' ')"
sdr_lines=""
at=0
while ((at + 5 <= ${#sdr_bytes[@]})); do
  len=$((5 + 16#${sdr_bytes[at + 4]}))
  sdr_lines+="main_sdr_add 0x20"
  for ((k = at; k < at + len; k++)); do sdr_lines+=" 0x${sdr_bytes[k]}"; done
  sdr_lines+=$'\n'
  at=$((at + len))
done
declare -a PORTS
for i in $(seq 0 $((N - 1))); do
  d=$farm/b$i
  mkdir -p "$d/state"
  port=$((31000 + i))
  PORTS[$i]=$port
  cat >"$d/lan.conf" <<CONF
name "b$i"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 $port
    priv_limit admin
    guid a123456789abcdefa123456789abcdef
  endlan
  user 2 true "admin" "secret" admin 10 none md2 md5 straight
CONF
  { printf 'mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02\n'
    printf '%s' "$sdr_lines"
    printf 'sensor_add 0x20 0 %s %s 1\nsensor_set_value 0x20 0 %s %s 0\n' 1 1 1 45 2 2 2 201 3 4 3 60 4 1 4 30
    printf 'mc_enable 0x20\n'; } >"$d/cmds.emu"
  ipmi_sim -c "$d/lan.conf" -f "$d/cmds.emu" -s "$d/state" -n >"$d/sim.log" 2>&1 &
  PIDS+=("$!")
done
wait_udp_bound 31000 "$N"

home=$WORK/home
pw=benchpw
init_home "$home" "$pw"
clusterctl chdef -t site clustersite ipmitimeout=2 ipmiretries=3 >/dev/null
define_bmc_nodes "${PORTS[@]}"

t0=$(now)
ok=0
for i in $(seq 0 $((N - 1))); do
  ipmitool -I lanplus -C 3 -H 127.0.0.1 -p "${PORTS[$i]}" -U admin -P secret sdr type Temperature 2>/dev/null | grep -q 'CPU Temp.*45 degrees' && ok=$((ok + 1))
done
t_ipmitool=$(secs "$t0" "$(now)")
echo "ipmitool loop:     ${t_ipmitool}s ($ok of $N read 45)"

hosts=$(for i in $(seq 0 $((N - 1))); do printf '127.0.0.1:%s,' "${PORTS[$i]}"; done)
sensors() {
  ipmi-sensors -D LAN_2_0 -I 3 -l ADMIN -W opensesspriv -u admin -p secret -h "${hosts%,}" \
    --sdr-cache-directory "$WORK/freeipmi" -t Temperature --quiet-cache 2>/dev/null | grep -c 'CPU Temp.*45' || true
}
mkdir -m 700 "$WORK/freeipmi" # ipmi-sensors refuses a cache directory others may read
sensors >/dev/null # its SDR cache, once per BMC (like clusterws' warm run)
t0=$(now)
ok=$(sensors)
t_sensors=$(secs "$t0" "$(now)")
echo "ipmi-sensors:      ${t_sensors}s ($ok of $N read 45, SDR cache warm)"

start_daemon "$home"
get() {
  curl -gs --cacert "$home/pki/ca-cert.pem" -o "$WORK/vitals.json" \
    "https://127.0.0.1:$DAEMON_PORT/clusterws/nodes/bmcs/vitals/temp?userName=root&userPW=$pw"
}
t0=$(now); get; t_cold=$(secs "$t0" "$(now)")
echo "REST cold:         ${t_cold}s ($(grep -o '"CPU Temp":"45 C' "$WORK/vitals.json" | wc -l) of $N read 45)"
warm=()
for _ in $(seq "$ROUNDS"); do
  t0=$(now); get; warm+=("$(secs "$t0" "$(now)")")
done
t_warm=$(printf '%s\n' "${warm[@]}" | median)
echo "REST warm:         ${t_warm}s ($(grep -o '"CPU Temp":"45 C' "$WORK/vitals.json" | wc -l) of $N read 45, median of $ROUNDS)"
stop_daemon

# no goal is set for rvitals (issue #15 sets rpower's); these mirror rpower's: cold against
# the loop (neither has SDRs cached), warm against ipmi-sensors with its SDR cache filled
goal "rvitals-cold-vs-ipmitool-loop" "$(ratio "$t_ipmitool" "$t_cold")" ">=" 10
goal "rvitals-warm-vs-ipmi-sensors" "$(ratio "$t_sensors" "$t_warm")" ">=" 1
goal "rvitals-warm-vs-cold" "$(ratio "$t_cold" "$t_warm")" ">=" 2
