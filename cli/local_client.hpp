#pragma once

// How a non-root caller reaches clusterwsd: the local Unix socket (the daemon names the caller
// by its peer credentials and applies policy as over HTTPS), with a small HTTP/1.1 client.

#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "store/home.hpp"

namespace cws::cli {

/// The daemon's local socket when this caller must go through it: not root, and the store of
/// `home` exists but cannot be read by the caller. nullopt: the direct path (root, a home the
/// caller owns, or no store there at all). $CLUSTERWS_SOCKET, else `local_socket` in the
/// configuration file when the caller may read it, else home::local_socket().
std::optional<std::filesystem::path> daemon_socket(const store::home& home);

/// The daemon's local socket for `home`, whoever calls: $CLUSTERWS_SOCKET, else
/// `local_socket` in the configuration file when the caller may read it, else
/// home::local_socket(). For what only the daemon has (the event stream).
std::filesystem::path local_socket_path(const store::home& home);

/// Connects to the daemon's local socket `path`; returns the descriptor (close-on-exec).
/// @throws std::runtime_error when nothing listens there (`not_running`: what to do, after
/// "clusterwsd is not running (nothing listens on PATH)."; empty: the lsdef users' advice)
/// or the connect fails.
int connect_local(const std::filesystem::path& path, std::string_view not_running = {});

/// Thrown by a tool that only root can run when daemon_socket() says the caller cannot open
/// the store; run_tool prints it with the tool's name.
class needs_root : public std::runtime_error {
 public:
  needs_root() : std::runtime_error("needs root") {
    // nop
  }
};

/// One answer of the daemon.
struct local_reply {
  unsigned status = 0;
  std::string body;
};

/// A minimal HTTP/1.1 client over a Unix stream socket: one request per connection
/// (`Connection: close`), the answer framed by Content-Length, chunked encoding or the end of
/// the connection.
class local_client {
 public:
  /// Answers larger than `max_body` are refused (a listing of a million nodes is ~1 GiB).
  explicit local_client(std::filesystem::path socket, size_t max_body = size_t{4} << 30);

  /// Sends `method target` with `body` (JSON when not empty); hands the answer's status and
  /// body to `on_body` piece by piece as it arrives (chunked encoding removed). Returns the
  /// status.
  /// @throws std::runtime_error when the daemon cannot be reached (with what to do) or the
  /// answer is malformed.
  unsigned request(std::string_view method, std::string_view target, std::string_view body,
                   const std::function<void(unsigned, std::string_view)>& on_body) const;

  /// The same, the body gathered whole.
  local_reply request(std::string_view method, std::string_view target,
                      std::string_view body = {}) const;

 private:
  std::filesystem::path socket_;
  size_t max_body_;
};

/// Percent-encodes `text` for a path segment or query value.
std::string url_encode(std::string_view text);

} // namespace cws::cli
