#pragma once

#include <string>
#include <string_view>

#include "base/node_errc.hpp"

namespace cws::base {

/// How one node's part of a fan-out operation ended: the one per-node result type of every
/// transport (ssh, ipmi, virt; the prober's outcome carries the same error codes) and of
/// every layer above it.
struct node_result {
  /// The node's name.
  std::string name;
  /// Exit status; -1 when the operation did not finish.
  int rc = -1;
  std::string out;
  std::string err;
  /// Output went past the configured maximum; the rest was read and dropped.
  bool truncated = false;
  /// Empty on success; else a short code, `to_string(node_errc)`: the table of every code is
  /// in docs/api.md "Per-node error codes".
  std::string error;
  /// What happened, in words (`ssh: connect to host n1 port 22: Connection refused`).
  std::string message;
  /// The work ran on a pooled connection (no connect, no key exchange).
  bool reused = false;

  /// True if the node failed (an error or a non-zero exit status).
  bool failed() const {
    return !error.empty() || rc != 0;
  }

  /// The result of node `name` that failed with `why` (rc -1).
  static node_result failure(std::string name, node_errc why, std::string_view message) {
    node_result r;
    r.name = std::move(name);
    r.error = to_string(why);
    r.message = message;
    return r;
  }
};

} // namespace cws::base
