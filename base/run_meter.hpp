#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/metric.hpp"
#include "base/node_result.hpp"

namespace cws::base {

/// What a fan-out engine (ssh, ipmi, probe, libvirt) counts of its runs, the same for each:
/// runs started and in flight, nodes in flight, nodes finished by result. The engine wraps
/// each run's callbacks once, where the run comes in (`wrap`); the engine's inside does not
/// change. Counting a node is two relaxed atomic adds and a short lock (its result's code).
class run_meter : public std::enable_shared_from_this<run_meter> {
 public:
  /// What a scrape reads.
  struct snapshot {
    /// Runs started.
    uint64_t runs = 0;
    /// Runs whose `on_done` has not come yet.
    int64_t runs_in_flight = 0;
    /// Nodes of those runs without a result yet.
    int64_t nodes_in_flight = 0;
    /// Nodes finished, by result (`ok`, `nonzero` or the error code), in code order.
    std::vector<std::pair<std::string, uint64_t>> results;
  };

  /// How a node_result is counted: its error code, else `ok` (exit status 0) or `nonzero`.
  static std::string_view result_of(const node_result& r) noexcept {
    return !r.error.empty() ? std::string_view{r.error} : r.rc == 0 ? "ok" : "nonzero";
  }

  /// Counts a run of `nodes` starting, and wraps its callbacks so that each result (counted
  /// by `result(r)`, a code) and the end are counted before they are passed on. The wrapped
  /// callbacks hold the meter: an engine may call them after it is gone.
  template<class Result, class Classify>
  void wrap(size_t nodes, std::function<void(size_t, Result)>& on_result,
            std::function<void()>& on_done, Classify result) {
    started(nodes);
    on_result
      = [self = shared_from_this(), next = std::move(on_result), result](size_t index, Result r) {
          self->finished(result(r));
          next(index, std::move(r));
        };
    on_done = [self = shared_from_this(), next = std::move(on_done)] {
      self->runs_in_flight_.add(-1);
      next();
    };
  }

  /// The same for engines whose result is a node_result.
  void wrap(size_t nodes, std::function<void(size_t, node_result)>& on_result,
            std::function<void()>& on_done) {
    wrap(nodes, on_result, on_done, [](const node_result& r) { return result_of(r); });
  }

  snapshot read() const;

 private:
  void started(size_t nodes) noexcept;
  void finished(std::string_view result);

  counter runs_;
  gauge runs_in_flight_;
  gauge nodes_in_flight_;
  mutable std::mutex mu_;
  /// The codes are the engines' own (a short fixed set), never a peer's text.
  std::map<std::string, uint64_t, std::less<>> results_;
};

} // namespace cws::base
