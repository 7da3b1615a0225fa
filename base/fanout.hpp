#pragma once

// The bookkeeping of a fan-out run, shared by every engine (ssh, ipmi, probe, virt): which
// job starts next within the fanout, which have ended, and the one end contract of
// api::node_operation: every job gets exactly one result, then `on_done` comes exactly once,
// whether the jobs finish, the run is cancelled, or the engine stops or is destroyed. No
// thread, no I/O: an engine drives it from its loop (or, virt, from its workers).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/node_errc.hpp"
#include "base/node_result.hpp"

namespace cws::base {

/// The part of a run that does not depend on its result type: slots, each job's state, the
/// cancel request and the order of the callbacks. Thread-safe: any thread may start, end or
/// cancel jobs; callbacks come one at a time, never under the state lock (so a callback may
/// call back into the run or its engine), and `on_done` after the last result.
class fanout_state {
 public:
  virtual ~fanout_state() = default;

  fanout_state(const fanout_state&) = delete;
  fanout_state& operator=(const fanout_state&) = delete;

  /// Jobs in the run.
  size_t size() const noexcept {
    return state_.size();
  }

  /// The id `run_registry::add` gave it (0 before).
  uint64_t id() const noexcept {
    return id_.load();
  }

  /// The next job to start, if a fanout slot is free and one waits (in index order); it then
  /// holds a slot until it ends. Nothing once a cancel was requested.
  std::optional<size_t> next_to_start();

  /// Jobs started and not ended.
  size_t running() const;

  /// Jobs not started yet (they may still be ended by `end_unstarted`).
  size_t unstarted() const;

  /// Asks the run to end early (`run_registry::cancel`): no job starts after it; the engine
  /// then ends the running ones and calls `end_unstarted`. @returns false if it had ended.
  bool request_cancel() noexcept;

  bool cancel_requested() const noexcept {
    return cancel_.load();
  }

  /// Every job has its result and `on_done` has run.
  bool done() const noexcept {
    return done_.load();
  }

  /// Ends every job not started yet with error `why` (cancel and stop alike).
  void end_unstarted(node_errc why, std::string_view message);

  /// Ends every job not ended yet, running ones included, with error `why`: for an engine
  /// that cannot interrupt a running job (virt's blocking calls) or has lost track of it. A
  /// result that comes later for such a job is dropped (`finished` returns false).
  void end_all(node_errc why, std::string_view message);

 protected:
  fanout_state(size_t jobs, size_t fanout, std::function<void()> on_done);

  /// Marks job `index` ended. @returns false if it had ended already (or does not exist).
  bool claim(size_t index);

  /// The lock callbacks are delivered under (recursive: a callback may end other jobs).
  std::recursive_mutex& delivery() noexcept {
    return delivery_mu_;
  }

  /// One result was delivered (under `delivery()`): `on_done` after the last.
  void delivered();

  /// Builds and delivers the failure of job `index` (already claimed).
  virtual void deliver_failure(size_t index, node_errc why, std::string_view message) = 0;

  /// Ends what is left (the most derived destructor calls it: a run dropped mid-way still
  /// keeps the contract).
  void end_on_destruction();

 private:
  friend class run_registry;

  enum class job_state : uint8_t { waiting, running, ended };

  void end_where(bool running_too, node_errc why, std::string_view message);

  mutable std::mutex mu_;
  std::vector<job_state> state_; // under mu_
  size_t fanout_;
  size_t next_ = 0;    // under mu_: the first job never started
  size_t running_ = 0; // under mu_
  std::atomic<bool> cancel_{false};
  std::atomic<uint64_t> id_{0};

  std::recursive_mutex delivery_mu_;
  size_t undelivered_; // under delivery_mu_
  std::function<void()> on_done_;
  std::atomic<bool> done_{false};
};

/// One run whose jobs end in a `Result` (`node_result`; the prober's `outcome`).
template<class Result>
class basic_fanout_run final : public fanout_state {
 public:
  /// Job `index` ended.
  using result_fn = std::function<void(size_t index, Result r)>;
  /// The result of job `index` when it ends without running to its end (cancel, stop). It
  /// must not refer to anything that may die before the run (capture by value).
  using failure_fn = std::function<Result(size_t index, node_errc why, std::string_view message)>;

  /// `jobs` jobs, at most `fanout` (at least 1) running at once. With no jobs, `on_done`
  /// runs at once, here.
  basic_fanout_run(size_t jobs, size_t fanout, result_fn on_result, std::function<void()> on_done,
                   failure_fn failure)
      : fanout_state(jobs, fanout, std::move(on_done)), on_result_(std::move(on_result)),
        failure_(std::move(failure)) {
    // nop
  }

  /// A run dropped before its end ends every job left with `disconnected`.
  ~basic_fanout_run() override {
    end_on_destruction();
  }

  /// Job `index` (started) ended with `r`: frees its slot, delivers `r` and, after the last,
  /// `on_done`. @returns false if the job had ended already (a cancel or a deadline came
  /// first): `r` is dropped.
  bool finished(size_t index, Result r) {
    if (!claim(index)) {
      return false;
    }
    deliver(index, std::move(r));
    return true;
  }

 private:
  void deliver_failure(size_t index, node_errc why, std::string_view message) override {
    deliver(index, failure_(index, why, message));
  }

  void deliver(size_t index, Result r) {
    std::lock_guard<std::recursive_mutex> guard{delivery()};
    on_result_(index, std::move(r));
    delivered();
  }

  result_fn on_result_;
  failure_fn failure_;
};

/// The run of the engines whose jobs end in a node_result (ssh, ipmi, virt).
using fanout_run = basic_fanout_run<node_result>;

/// A failure_fn for node_result: the node's name is `names[index]`.
fanout_run::failure_fn node_failures(std::vector<std::string> names);

/// The runs of one engine that have not ended, by id, for `cancel(id)` and for stop. Runs
/// are held weakly: the engine (its jobs, its loop) keeps them alive. Thread-safe.
class run_registry {
 public:
  /// Registers `run`. @returns its id (from 1), also `run->id()`.
  uint64_t add(const std::shared_ptr<fanout_state>& run);

  /// Asks run `id` to end (`fanout_state::request_cancel`). @returns the run, or null if
  /// there is none or it has ended: the engine then ends its running jobs and calls
  /// `end_unstarted(node_errc::cancelled, ...)`.
  std::shared_ptr<fanout_state> cancel(uint64_t id);

  /// Asks every run to end (the engine stops). @returns them.
  std::vector<std::shared_ptr<fanout_state>> cancel_all();

  /// Runs registered that have not ended.
  size_t size() const;

 private:
  void prune(); // under mu_

  mutable std::mutex mu_;
  std::unordered_map<uint64_t, std::weak_ptr<fanout_state>> runs_;
  uint64_t next_id_ = 1;
  size_t prune_at_ = 64;
};

} // namespace cws::base
