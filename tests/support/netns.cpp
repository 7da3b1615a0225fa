#include "netns.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace cws::test {

namespace {

int sh(const std::string& cmd) {
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace

netns_pair::netns_pair(const std::string& tag) {
  auto base = tag + "-" + std::to_string(::getpid());
  server_ = base + "-s";
  client_ = base + "-c";
  std::string templ = (std::filesystem::temp_directory_path() / (tag + "-XXXXXX")).string();
  if (::mkdtemp(templ.data()) != nullptr) {
    dir_ = templ;
  }
  // a leftover of a killed run of this very pid cannot exist, but one of ours might: clear it
  sh("ip netns del " + server_ + " 2>/dev/null; ip netns del " + client_ + " 2>/dev/null");
  auto s = " -n " + server_ + " ";
  auto c = " -n " + client_ + " ";
  ok_ = !dir_.empty() && sh("ip netns add " + server_) == 0 && sh("ip netns add " + client_) == 0
        && sh("ip" + s + "link set lo up && ip" + c + "link set lo up") == 0
        && sh(std::string{"ip link add "} + server_if + " netns " + server_
              + " type veth peer name " + client_if + " netns " + client_)
             == 0
        && sh("ip" + s + "addr add " + server_ip + "/24 dev " + server_if + " && ip" + s
              + "link set " + server_if + " up && ip" + c + "link set " + client_if + " up")
             == 0;
}

netns_pair::~netns_pair() {
  sh("ip netns del " + client_ + " 2>/dev/null; ip netns del " + server_ + " 2>/dev/null");
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string netns_pair::in_server() const {
  return "ip netns exec " + server_ + " ";
}

std::string netns_pair::in_client() const {
  return "ip netns exec " + client_ + " ";
}

bool netns_pair::set_client_mac(const std::string& mac) const {
  auto c = " -n " + client_ + " ";
  return sh("ip" + c + "link set " + client_if + " down && ip" + c + "link set " + client_if
            + " address " + mac + " && ip" + c + "link set " + client_if + " up")
         == 0;
}

std::map<std::string, std::string> netns_pair::dhcp_request(const std::vector<std::string>& extra,
                                                            int tries) const {
  auto script = dir_ + "/udhcpc.sh";
  auto out = dir_ + "/udhcpc.env";
  {
    std::ofstream f{script};
    // the lease script: the offered values, one per line; the interface stays unconfigured
    f << "#!/bin/sh\n[ \"$1\" = bound ] && env | grep -E "
         "'^(ip|mask|hostname|domain|siaddr|boot_file|bootfile|router|dns|sname)=' > '"
      << out << "'\nexit 0\n";
  }
  ::chmod(script.c_str(), 0755);
  std::filesystem::remove(out);
  std::string cmd = in_client() + "busybox udhcpc -i " + client_if + " -s '" + script
                    + "' -n -q -t " + std::to_string(tries) + " -T 1 -O bootfile";
  for (const auto& e : extra) {
    cmd += " '" + e + "'";
  }
  sh(cmd + " >/dev/null 2>&1");
  std::map<std::string, std::string> env;
  std::ifstream in{out};
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) {
      env[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return env;
}

test_process::test_process(const std::vector<std::string>& argv, const std::string& log,
                           const std::vector<std::string>& env) {
  pid_ = ::fork();
  if (pid_ == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    for (const auto& e : env) {
      ::putenv(const_cast<char*>(e.c_str()));
    }
    std::vector<char*> args;
    for (const auto& a : argv) {
      args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
}

test_process::~test_process() {
  stop();
}

bool test_process::running() {
  if (pid_ <= 0) {
    return false;
  }
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void test_process::stop() {
  if (pid_ <= 0) {
    return;
  }
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

} // namespace cws::test
