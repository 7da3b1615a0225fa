#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "ssh/connection.hpp"

namespace cws::ssh {

/// Authenticated connections waiting for their next command, by pool key.
///
/// One list in the order the connections were parked serves both limits: the least recently
/// parked connection is the one `max_pooled` closes first and, since every connection may
/// idle for the same `pool_idle`, also the next one to expire. Each key keeps a queue of its
/// positions in that list. So `put`, `take`, eviction and expiry of one connection are O(1),
/// and nothing scans the pool. Engine thread only.
class pool {
 public:
  using clock = std::chrono::steady_clock;

  /// At most `max_pooled` connections, each closed after `idle` without use.
  pool(size_t max_pooled, clock::duration idle);

  /// Parks `c`, idle since `now`, then closes the least recently parked connections beyond
  /// `max_pooled`. `now` comes from a steady clock; an earlier time than the last `put`'s is
  /// taken as that one (the list stays in order).
  void put(std::unique_ptr<connection> c, clock::time_point now);

  /// Takes the connection parked longest ago under `key`.
  /// @returns null if there is none.
  std::unique_ptr<connection> take(const std::string& key);

  /// Closes every connection idle for `pool_idle` or longer at `now`.
  /// @returns how many were closed.
  size_t expire(clock::time_point now);

  /// When the next connection expires; nothing when the pool is empty.
  std::optional<clock::time_point> next_expiry() const;

  /// Closes every connection.
  void clear();

  /// Connections parked.
  size_t size() const noexcept {
    return parked_.size();
  }

 private:
  struct entry {
    std::unique_ptr<connection> conn;
    clock::time_point idle_since;
  };
  using list = std::list<entry>;

  /// Closes the least recently parked connection (the pool is not empty).
  void close_oldest();

  size_t max_;
  clock::duration idle_;
  /// Least recently parked first.
  list parked_;
  /// Per key, its entries in `parked_`, least recently parked first.
  std::unordered_map<std::string, std::deque<list::iterator>> by_key_;
};

} // namespace cws::ssh
