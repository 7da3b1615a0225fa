#pragma once

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

namespace cws::base {

// Lock-free measurements for the metrics page: updating one is a relaxed atomic add (no lock,
// no allocation), so they can sit on every request's path. Reading them (a scrape) builds
// the exposition elsewhere (http/metrics_page).

/// A count that only grows.
class counter {
 public:
  void add(uint64_t n = 1) noexcept {
    value_.fetch_add(n, std::memory_order_relaxed);
  }

  uint64_t value() const noexcept {
    return value_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> value_{0};
};

/// A value that goes up and down (in flight, in use).
class gauge {
 public:
  void add(int64_t n) noexcept {
    value_.fetch_add(n, std::memory_order_relaxed);
  }

  int64_t value() const noexcept {
    return value_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<int64_t> value_{0};
};

/// A histogram of whole-number observations (microseconds, counts) with fixed bucket bounds.
class histogram {
 public:
  /// What a scrape sees: cumulative bucket counts, as Prometheus expects them.
  struct snapshot {
    /// Upper bounds in the exposed unit (`scale` applied); +Inf is implicit.
    std::vector<double> bounds;
    /// Observations <= each bound, then the total count (the +Inf bucket).
    std::vector<uint64_t> cumulative;
    /// Sum of the observations in the exposed unit.
    double sum = 0;
  };

  /// `bounds` ascending, in the observed unit; `scale` turns that unit into the exposed one
  /// (1e-6: microseconds observed, seconds exposed).
  histogram(std::initializer_list<uint64_t> bounds, double scale);

  /// Records one observation.
  void observe(uint64_t value) noexcept;

  snapshot read() const;

 private:
  std::vector<uint64_t> bounds_;
  /// One per bound plus the overflow bucket; not cumulative (one add per observation).
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<uint64_t> sum_{0};
  double scale_;
};

} // namespace cws::base
