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

/// Runs `jobs` on `e` and waits (30 s at most, a test failure beyond) for every result, in
/// the jobs' order; the run's id goes to `id` when given.
inline std::vector<base::node_result> run_jobs(ipmi::engine& e, std::vector<ipmi::job> jobs,
                                               size_t fanout = 64, uint64_t* id = nullptr) {
  std::vector<base::node_result> out(jobs.size());
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  auto rid = e.run(
    std::move(jobs), fanout,
    [&](size_t i, base::node_result r) {
      std::lock_guard<std::mutex> g{mu};
      out[i] = std::move(r);
    },
    [&] {
      std::lock_guard<std::mutex> g{mu};
      done = true;
      cv.notify_all();
    });
  if (id != nullptr) {
    *id = rid;
  }
  std::unique_lock<std::mutex> lock{mu};
  EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return done; }));
  return out;
}

} // namespace cws::test
