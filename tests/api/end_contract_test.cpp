// One end contract for the four per-node engines (api::node_operation: every job gets
// exactly one result, then `on_done` exactly once; base::fanout_run keeps the books), in the
// three ways a run ends: its jobs finish on their own (a refused port), it is cancelled, or
// its engine is stopped (destroyed). Three jobs, fanout 1: one job running and two never
// started when the cancel or the stop comes. The ssh and libvirt engines used to return one
// result of three at a stop and never end the run.

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/silent_port.hpp"
#include "ipmi/chassis.hpp"
#include "ipmi/engine.hpp"
#include "probe/prober.hpp"
#include "ssh/engine.hpp"
#include "virt/hypervisors.hpp"

namespace {

using namespace std::chrono_literals;

/// What a run delivered: results per job, and how often `on_done` came.
struct tally {
  std::mutex mu;
  std::vector<int> results;
  std::vector<std::string> errors;
  int done = 0;
  std::condition_variable cv;

  explicit tally(size_t jobs) : results(jobs), errors(jobs) {
    // nop
  }

  void result(size_t i, const std::string& error) {
    std::lock_guard<std::mutex> g{mu};
    ++results.at(i);
    errors.at(i) = error;
  }

  void end() {
    std::lock_guard<std::mutex> g{mu};
    ++done;
    cv.notify_all();
  }

  /// Waits (at most 10 s) for `on_done`.
  bool wait() {
    std::unique_lock<std::mutex> g{mu};
    return cv.wait_for(g, 10s, [this] { return done > 0; });
  }

  /// Every job had one result and the run ended once; `error` (if given) was every job's.
  void expect_ended(const char* engine, const char* error = nullptr) {
    ASSERT_TRUE(wait()) << engine;
    std::this_thread::sleep_for(50ms); // nothing more comes
    std::lock_guard<std::mutex> g{mu};
    for (size_t i = 0; i < results.size(); ++i) {
      EXPECT_EQ(results[i], 1) << engine << ": job " << i;
      if (error != nullptr) {
        EXPECT_EQ(errors[i], error) << engine << ": job " << i;
      }
    }
    EXPECT_EQ(done, 1) << engine;
  }

  /// Every job had one result (with an error: none finished) and the run ended once.
  void expect_kept(const char* engine) {
    std::lock_guard<std::mutex> g{mu};
    for (size_t i = 0; i < results.size(); ++i) {
      EXPECT_EQ(results[i], 1) << engine << ": job " << i;
      EXPECT_NE(errors[i], "") << engine << ": job " << i;
    }
    EXPECT_EQ(done, 1) << engine;
  }
};

constexpr size_t jobs = 3;

/// A TCP and UDP port on 127.0.0.1 nothing listens on: connects are refused at once.
uint16_t closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0
      && getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

std::vector<cws::ssh::job> ssh_jobs(uint16_t port) {
  std::vector<cws::ssh::job> js(jobs);
  for (size_t i = 0; i < jobs; ++i) {
    js[i].node = "n" + std::to_string(i);
    js[i].address = "127.0.0.1";
    js[i].port = port;
    js[i].user = "root";
    js[i].command = "true";
  }
  return js;
}

std::vector<cws::ipmi::job> ipmi_jobs(uint16_t port, std::chrono::milliseconds timeout) {
  std::vector<cws::ipmi::job> js(jobs);
  for (size_t i = 0; i < jobs; ++i) {
    js[i].node = "n" + std::to_string(i);
    js[i].address = "127.0.0.1";
    js[i].port = port;
    js[i].user = "admin";
    js[i].password = "secret";
    js[i].timeout = timeout;
    js[i].retries = 1;
    js[i].work = cws::ipmi::power_action(cws::ipmi::power_op::stat);
  }
  return js;
}

std::vector<cws::probe::target> probe_targets(uint16_t port) {
  std::vector<cws::probe::target> ts(jobs);
  for (size_t i = 0; i < jobs; ++i) {
    ts[i].node = "n" + std::to_string(i);
    ts[i].address = "127.0.0.1";
    ts[i].ports = {port};
  }
  return ts;
}

std::vector<cws::virt::vm_job> vm_jobs(uint16_t port) {
  auto uri = "qemu+tcp://127.0.0.1:" + std::to_string(port) + "/system";
  std::vector<cws::virt::vm_job> js;
  for (size_t i = 0; i < jobs; ++i) {
    js.push_back(
      {"n" + std::to_string(i), uri, "vm" + std::to_string(i), cws::virt::power_action::state});
  }
  return js;
}

template<class Result>
auto on_result(tally& t) {
  return [&t](size_t i, Result r) {
    t.result(i, r.error);
  };
}

/// Starts a run with `start`, lets it work 300 ms, then destroys its engine.
template<class Engine>
void destroyed_mid_run(std::unique_ptr<Engine> e, const std::function<void(Engine&)>& start) {
  start(*e);
  std::this_thread::sleep_for(300ms);
  e.reset();
}

/// A UDP port nobody answers on: a BMC that is gone.
struct silent_udp {
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  uint16_t port = 0;

