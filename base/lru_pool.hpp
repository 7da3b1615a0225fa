#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <optional>
#include <unordered_map>
#include <utility>

namespace cws::base {

/// Idle connections (or anything an engine parks for reuse) waiting for their next job, by key.
///
/// One list in the order the values were parked serves both limits: the least recently
/// parked value is the one `max_pooled` closes first and, since every value may idle for the
/// same `idle`, also the next one to expire. Each key keeps a queue of its positions in that
/// list. So `put`, `take`, eviction and expiry of one value are O(1), and nothing scans the
/// pool. A value is closed by destroying it, after `on_close` (e.g. a goodbye message to the
/// peer) if one is given. One thread (an event loop's).
template<class Key, class T, class Hash = std::hash<Key>>
class lru_pool {
 public:
  using clock = std::chrono::steady_clock;
  using close_fn = std::function<void(T&)>;

  /// At most `max_pooled` values, each closed after `idle` without use.
  lru_pool(size_t max_pooled, clock::duration idle, close_fn on_close = nullptr)
      : max_(max_pooled), idle_(idle), on_close_(std::move(on_close)) {
    // nop
  }

  ~lru_pool() {
    clear();
  }

  lru_pool(const lru_pool&) = delete;
  lru_pool& operator=(const lru_pool&) = delete;

  /// Parks `value` under `key`, idle since `now`, then closes the least recently parked
  /// values beyond `max_pooled`. `now` comes from a steady clock; an earlier time than the
  /// last `put`'s is taken as that one (the list stays in order).
  void put(const Key& key, T value, clock::time_point now) {
    if (!parked_.empty() && now < parked_.back().idle_since) {
      now = parked_.back().idle_since;
    }
    auto it = parked_.insert(parked_.end(), entry{key, std::move(value), now});
    by_key_[key].push_back(it);
    while (parked_.size() > max_) {
      close_oldest();
    }
  }

  /// Takes the value parked longest ago under `key`.
  /// @returns a default-constructed T (null) if there is none.
  T take(const Key& key) {
    auto found = by_key_.find(key);
    if (found == by_key_.end()) {
      return T{};
    }
    auto& queue = found->second;
    auto it = queue.front();
    queue.pop_front();
    if (queue.empty()) {
      by_key_.erase(found);
    }
    auto value = std::move(it->value);
    parked_.erase(it);
    return value;
  }

  /// Closes every value idle for `idle` or longer at `now`.
  /// @returns how many were closed.
  size_t expire(clock::time_point now) {
    size_t closed = 0;
    while (!parked_.empty() && now - parked_.front().idle_since >= idle_) {
      close_oldest();
      ++closed;
    }
    return closed;
  }

  /// When the next value expires; nothing when the pool is empty.
  std::optional<clock::time_point> next_expiry() const {
    if (parked_.empty()) {
      return std::nullopt;
    }
    return parked_.front().idle_since + idle_;
  }

  /// Closes every value.
  void clear() {
    while (!parked_.empty()) {
      close_oldest();
    }
  }

  /// Values parked.
  size_t size() const noexcept {
    return parked_.size();
  }

 private:
  struct entry {
    Key key;
    T value;
    clock::time_point idle_since;
  };
  using list = std::list<entry>;

  /// Closes the least recently parked value (the pool is not empty).
  void close_oldest() {
    // the oldest value of all is also the oldest of its key: the front of its queue
    auto found = by_key_.find(parked_.front().key);
    found->second.pop_front();
    if (found->second.empty()) {
      by_key_.erase(found);
    }
    if (on_close_) {
      on_close_(parked_.front().value);
    }
    parked_.pop_front();
  }

  size_t max_;
  clock::duration idle_;
  close_fn on_close_;
  /// Least recently parked first.
  list parked_;
  /// Per key, its entries in `parked_`, least recently parked first.
  std::unordered_map<Key, std::deque<typename list::iterator>, Hash> by_key_;
};

} // namespace cws::base
