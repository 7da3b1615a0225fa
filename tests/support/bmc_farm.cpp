#include "bmc_farm.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <netinet/in.h>
#include <poll.h>
#include <sstream>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace cws::test {

namespace {

namespace fs = std::filesystem;

/// A UDP port on 127.0.0.1 free now (bound, then released).
unsigned short free_udp_port() {
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

/// A TCP port on 127.0.0.1 free now (bound, then released).
unsigned short free_tcp_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

/// Reads from `fd` until `out` ends with the console's prompt or `until` passes.
bool read_prompt(int fd, std::string& out, std::chrono::steady_clock::time_point until) {
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) {
      continue;
    }
    char buf[512];
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      return false;
    }
    out.append(buf, static_cast<size_t>(n));
    if (out.size() >= 2 && out.compare(out.size() - 2, 2, "> ") == 0) {
      return true;
    }
  }
  return false;
}

/// True if a UDP socket is bound to 127.0.0.1:port (/proc/net/udp).
bool udp_bound(unsigned short port) {
  std::ifstream in{"/proc/net/udp"};
  char want[32];
  std::snprintf(want, sizeof want, "0100007F:%04X", port);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(want) != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::string slurp(const fs::path& p) {
  std::ifstream in{p};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) {
    s.pop_back();
  }
  return s;
}

constexpr const char* chassis_script = R"SH(#!/bin/sh
# ipmi_sim chassis control: $1 is this BMC's directory, then get PARMS or set PARM VALUE...
dir=$1; op=$2; shift 2
echo "$op $*" >> "$dir/log"
[ -s "$dir/delay" ] && sleep "$(cat "$dir/delay")"
case $op in
  get) for p in "$@"; do
         case $p in
           power) echo "power:$(cat "$dir/power")";;
           boot) echo "boot:$(cat "$dir/boot")";;
         esac
       done;;
  set) while [ $# -ge 2 ]; do
         case $1 in
           power) echo "$2" > "$dir/power"
                  [ "$2" = 1 ] && date +%s.%N >> "$dir/power-on-times";;
           boot) echo "$2" > "$dir/boot";;
         esac
         shift 2
       done;;
esac
exit 0
)SH";

} // namespace

bool have_ipmi_sim() {
  return ::access("/usr/bin/ipmi_sim", X_OK) == 0;
}

bmc_farm::bmc_farm(fs::path dir, size_t count, std::string password,
                   std::vector<unsigned short> sol_ports)
    : dir_(std::move(dir)), password_(std::move(password)) {
  fs::create_directories(dir_);
  auto script = dir_ / "chassis.sh";
  std::ofstream{script} << chassis_script;
  fs::permissions(script, fs::perms::owner_all);
  ports_.resize(count);
  consoles_.resize(count);
  pids_.assign(count, -1);
  for (size_t i = 0; i < count; ++i) {
    auto d = dir_ / ("bmc" + std::to_string(i));
    fs::create_directories(d / "state");
    std::ofstream{d / "power"} << "0\n";
    std::ofstream{d / "boot"} << "default\n";
    std::ofstream{d / "log"};
    ports_[i] = free_udp_port();
    consoles_[i] = free_tcp_port();
    std::ofstream{d / "lan.conf"}
      << "name \"bmc" << i << "\"\nset_working_mc 0x20\n  startlan 1\n    addr 127.0.0.1 "
      << ports_[i] << "\n    priv_limit admin\n    guid a123456789abcdefa123456789abcdef\n"
      << "  endlan\n  chassis_control \"" << script.string() << " " << d.string() << "\"\n"
      << "  console 127.0.0.1 " << consoles_[i] << "\n"
      << (i < sol_ports.size()
            ? "  sol \"tcp:127.0.0.1:" + std::to_string(sol_ports[i]) + "\" 115200\n"
            : std::string{})
      << "  user 2 true \"admin\" \"" << password_ << "\" admin 10 none md2 md5 straight\n";
    std::ofstream{d / "cmds.emu"}
      << "mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 "
         "persist_sdr\nsel_enable 0x20 1000 0x0a\nmc_enable 0x20\n";
  }
  for (size_t i = 0; i < count; ++i) {
    start(i);
  }
}

bmc_farm::~bmc_farm() {
  for (size_t i = 0; i < pids_.size(); ++i) {
    stop(i);
  }
}

