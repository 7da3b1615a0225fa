#include "sshd.hpp"

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <fstream>
#include <netinet/in.h>
#include <pwd.h>
#include <sstream>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace cws::test {

namespace {

bool can_connect(unsigned short port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

} // namespace

unsigned short free_port() {
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

void make_key(const std::filesystem::path& path) {
  std::filesystem::create_directories(path.parent_path());
  std::filesystem::remove(path);
  std::filesystem::remove(path.string() + ".pub");
  std::string cmd = "ssh-keygen -q -t ed25519 -N '' -C test -f '" + path.string() + "' </dev/null";
  if (std::system(cmd.c_str()) != 0) {
    throw std::runtime_error("ssh-keygen failed");
  }
}

bool ensure_user(const std::string& name) {
  if (geteuid() != 0) {
    return getpwnam(name.c_str()) != nullptr;
  }
  if (getpwnam(name.c_str()) == nullptr) {
    // a test running in parallel may create it first: only the result counts
    std::string add = "useradd -m -s /bin/sh '" + name + "' >/dev/null 2>&1";
    (void)std::system(add.c_str());
    if (getpwnam(name.c_str()) == nullptr) {
      return false;
    }
  }
  // useradd locks the account ('!'), and sshd without PAM refuses locked accounts: '*' means
  // "no password" without the lock
  std::string unlock = "usermod -p '*' '" + name + "' >/dev/null 2>&1";
  return std::system(unlock.c_str()) == 0;
}

sshd::sshd(std::filesystem::path dir, bool sftp) : dir_(std::move(dir)), port_(free_port()) {
  namespace fs = std::filesystem;
  fs::create_directories(dir_ / "authorized");
  // sshd reads authorized keys as the user: the way there must be open to everyone
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec
                          | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(dir_ / "authorized", fs::perms::owner_all | fs::perms::group_read
                                         | fs::perms::group_exec | fs::perms::others_read
                                         | fs::perms::others_exec);
  for (auto p = dir_.parent_path(); p != p.root_path(); p = p.parent_path()) {
    fs::permissions(p, fs::perms::others_exec, fs::perm_options::add);
  }
  std::string keygen
    = "ssh-keygen -q -t ed25519 -N '' -f '" + (dir_ / "host_key").string() + "' </dev/null";
  if (std::system(keygen.c_str()) != 0) {
    throw std::runtime_error("ssh-keygen failed");
  }
  fs::create_directories("/run/sshd");
  std::ofstream{dir_ / "sshd_config"}
    << "Port " << port_ << "\nListenAddress 127.0.0.1\nAddressFamily inet\n"
    << "HostKey " << (dir_ / "host_key").string() << "\n"
    << "PidFile none\nAuthorizedKeysFile " << (dir_ / "authorized").string() << "/%u\n"
    << "PermitRootLogin prohibit-password\nPubkeyAuthentication yes\n"
    << "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nUseDNS no\n"
    << "PrintMotd no\nPrintLastLog no\nX11Forwarding no\nAllowTcpForwarding no\n"
    << "StrictModes no\nMaxStartups 4096\nMaxSessions 1024\nLoginGraceTime 60\n"
    << "LogLevel INFO\nSetEnv SHLVL=1\n"
    << (sftp ? "Subsystem sftp internal-sftp\n" : "");
}

sshd::~sshd() {
  stop();
}

void sshd::authorize(const std::string& user, const std::filesystem::path& public_key) {
  std::ifstream in{public_key};
  std::stringstream key;
  key << in.rdbuf();
  auto file = dir_ / "authorized" / user;
  std::ofstream{file, std::ios::app} << key.str();
  std::filesystem::permissions(
    file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write
            | std::filesystem::perms::group_read | std::filesystem::perms::others_read);
}

void sshd::start() {
  pid_ = fork();
  if (pid_ < 0) {
    throw std::runtime_error("fork failed");
  }
  if (pid_ == 0) {
    auto config = (dir_ / "sshd_config").string();
    auto log = (dir_ / "sshd.log").string();
    execl("/usr/sbin/sshd", "/usr/sbin/sshd", "-D", "-f", config.c_str(), "-E", log.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  // ours listens once its log says so: a connect alone may reach another program that took
  // the port between free_port() and sshd's bind (then sshd exits, and the nodes' SSH would
  // fail at once for reasons no test looks for)
  auto listening = "Server listening on 127.0.0.1 port " + std::to_string(port_) + ".";
  for (int i = 0; i < 500; ++i) {
    std::ifstream log{dir_ / "sshd.log"};
    std::stringstream text;
    text << log.rdbuf();
    if (text.str().find(listening) != std::string::npos && can_connect(port_)) {
      return;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("sshd exited at start; see " + (dir_ / "sshd.log").string());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("sshd did not start");
}

/// Every descendant of `pid` (read from /proc), deepest last.
std::vector<pid_t> descendants(pid_t pid) {
  std::vector<std::pair<pid_t, pid_t>> parent_of;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    auto name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::ifstream in{e.path() / "stat"};
    std::string stat;
    std::getline(in, stat);
    auto close = stat.rfind(')');
    if (close == std::string::npos) {
      continue;
    }
    std::istringstream rest{stat.substr(close + 2)};
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    parent_of.emplace_back(std::stoi(name), ppid);
  }
  std::vector<pid_t> out{pid};
  for (size_t i = 0; i < out.size(); ++i) {
    for (auto [child, parent] : parent_of) {
      if (parent == out[i]) {
        out.push_back(child);
      }
    }
  }
  out.erase(out.begin());
  return out;
}

void sshd::stop() {
  if (pid_ > 0) {
    // a restart drops every connection: end the per-connection processes too
    for (auto child : descendants(pid_)) {
      kill(child, SIGKILL);
    }
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

void sshd::new_host_key() {
  std::filesystem::remove(dir_ / "host_key");
  std::filesystem::remove(dir_ / "host_key.pub");
  std::string keygen
    = "ssh-keygen -q -t ed25519 -N '' -f '" + (dir_ / "host_key").string() + "' </dev/null";
  if (std::system(keygen.c_str()) != 0) {
    throw std::runtime_error("ssh-keygen failed");
  }
}

int sshd::logins() const {
  std::ifstream in{dir_ / "sshd.log"};
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    n += line.find("Accepted publickey") != std::string::npos ? 1 : 0;
  }
  return n;
}

} // namespace cws::test
