#include "ssh/pool.hpp"

#include <utility>

namespace cws::ssh {

pool::pool(size_t max_pooled, clock::duration idle) : max_(max_pooled), idle_(idle) {
  // nop
}

void pool::put(std::unique_ptr<connection> c, clock::time_point now) {
  if (!parked_.empty() && now < parked_.back().idle_since) {
    now = parked_.back().idle_since;
  }
  auto key = c->key;
  auto it = parked_.insert(parked_.end(), entry{std::move(c), now});
  by_key_[key].push_back(it);
  while (parked_.size() > max_) {
    close_oldest();
  }
}

std::unique_ptr<connection> pool::take(const std::string& key) {
  auto found = by_key_.find(key);
  if (found == by_key_.end()) {
    return nullptr;
  }
  auto& queue = found->second;
  auto it = queue.front();
  queue.pop_front();
  if (queue.empty()) {
    by_key_.erase(found);
  }
  auto c = std::move(it->conn);
  parked_.erase(it);
  return c;
}

size_t pool::expire(clock::time_point now) {
  size_t closed = 0;
  while (!parked_.empty() && now - parked_.front().idle_since >= idle_) {
    close_oldest();
    ++closed;
  }
  return closed;
}

std::optional<pool::clock::time_point> pool::next_expiry() const {
  if (parked_.empty()) {
    return std::nullopt;
  }
  return parked_.front().idle_since + idle_;
}

void pool::clear() {
  by_key_.clear();
  parked_.clear();
}

void pool::close_oldest() {
  // the oldest connection of all is also the oldest of its key: the front of its queue
  auto found = by_key_.find(parked_.front().conn->key);
  found->second.pop_front();
  if (found->second.empty()) {
    by_key_.erase(found);
  }
  parked_.pop_front();
}

} // namespace cws::ssh