void bmc_farm::start(size_t i) {
  if (pids_.at(i) > 0) {
    return;
  }
  auto d = dir_ / ("bmc" + std::to_string(i));
  pid_t pid = fork();
  if (pid < 0) {
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    auto conf = (d / "lan.conf").string();
    auto cmds = (d / "cmds.emu").string();
    auto state = (d / "state").string();
    auto log = (d / "sim.log").string();
    if (FILE* f = std::freopen(log.c_str(), "w", stdout)) {
      (void)f;
      dup2(STDOUT_FILENO, STDERR_FILENO);
    }
    // its console (emu) may write to a client that has just gone: no SIGPIPE death
    std::signal(SIGPIPE, SIG_IGN);
    execl("/usr/bin/ipmi_sim", "ipmi_sim", "-c", conf.c_str(), "-f", cmds.c_str(), "-s",
          state.c_str(), "-n", static_cast<char*>(nullptr));
    _exit(127);
  }
  pids_[i] = pid;
  for (int tries = 0; tries < 500; ++tries) {
    if (udp_bound(ports_[i])) {
      return;
    }
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      pids_[i] = -1;
      throw std::runtime_error("ipmi_sim exited at start; see " + (d / "sim.log").string());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("ipmi_sim did not bind its port in 5 s");
}

void bmc_farm::stop(size_t i, int sig) {
  if (pids_.at(i) <= 0) {
    return;
  }
  ::kill(pids_[i], sig);
  int status = 0;
  waitpid(pids_[i], &status, 0);
  pids_[i] = -1;
}

std::string bmc_farm::power(size_t i) const {
  return trimmed(slurp(dir_ / ("bmc" + std::to_string(i)) / "power"));
}

void bmc_farm::set_power(size_t i, bool on) {
  std::ofstream{dir_ / ("bmc" + std::to_string(i)) / "power"} << (on ? "1\n" : "0\n");
}

std::string bmc_farm::boot(size_t i) const {
  return trimmed(slurp(dir_ / ("bmc" + std::to_string(i)) / "boot"));
}

std::vector<double> bmc_farm::power_on_times(size_t i) const {
  std::vector<double> out;
  std::istringstream in{slurp(dir_ / ("bmc" + std::to_string(i)) / "power-on-times")};
  double t = 0;
  while (in >> t) {
    out.push_back(t);
  }
  return out;
}

std::string bmc_farm::log(size_t i) const {
  return slurp(dir_ / ("bmc" + std::to_string(i)) / "log");
}

void bmc_farm::set_hardware(size_t i, const bmc_hardware& hw) {
  auto d = dir_ / ("bmc" + std::to_string(i));
  std::ofstream{d / "sdrs.txt"} << hw.sdrs;
  std::string emu
    = "mc_setbmc 0x20\nmc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02 persist_sdr\n";
  if (!hw.sdrs.empty()) {
    auto bin = d / "sdrs.bin";
    std::string cmd = "sdrcomp -r -o '" + bin.string() + "' '" + (d / "sdrs.txt").string() + "' > '"
                      + (d / "sdrcomp.log").string() + "' 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      throw std::runtime_error("sdrcomp failed; see " + (d / "sdrcomp.log").string());
    }
    auto raw = slurp(bin);
    // one main_sdr_add per record: a 5-byte header whose last byte is the body's length
    for (size_t at = 0; at + 5 <= raw.size();) {
      size_t len = 5 + static_cast<uint8_t>(raw[at + 4]);
      emu += "main_sdr_add 0x20";
      for (size_t k = at; k < at + len && k < raw.size(); ++k) {
        char b[8];
        std::snprintf(b, sizeof b, " 0x%02x", static_cast<uint8_t>(raw[k]));
        emu += b;
      }
      emu += '\n';
      at += len;
    }
  }
  for (const auto& s : hw.sensors) {
    emu += "sensor_add 0x20 0 " + std::to_string(s.number) + " " + std::to_string(s.type) + " "
           + std::to_string(s.event_type) + "\nsensor_set_value 0x20 0 " + std::to_string(s.number)
           + " " + std::to_string(s.raw) + " 0\n";
  }
  if (!hw.fru.empty()) {
    char size[24];
    std::snprintf(size, sizeof size, "0x%zx", hw.fru.size());
    emu += std::string{"mc_add_fru_data 0x20 0 "} + size + " data";
    for (auto b : hw.fru) {
      char v[8];
      std::snprintf(v, sizeof v, " 0x%02x", b);
      emu += v;
    }
    emu += '\n';
  }
  emu += "mc_enable 0x20\n";
  stop(i);
  std::ofstream{d / "cmds.emu"} << emu;
  // the repository persists in the state directory: start from the emulator file alone
  fs::remove_all(d / "state" / "ipmi_sim");
  start(i);
}

void bmc_farm::set_delay(size_t i, double seconds) {
  std::ofstream out{dir_ / ("bmc" + std::to_string(i)) / "delay"};
  if (seconds > 0) {
    out << seconds << '\n';
  }
}

} // namespace cws::test

namespace cws::test {

std::string bmc_farm::emu(size_t i, const std::string& command) const {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(consoles_.at(i));
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    if (fd >= 0) {
      ::close(fd);
    }
    throw std::runtime_error("bmc" + std::to_string(i) + ": no console");
  }
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::string out;
  bool ok = read_prompt(fd, out, until); // telnet options, then "> "
  out.clear();
  auto line = command + "\n";
  ok = ok && ::send(fd, line.data(), line.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(line.size())
       && read_prompt(fd, out, until);
  ::close(fd);
  if (!ok) {
    throw std::runtime_error("bmc" + std::to_string(i) + ": console did not answer " + command);
  }
  // the echoed command, then its output, then the prompt
  auto start = out.find('\n');
  out = start == std::string::npos ? std::string{} : out.substr(start + 1);
  if (out.size() >= 2 && out.compare(out.size() - 2, 2, "> ") == 0) {
    out.resize(out.size() - 2);
  }
  while (!out.empty() && (out.back() == '\r' || out.back() == '\n')) {
    out.pop_back();
  }
  return out;
}

} // namespace cws::test
