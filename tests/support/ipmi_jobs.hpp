#pragma once

// Jobs for the IPMI engine against a bmc_farm, and running them to the end: what the ipmi
// test suites share.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bmc_farm.hpp"
#include "ipmi/engine.hpp"

namespace cws::test {

/// A job for BMC `i` of `farm` ("n<i>", admin with `password`, 500 ms, 2 retries).
inline ipmi::job farm_job(const bmc_farm& farm, size_t i, std::shared_ptr<ipmi::action> work,
                          std::string password = "secret") {
  ipmi::job j;
  j.node = "n" + std::to_string(i);
  j.address = "127.0.0.1";
  j.port = farm.port(i);
  j.user = "admin";
  j.password = std::move(password);
  j.timeout = std::chrono::milliseconds(500);
  j.retries = 2;
  j.work = std::move(work);
  return j;
}

/// One run of jobs on an engine, its results collected as the engine's threads deliver them.
/// Must outlive the run (or the engine).
class job_run {
 public:
  job_run(ipmi::engine& e, std::vector<ipmi::job> jobs, size_t fanout) : out_(jobs.size()) {
    id = e.run(
      std::move(jobs), fanout,
      [this](size_t i, base::node_result r) {
        std::lock_guard<std::mutex> g{mu_};
        out_[i] = std::move(r);
        ++received_;
      },
      [this] {
        std::lock_guard<std::mutex> g{mu_};
        done_ = true;
        cv_.notify_all();
      });
  }
  job_run(const job_run&) = delete;
  job_run& operator=(const job_run&) = delete;

  /// Waits up to `limit` for the run's end; true if it ended.
  bool wait(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock{mu_};
    return cv_.wait_for(lock, limit, [&] { return done_; });
  }

  /// The results so far, in the jobs' order.
  std::vector<base::node_result> results() {
    std::lock_guard<std::mutex> g{mu_};
    return out_;
  }

  /// How many results came.
  size_t received() {
    std::lock_guard<std::mutex> g{mu_};
    return received_;
  }

  uint64_t id = 0;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<base::node_result> out_;
  size_t received_ = 0;
  bool done_ = false;
};

/// Runs `jobs` on `e` and waits (30 s at most, a test failure beyond) for every result, in
/// the jobs' order; the run's id goes to `id` when given.
inline std::vector<base::node_result> run_jobs(ipmi::engine& e, std::vector<ipmi::job> jobs,
                                               size_t fanout = 64, uint64_t* id = nullptr) {
  job_run run{e, std::move(jobs), fanout};
  if (id != nullptr) {
    *id = run.id;
  }
  EXPECT_TRUE(run.wait(std::chrono::seconds(30)));
  return run.results();
}

} // namespace cws::test