  silent_udp() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0
        && getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
      port = ntohs(a.sin_port);
    }
  }

  ~silent_udp() {
    ::close(fd);
  }
};

TEST(end_contract, ssh_gives_every_job_one_result_and_ends_when_destroyed) {
  cws::test::temp_dir dir;
  cws::test::silent_port silent; // accepts in the kernel, never sends a banner
  tally t{jobs};
  cws::ssh::engine_config cfg;
  cfg.known_hosts = dir.path / "known_hosts";
  cfg.connect_timeout = 30s;
  destroyed_mid_run<cws::ssh::engine>(
    std::make_unique<cws::ssh::engine>(cfg), [&](cws::ssh::engine& e) {
      std::vector<cws::ssh::job> js(jobs);
      for (size_t i = 0; i < jobs; ++i) {
        js[i].node = "n" + std::to_string(i);
        js[i].address = "127.0.0.1";
        js[i].port = silent.port();
        js[i].user = "root";
        js[i].command = "true";
      }
      e.run(
        std::move(js), 1, [&](size_t i, cws::base::node_result r) { t.result(i, r.error); },
        [&] { t.end(); });
    });
  t.expect_kept("ssh");
}

TEST(end_contract, ipmi_gives_every_job_one_result_and_ends_when_destroyed) {
  silent_udp bmc;
  ASSERT_NE(bmc.port, 0);
  tally t{jobs};
  destroyed_mid_run<cws::ipmi::engine>(
    std::make_unique<cws::ipmi::engine>(cws::ipmi::engine_config{}), [&](cws::ipmi::engine& e) {
      std::vector<cws::ipmi::job> js(jobs);
      for (size_t i = 0; i < jobs; ++i) {
        js[i].node = "n" + std::to_string(i);
        js[i].address = "127.0.0.1";
        js[i].port = bmc.port;
        js[i].user = "admin";
        js[i].password = "secret";
        js[i].timeout = 10s;
        js[i].work = cws::ipmi::power_action(cws::ipmi::power_op::stat);
      }
      e.run(
        std::move(js), 1, [&](size_t i, cws::base::node_result r) { t.result(i, r.error); },
        [&] { t.end(); });
    });
  t.expect_kept("ipmi");
}

TEST(end_contract, probe_gives_every_job_one_result_and_ends_when_destroyed) {
  cws::test::silent_port silent;
  tally t{jobs};
  destroyed_mid_run<cws::probe::prober>(
    std::make_unique<cws::probe::prober>(), [&](cws::probe::prober& p) {
      std::vector<cws::probe::target> ts(jobs);
      for (size_t i = 0; i < jobs; ++i) {
        ts[i].node = "n" + std::to_string(i);
        ts[i].address = "127.0.0.1";
        ts[i].ports = {silent.port()};
      }
      p.run(
        std::move(ts), 1, 30s, [&](size_t i, cws::probe::outcome o) { t.result(i, o.error); },
        [&] { t.end(); });
    });
  t.expect_kept("probe");
}

TEST(end_contract, libvirt_gives_every_job_one_result_and_ends_when_destroyed) {
  cws::test::silent_port silent; // a hypervisor that never answers
  auto uri = "qemu+tcp://127.0.0.1:" + std::to_string(silent.port()) + "/system";
  tally t{jobs};
  cws::virt::hypervisor_config cfg;
  cfg.threads = 1;
  cfg.timeout = 30s;
  cfg.stop_wait = 200ms; // the worker blocked in libvirt is left behind, not waited for
  destroyed_mid_run<cws::virt::hypervisors>(
    std::make_unique<cws::virt::hypervisors>(cfg), [&](cws::virt::hypervisors& h) {
      std::vector<cws::virt::vm_job> js;
      for (size_t i = 0; i < jobs; ++i) {
        js.push_back(
          {"n" + std::to_string(i), uri, "vm" + std::to_string(i), cws::virt::power_action::state});
      }
      h.run(
        std::move(js), 1, [&](size_t i, cws::base::node_result r) { t.result(i, r.error); },
        [&] { t.end(); });
    });
  t.expect_kept("libvirt");
}

