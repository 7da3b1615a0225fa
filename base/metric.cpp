#include "base/metric.hpp"

namespace cws::base {

histogram::histogram(std::initializer_list<uint64_t> bounds, double scale)
    : bounds_(bounds), buckets_(new std::atomic<uint64_t>[bounds.size() + 1]), scale_(scale) {
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    buckets_[i].store(0, std::memory_order_relaxed);
  }
}

void histogram::observe(uint64_t value) noexcept {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) {
    ++i;
  }
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

histogram::snapshot histogram::read() const {
  snapshot s;
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    if (i < bounds_.size()) {
      s.bounds.push_back(static_cast<double>(bounds_[i]) * scale_);
    }
    s.cumulative.push_back(total);
  }
  s.sum = static_cast<double>(sum_.load(std::memory_order_relaxed)) * scale_;
  return s;
}

} // namespace cws::base
