#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace cws::http {

/// Open connections per peer (a client address on the HTTPS port, a uid on the local
/// socket), so that one peer cannot take every connection the service allows
/// (max_connections_per_client, local_max_connections_per_user). Any thread: a listener
/// takes, a session ending on any io thread gives back.
class peer_limit {
 public:
  /// Counts one more connection of `peer` unless it has `max` already.
  /// @returns whether it was counted.
  bool take(const std::string& peer, size_t max);

  /// Counts one connection of `peer` less (one `take` counted).
  void give(const std::string& peer);

  /// Connections of `peer` now.
  size_t count(const std::string& peer) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, size_t> open_;
};

} // namespace cws::http
