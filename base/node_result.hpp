#pragma once

#include <string>

namespace cws::base {

/// How one node's part of a fan-out operation ended: the one per-node result type of every
/// transport (SSH now; IPMI and libvirt next) and of every layer above it.
struct node_result {
  /// The node's name.
  std::string name;
  /// Exit status; -1 when the operation did not finish.
  int rc = -1;
  std::string out;
  std::string err;
  /// Output went past the configured maximum; the rest was read and dropped.
  bool truncated = false;
  /// Empty on success; else a short code: resolve, refused, unreachable, connect-timeout,
  /// handshake, host-key, auth, channel, timeout, disconnected, cancelled, not-found.
  std::string error;
  /// What happened, in words (`ssh: connect to host n1 port 22: Connection refused`).
  std::string message;
  /// The work ran on a pooled connection (no connect, no key exchange).
  bool reused = false;

  /// True if the node failed (an error or a non-zero exit status).
  bool failed() const {
    return !error.empty() || rc != 0;
  }
};

} // namespace cws::base
