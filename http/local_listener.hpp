#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "http/beast.hpp"
#include "http/session.hpp"

namespace cws::http {

/// Listens on the local Unix socket (setting `local_socket`): plain HTTP into the same
/// router, dispatcher and policy as HTTPS, the caller named by the kernel (SO_PEERCRED), so
/// that non-root users run lsdef, nodels and xdsh as themselves without a password.
class local_listener : public std::enable_shared_from_this<local_listener> {
 public:
  /// Creates the socket at `path`, any local user may connect (0666) but no one else may
  /// replace it: its directory is made (0755) or must be a directory of this user or root
  /// that no one else may write to. A socket left by a crash (nobody accepts) is replaced;
  /// one that answers (another daemon) or a path that is not a socket is refused.
  /// @throws std::runtime_error naming the path and the reason.
  local_listener(std::vector<net::io_context*> iocs, std::filesystem::path path,
                 std::shared_ptr<session_context> ctx);
  /// Removes the socket if it is still the one this listener made.
  ~local_listener();

  local_listener(const local_listener&) = delete;
  local_listener& operator=(const local_listener&) = delete;

  /// Starts accepting.
  void run();

  /// Stops accepting and removes the socket (sessions in progress go on).
  void stop();

  /// The socket's path.
  const std::filesystem::path& path() const noexcept {
    return path_;
  }

 private:
  void do_accept();
  void on_accept(beast::error_code ec, unix_socket socket);
  /// Unlinks the socket file if it is still ours (same device and inode).
  void remove_socket() noexcept;

  std::vector<net::io_context*> iocs_;
  size_t next_ = 0;
  std::filesystem::path path_;
  net::basic_socket_acceptor<unix_protocol, io_executor> acceptor_;
  std::shared_ptr<session_context> ctx_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool made_ = false;
};

/// The name of the Unix user at the other end of local socket `fd` (SO_PEERCRED, then the
/// password database), or "" when the kernel gives no uid or the uid has no name.
std::string peer_user_name(int fd);

} // namespace cws::http
