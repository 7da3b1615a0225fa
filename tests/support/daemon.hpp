#pragma once

#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace cws::test {

/// Runs `cmd` with the built tools first in PATH and CLUSTERWS_HOME set; returns its output
/// (stdout and stderr) and exit status.
struct command_result {
  int rc;
  std::string out;
};
command_result run_tool(const std::filesystem::path& home, const std::string& cmd);

/// What a tool printed on each stream, and its exit status.
struct tool_output {
  int rc;
  std::string out;
  std::string err;
};
/// Runs `cmd` as run_tool does, stdin empty, its two streams apart.
tool_output run_tool_streams(const std::filesystem::path& home, const std::string& cmd);

/// The whole text of a file (empty if it cannot be read), e.g. a log.
std::string slurp(const std::filesystem::path& p);

/// A real clusterwsd on 127.0.0.1 (a free port) over a fresh home, stopped by its pid.
class daemon {
 public:
  /// Initializes `home` (root's password `admin_password`) unless it is already initialized.
  daemon(std::filesystem::path home, std::string admin_password,
         std::vector<std::string> extra_args = {});
  ~daemon();

  daemon(const daemon&) = delete;
  daemon& operator=(const daemon&) = delete;

  /// Starts the daemon and waits until it listens.
  void start();

  /// Stops it with SIGTERM (or `sig`) and waits for it; returns its exit status.
  int stop(int sig = 15);

  unsigned short port() const noexcept {
    return port_;
  }

  pid_t pid() const noexcept {
    return pid_;
  }

  const std::filesystem::path& home() const noexcept {
    return home_;
  }

  std::filesystem::path ca() const {
    return home_ / "pki" / "ca-cert.pem";
  }

  /// `/clusterws/<path>?userName=root&userPW=...` with `extra` appended (`&a=b`).
  std::string url(const std::string& path, const std::string& extra = {}) const;

  /// The daemon's log (stdout and stderr).
  std::filesystem::path log() const {
    return home_ / "clusterwsd.log";
  }

 private:
  std::filesystem::path home_;
  std::string password_;
  std::vector<std::string> args_;
  pid_t pid_ = -1;
  unsigned short port_ = 0;
};

/// `cmd` run by Unix user `user` (setpriv: its ids and groups) with the tools and `home` in
/// the environment, as the user's shell would.
command_result as_user(const std::filesystem::path& home, const std::string& user,
                       const std::string& cmd);
inline command_result as_user(const daemon& d, const std::string& user, const std::string& cmd) {
  return as_user(d.home(), user, cmd);
}

/// The local socket the daemon announced in its log (`local tools connect to PATH`); "" if
/// none.
std::string announced_socket(const daemon& d);

} // namespace cws::test
