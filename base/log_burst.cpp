#include "base/log_burst.hpp"

#include <algorithm>
#include <vector>

namespace cws::base {

namespace {

/// Every live log_burst, for flush_all.
struct registry {
  std::mutex mu;
  std::vector<log_burst*> all;
};

registry& bursts() {
  static registry r;
  return r;
}

} // namespace

log_burst::log_burst(log_level level, std::string what) : level_(level), what_(std::move(what)) {
  std::lock_guard<std::mutex> guard{bursts().mu};
  bursts().all.push_back(this);
}

log_burst::~log_burst() {
  auto& r = bursts();
  std::lock_guard<std::mutex> guard{r.mu};
  r.all.erase(std::remove(r.all.begin(), r.all.end(), this), r.all.end());
}

void log_burst::note(std::string_view detail) {
  std::unique_lock<std::mutex> lock{mu_};
  if (reported_) {
    ++suppressed_;
    last_.assign(detail);
    return;
  }
  reported_ = true;
  lock.unlock();
  log(level_, what_ + ": " + std::string{detail});
}

void log_burst::flush(std::chrono::seconds period) {
  std::unique_lock<std::mutex> lock{mu_};
  auto more = suppressed_;
  auto last = std::move(last_);
  reported_ = false;
  suppressed_ = 0;
  last_.clear();
  lock.unlock();
  if (more > 0) {
    log(level_, what_ + " " + std::to_string(more) + " more time" + (more == 1 ? "" : "s")
                  + " in the last " + std::to_string(period.count()) + " s (last: " + last + ")");
  }
}

void log_burst::flush_all(std::chrono::seconds period) {
  auto& r = bursts();
  std::lock_guard<std::mutex> guard{r.mu};
  for (auto* b : r.all) {
    b->flush(period);
  }
}

} // namespace cws::base
