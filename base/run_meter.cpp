#include "base/run_meter.hpp"

namespace cws::base {

void run_meter::started(size_t nodes) noexcept {
  runs_.add();
  runs_in_flight_.add(1);
  nodes_in_flight_.add(static_cast<int64_t>(nodes));
}

void run_meter::finished(std::string_view result) {
  nodes_in_flight_.add(-1);
  std::lock_guard<std::mutex> guard{mu_};
  if (auto at = results_.find(result); at != results_.end()) {
    ++at->second;
  } else {
    results_.emplace(std::string{result}, 1);
  }
}

run_meter::snapshot run_meter::read() const {
  snapshot s;
  s.runs = runs_.value();
  s.runs_in_flight = runs_in_flight_.value();
  s.nodes_in_flight = nodes_in_flight_.value();
  std::lock_guard<std::mutex> guard{mu_};
  s.results.assign(results_.begin(), results_.end());
  return s;
}

} // namespace cws::base
