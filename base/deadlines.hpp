#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cws::base {

/// The deadlines of running work (a connect or command timeout, a retry), by id and in time order,
/// so that the loop finds the next one and those that have passed without looking at every
/// piece of work. O(log n) per change. One thread (an event loop's).
class deadlines {
 public:
  using clock = std::chrono::steady_clock;

  /// Sets the deadline of `id`, replacing the one it had.
  void set(uint64_t id, clock::time_point when);

  /// Removes the deadline of `id`, if it has one.
  void clear(uint64_t id);

  /// The earliest deadline; nothing when there is none.
  std::optional<clock::time_point> next() const;

  /// Removes the deadlines at `now` or earlier.
  /// @returns their ids, earliest first.
  std::vector<uint64_t> take_due(clock::time_point now);

  /// Deadlines set.
  size_t size() const noexcept {
    return by_id_.size();
  }

 private:
  std::set<std::pair<clock::time_point, uint64_t>> by_time_;
  std::unordered_map<uint64_t, clock::time_point> by_id_;
};

} // namespace cws::base
