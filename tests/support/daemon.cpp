#include "daemon.hpp"

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace cws::test {

command_result run_tool(const std::filesystem::path& home, const std::string& cmd) {
  std::string line = "export PATH=" CLUSTERWS_BIN_DIR ":$PATH CLUSTERWS_HOME='" + home.string()
                     + "'; { " + cmd + "; } 2>&1";
  command_result r{0, {}};
  FILE* p = popen(line.c_str(), "r");
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) {
    r.out.append(buf.data(), n);
  }
  int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

daemon::daemon(std::filesystem::path home, std::string admin_password,
               std::vector<std::string> extra_args)
    : home_(std::move(home)), password_(std::move(admin_password)), args_(std::move(extra_args)) {
  if (!std::filesystem::exists(home_ / "db" / "data.mdb")) {
    auto r = run_tool(home_, "clusterctl init --no-networks --admin-password '" + password_ + "'");
    if (r.rc != 0) {
      throw std::runtime_error("clusterctl init failed: " + r.out);
    }
  }
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in{p};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

tool_output run_tool_streams(const std::filesystem::path& home, const std::string& cmd) {
  char dir[] = "/tmp/cws-tool-XXXXXX";
  if (::mkdtemp(dir) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  std::filesystem::path io{dir};
  std::string line = "PATH=" CLUSTERWS_BIN_DIR ":$PATH CLUSTERWS_HOME='" + home.string() + "' "
                     + cmd + " </dev/null >'" + (io / "out").string() + "' 2>'"
                     + (io / "err").string() + "'";
  int status = std::system(line.c_str());
  tool_output r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(io / "out"), slurp(io / "err")};
  std::filesystem::remove_all(io);
  return r;
}

daemon::~daemon() {
  if (pid_ > 0) {
    stop(SIGKILL);
  }
}

void daemon::start() {
  auto port_file = home_ / "port";
  std::filesystem::remove(port_file);
  pid_ = fork();
  if (pid_ < 0) {
    throw std::runtime_error("fork failed");
  }
  if (pid_ == 0) {
    int fd = ::open(log().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<std::string> args{CLUSTERWS_BIN_DIR "/clusterwsd",
                                  "--home",
                                  home_.string(),
                                  "--listen",
                                  "127.0.0.1:0",
                                  "--port-file",
                                  port_file.string()};
    args.insert(args.end(), args_.begin(), args_.end());
    std::vector<char*> argv;
    for (auto& a : args) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  // wait for the port file (written atomically once the socket listens)
  for (int i = 0; i < 600; ++i) {
    std::ifstream in{port_file};
    if (in >> port_) {
      return;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("clusterwsd exited at start; see " + log().string());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("clusterwsd did not start listening");
}

int daemon::stop(int sig) {
  if (pid_ <= 0) {
    return -1;
  }
  kill(pid_, sig);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string daemon::url(const std::string& path, const std::string& extra) const {
  return "/clusterws" + path + "?userName=root&userPW=" + password_ + extra;
}

command_result as_user(const std::filesystem::path& home, const std::string& user,
                       const std::string& cmd) {
  std::string quoted;
  for (char c : cmd) {
    quoted += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  }
  return run_tool(home, "setpriv --reuid=" + user + " --regid=" + user + " --init-groups sh -c '"
                          + quoted + "'");
}

std::string announced_socket(const daemon& d) {
  auto log = slurp(d.log());
  constexpr std::string_view mark = "local tools connect to ";
  auto at = log.rfind(mark);
  if (at == std::string::npos) {
    return {};
  }
  auto start = at + mark.size();
  return log.substr(start, log.find('\n', start) - start);
}

} // namespace cws::test
