#pragma once

#include <filesystem>
#include <string>
#include <sys/types.h>

namespace cws::test {

/// A free TCP port on 127.0.0.1 (bound, then released).
unsigned short free_port();

/// Creates an ed25519 key pair `<path>` and `<path>.pub` with ssh-keygen.
void make_key(const std::filesystem::path& path);

/// Creates the local user `name` (no password, /bin/sh) unless it exists. Needs root;
/// returns false when it cannot.
bool ensure_user(const std::string& name);

/// A private sshd on 127.0.0.1 with its own config, host key and authorized keys: the "nodes"
/// of the nodeshell tests. `UsePAM no`; `SetEnv SHLVL=1` so root's bashrc is not run; limits
/// raised for high fanout. Stopped by its pid.
class sshd {
 public:
  /// `sftp` false: no `Subsystem sftp` line, as on nodes whose sshd serves none (the copies
  /// then go over exec channels).
  explicit sshd(std::filesystem::path dir, bool sftp = true);
  ~sshd();

  sshd(const sshd&) = delete;
  sshd& operator=(const sshd&) = delete;

  /// Lets `user` log in with `public_key`.
  void authorize(const std::string& user, const std::filesystem::path& public_key);

  /// Starts (or starts again, same port and host key) and waits until it accepts.
  void start();

  /// Stops it (SIGTERM, then waits).
  void stop();

  unsigned short port() const noexcept {
    return port_;
  }

  /// Logins accepted so far (counted in its log): each one is a new connection.
  int logins() const;

  /// Replaces the host key (takes effect at the next start): the node "was reinstalled".
  void new_host_key();

 private:
  std::filesystem::path dir_;
  unsigned short port_;
  pid_t pid_ = -1;
};

} // namespace cws::test
