#include "base/deadlines.hpp"

namespace cws::base {

void deadlines::set(uint64_t id, clock::time_point when) {
  auto [it, added] = by_id_.try_emplace(id, when);
  if (!added) {
    by_time_.erase({it->second, id});
    it->second = when;
  }
  by_time_.emplace(when, id);
}

void deadlines::clear(uint64_t id) {
  if (auto it = by_id_.find(id); it != by_id_.end()) {
    by_time_.erase({it->second, id});
    by_id_.erase(it);
  }
}

std::optional<deadlines::clock::time_point> deadlines::next() const {
  if (by_time_.empty()) {
    return std::nullopt;
  }
  return by_time_.begin()->first;
}

std::vector<uint64_t> deadlines::take_due(clock::time_point now) {
  std::vector<uint64_t> due;
  while (!by_time_.empty() && by_time_.begin()->first <= now) {
    auto id = by_time_.begin()->second;
    by_time_.erase(by_time_.begin());
    by_id_.erase(id);
    due.push_back(id);
  }
  return due;
}

} // namespace cws::base
