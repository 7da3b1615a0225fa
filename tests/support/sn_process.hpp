#pragma once

// A clusterwsd --service-node process for the whole-daemon tests (docs/service-nodes.md).

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace cws::test {

/// A clusterwsd --service-node process, stopped by its pid.
class service_node {
 public:
  explicit service_node(std::filesystem::path home) : home_(std::move(home)) {
    // nop
  }
  ~service_node() {
    if (pid_ > 0) {
      stop(SIGKILL);
    }
  }
  void start() {
    pid_ = fork();
    if (pid_ == 0) {
      int fd = ::open(log().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
      dup2(fd, 1);
      dup2(fd, 2);
      std::string bin = CLUSTERWS_BIN_DIR "/clusterwsd";
      std::string h = home_.string();
      execl(bin.c_str(), bin.c_str(), "--service-node", "--home", h.c_str(), nullptr);
      _exit(127);
    }
  }
  /// Its exit status once it ended on its own within `wait`, else -1.
  int exited_within(std::chrono::milliseconds wait) {
    auto until = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
  int stop(int sig = SIGTERM) {
    if (pid_ <= 0) {
      return -1;
    }
    if (sig == SIGTERM) {
      kill(pid_, SIGCONT);
    }
    kill(pid_, sig);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  pid_t pid() const {
    return pid_;
  }
  std::filesystem::path log() const {
    return home_ / "clusterwsd.log";
  }
  const std::filesystem::path& home() const {
    return home_;
  }

 private:
  std::filesystem::path home_;
  pid_t pid_ = -1;
};

} // namespace cws::test