// -- finish: the jobs end on their own (a refused port) -------------------------------

TEST(end_contract, ssh_gives_every_job_one_result_and_ends_when_its_jobs_finish) {
  cws::test::temp_dir dir;
  tally t{jobs};
  cws::ssh::engine_config cfg;
  cfg.known_hosts = dir.path / "known_hosts";
  cws::ssh::engine e{cfg};
  e.run(ssh_jobs(closed_port()), 1, on_result<cws::base::node_result>(t), [&] { t.end(); });
  t.expect_ended("ssh", "refused");
}

TEST(end_contract, ipmi_gives_every_job_one_result_and_ends_when_its_jobs_finish) {
  tally t{jobs};
  cws::ipmi::engine e{cws::ipmi::engine_config{}};
  e.run(ipmi_jobs(closed_port(), 100ms), 1, on_result<cws::base::node_result>(t), [&] { t.end(); });
  t.expect_ended("ipmi", "timeout");
}

TEST(end_contract, probe_gives_every_job_one_result_and_ends_when_its_jobs_finish) {
  tally t{jobs};
  cws::probe::prober p;
  p.run(probe_targets(closed_port()), 1, 5s, on_result<cws::probe::outcome>(t), [&] { t.end(); });
  t.expect_ended("probe", ""); // a refused port is an answer: the node is up
}

TEST(end_contract, libvirt_gives_every_job_one_result_and_ends_when_its_jobs_finish) {
  tally t{jobs};
  cws::virt::hypervisor_config cfg;
  cfg.threads = 1;
  cws::virt::hypervisors h{cfg};
  h.run(vm_jobs(closed_port()), 1, on_result<cws::base::node_result>(t), [&] { t.end(); });
  t.expect_ended("libvirt", "unreachable");
}

// -- cancel: one job running (a peer that never answers), two waiting -------------------

TEST(end_contract, ssh_gives_every_job_one_result_and_ends_when_cancelled) {
  cws::test::temp_dir dir;
  cws::test::silent_port silent;
  tally t{jobs};
  cws::ssh::engine_config cfg;
  cfg.known_hosts = dir.path / "known_hosts";
  cfg.connect_timeout = 30s;
  cws::ssh::engine e{cfg};
  auto id
    = e.run(ssh_jobs(silent.port()), 1, on_result<cws::base::node_result>(t), [&] { t.end(); });
  std::this_thread::sleep_for(300ms);
  e.cancel(id);
  t.expect_ended("ssh", "cancelled");
  e.cancel(id); // ended: nothing happens
}

TEST(end_contract, ipmi_gives_every_job_one_result_and_ends_when_cancelled) {
  silent_udp bmc;
  ASSERT_NE(bmc.port, 0);
  tally t{jobs};
  cws::ipmi::engine e{cws::ipmi::engine_config{}};
  auto id
    = e.run(ipmi_jobs(bmc.port, 10s), 1, on_result<cws::base::node_result>(t), [&] { t.end(); });
  std::this_thread::sleep_for(300ms);
  e.cancel(id);
  t.expect_ended("ipmi", "cancelled");
}

TEST(end_contract, probe_gives_every_job_one_result_and_ends_when_cancelled) {
  cws::test::silent_port silent;
  tally t{jobs};
  cws::probe::prober p;
  auto id = p.run(probe_targets(silent.port()), 1, 30s, on_result<cws::probe::outcome>(t),
                  [&] { t.end(); });
  std::this_thread::sleep_for(300ms);
  p.cancel(id);
  t.expect_ended("probe", "cancelled");
}

TEST(end_contract, libvirt_gives_every_job_one_result_and_ends_when_cancelled) {
  cws::test::silent_port silent;
  tally t{jobs};
  cws::virt::hypervisor_config cfg;
  cfg.threads = 1;
  cfg.timeout = 1s; // the call blocked in libvirt cannot be taken back: its deadline ends it
  cfg.stop_wait = 200ms;
  cws::virt::hypervisors h{cfg};
  auto id
    = h.run(vm_jobs(silent.port()), 1, on_result<cws::base::node_result>(t), [&] { t.end(); });
  std::this_thread::sleep_for(300ms);
  h.cancel(id);
  t.expect_ended("libvirt");
  std::lock_guard<std::mutex> g{t.mu};
  EXPECT_EQ(t.errors[0], "timeout");
  EXPECT_EQ(t.errors[1], "cancelled");
  EXPECT_EQ(t.errors[2], "cancelled");
}

} // namespace
