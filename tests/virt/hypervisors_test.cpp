// Power control of virtual machines against libvirt's test driver (`test:///FILE`: a real
// libvirt connection whose domains live in the connection): every action, state kept in the
// pooled connection, missing domains, an unreachable hypervisor, fanout and cancel.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../store/temp_home.hpp"
#include "virt/hypervisors.hpp"

namespace {

using namespace std::chrono_literals;
using cws::base::node_result;
using cws::virt::hypervisor_config;
using cws::virt::hypervisors;
using cws::virt::power_action;
using cws::virt::vm_job;

/// A node file of the test driver: `on` running domains vm0.., then `off` shut-off ones.
std::string write_nodes(const std::filesystem::path& file, int on, int off) {
  std::ofstream out{file};
  out << "<node>\n";
  for (int i = 0; i < on + off; ++i) {
    out << "<domain type='test' xmlns:test='http://libvirt.org/schemas/domain/test/1.0'>"
        << "<name>vm" << i << "</name><memory>65536</memory><os><type>hvm</type></os>"
        << (i >= on ? "<test:runstate>5</test:runstate>" : "") << "</domain>\n";
  }
  out << "</node>\n";
  return "test://" + file.string();
}

/// A hypervisor URI whose port takes the connection (the kernel's backlog) but never speaks
/// libvirt's RPC; `fd` is the listener, for the test to close.
std::string silent_hypervisor(int& fd) {
  fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 16) != 0
      || getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    fd = -1;
    return {};
  }
  return "qemu+tcp://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/system";
}

struct outcome {
  std::vector<node_result> results;
  std::vector<int> reports;
  bool done = false;
};

/// Runs `jobs` and waits (bounded) for the end.
outcome run(hypervisors& h, std::vector<vm_job> jobs, size_t fanout = 8, uint64_t* id = nullptr,
            const std::function<void()>& meanwhile = {}) {
  struct shared {
    std::mutex mu;
    std::condition_variable cv;
    outcome o;
  };
  auto s = std::make_shared<shared>();
  s->o.results.resize(jobs.size());
  s->o.reports.resize(jobs.size());
  auto run_id = h.run(
    std::move(jobs), fanout,
    [s](size_t i, node_result r) {
      std::lock_guard<std::mutex> guard{s->mu};
      EXPECT_FALSE(s->o.done) << "a result after the end";
      s->o.results.at(i) = std::move(r);
      ++s->o.reports.at(i);
    },
    [s] {
      std::lock_guard<std::mutex> guard{s->mu};
      s->o.done = true;
      s->cv.notify_all();
    });
  if (id != nullptr) {
    *id = run_id;
  }
  if (meanwhile) {
    meanwhile();
  }
  std::unique_lock<std::mutex> lock{s->mu};
  EXPECT_TRUE(s->cv.wait_for(lock, 30s, [&] { return s->o.done; }));
  return s->o;
}

vm_job job(const std::string& uri, int vm, power_action a) {
  return {"node" + std::to_string(vm), uri, "vm" + std::to_string(vm), a};
}

std::vector<std::string> texts(const outcome& o) {
  std::vector<std::string> t;
  for (const auto& r : o.results) {
    t.push_back(r.error.empty() ? r.out : r.error + ": " + r.message);
  }
  return t;
}

using strings = std::vector<std::string>;

TEST(hypervisors_test, every_action_answers_xcats_text_and_the_state_stays_in_the_connection) {
  cws::test::temp_dir dir;
  auto uri = write_nodes(dir.path / "nodes.xml", 2, 2); // vm0, vm1 on; vm2, vm3 off
  hypervisors h{hypervisor_config{}};
  auto state = [&] {
    std::vector<vm_job> jobs;
    for (int i = 0; i < 4; ++i) {
      jobs.push_back(job(uri, i, power_action::state));
    }
    return texts(run(h, jobs));
  };
  EXPECT_EQ(state(), (strings{"on", "on", "off", "off"}));
  auto o = run(h, {job(uri, 0, power_action::off), job(uri, 1, power_action::reset),
                   job(uri, 2, power_action::on), job(uri, 3, power_action::reset)});
  EXPECT_EQ(texts(o), (strings{"off", "reset", "on", "off"})); // reset leaves an off machine off
  EXPECT_EQ(state(), (strings{"off", "on", "on", "off"}));
  o = run(h, {job(uri, 0, power_action::boot), job(uri, 1, power_action::boot),
              job(uri, 2, power_action::on), job(uri, 3, power_action::off)});
  EXPECT_EQ(texts(o), (strings{"off on", "on reset", "on", "off"}));
  o = run(h, {job(uri, 0, power_action::softoff), job(uri, 3, power_action::softoff)});
  EXPECT_EQ(texts(o)[1], "off");
  EXPECT_EQ(state()[0], "off"); // the test driver's guest shuts down at once
  for (const auto& r : o.results) {
    EXPECT_EQ(r.rc, 0);
  }
  EXPECT_EQ(h.connections(), 1u); // one connection served all of it
}

TEST(hypervisors_test, a_missing_domain_and_an_unreachable_hypervisor_fail_alone) {
  cws::test::temp_dir dir;
  auto uri = write_nodes(dir.path / "nodes.xml", 1, 0);
  hypervisors h{hypervisor_config{}};
  auto o = run(h, {job(uri, 0, power_action::state), job(uri, 7, power_action::on),
                   job("test://" + (dir.path / "missing.xml").string(), 0, power_action::state)});
  EXPECT_EQ(o.results[0].out, "on");
  EXPECT_EQ(o.results[1].error, "not-found");
  EXPECT_EQ(o.results[1].message, "The virtual machine vm7 was not found on " + uri + ".");
  EXPECT_EQ(o.results[2].error, "unreachable");
  EXPECT_EQ(o.results[2].message.rfind("Cannot communicate via libvirt to test://", 0), 0u)
    << o.results[2].message;
  EXPECT_EQ(o.reports, (std::vector<int>{1, 1, 1}));
}

TEST(hypervisors_test, many_machines_share_a_small_fanout_and_keep_their_indexes) {
  cws::test::temp_dir dir;
  auto uri = write_nodes(dir.path / "nodes.xml", 100, 100);
  hypervisor_config cfg;
  cfg.threads = 4;
  hypervisors h{cfg};
  std::vector<vm_job> jobs;
  for (int i = 0; i < 200; ++i) {
    jobs.push_back(job(uri, i, power_action::state));
  }
  auto o = run(h, jobs, 3);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(o.results[static_cast<size_t>(i)].name, "node" + std::to_string(i));
    EXPECT_EQ(o.results[static_cast<size_t>(i)].out, i < 100 ? "on" : "off") << i;
    EXPECT_EQ(o.reports[static_cast<size_t>(i)], 1);
  }
}

TEST(hypervisors_test, cancel_ends_the_waiting_jobs_and_every_job_reports_once) {
  cws::test::temp_dir dir;
  auto uri = write_nodes(dir.path / "nodes.xml", 0, 50);
  hypervisor_config cfg;
  cfg.threads = 1;
  hypervisors h{cfg};
  std::vector<vm_job> jobs;
  for (int i = 0; i < 50; ++i) {
    jobs.push_back(job(uri, i, power_action::on));
  }
  uint64_t id = 0;
  auto o = run(h, jobs, 1, &id, [&] { h.cancel(id); });
  size_t cancelled = 0;
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(o.reports[i], 1) << i;
    if (o.results[i].error == "cancelled") {
      ++cancelled;
      EXPECT_EQ(o.results[i].message, "The request was cancelled before it started.");
    } else {
      EXPECT_EQ(o.results[i].out, "on") << i;
    }
  }
  EXPECT_GT(cancelled, 0u);
  h.cancel(id); // ended: left alone
}

TEST(hypervisors_test, a_silent_hypervisor_costs_its_deadline_and_stalls_nobody_else) {
  cws::test::temp_dir dir;
  auto uri = write_nodes(dir.path / "nodes.xml", 1, 0);
  int silent = -1;
  auto silent_uri = silent_hypervisor(silent);
  ASSERT_GE(silent, 0);
  hypervisor_config cfg;
  cfg.threads = 2;
  cfg.timeout = 800ms;
  {
    hypervisors h{cfg};
    auto t0 = std::chrono::steady_clock::now();
    auto o = run(h, {job(silent_uri, 0, power_action::state), job(uri, 0, power_action::state)});
    auto ms
      = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
    EXPECT_EQ(o.results[0].error, "timeout");
    EXPECT_EQ(o.results[0].message, "Timed out waiting for the hypervisor " + silent_uri + ".");
    EXPECT_EQ(o.results[1].out, "on");
    EXPECT_GE(ms, 700);
    EXPECT_LT(ms, 5000);
    ::close(silent); // the blocked call ends (connection reset), so the workers can stop
  }
}

TEST(hypervisors_test, a_call_blocked_in_libvirt_does_not_hold_up_the_stop) {
  // the worker stays blocked in virConnectOpen
  int silent = -1;
  auto silent_uri = silent_hypervisor(silent);
  ASSERT_GE(silent, 0);
  hypervisor_config cfg;
  cfg.threads = 1;
  cfg.timeout = 300ms;
  cfg.stop_wait = 200ms;
  node_result late;
  auto t0 = std::chrono::steady_clock::now();
  {
    hypervisors h{cfg};
    auto o = run(h, {job(silent_uri, 0, power_action::state)});
    late = o.results[0];
  } // the worker is still inside virConnectOpen here
  auto ms
    = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
        .count();
  EXPECT_EQ(late.error, "timeout");
  EXPECT_LT(ms, 10000); // without the bound the stop waits for libvirt as long as it blocks
  ::close(silent);      // the left-behind worker's call ends now, on its own
}

TEST(hypervisors_test, parses_rpowers_words_and_builds_xcats_uri) {
  EXPECT_EQ(cws::virt::parse_power_action("stat"), power_action::state);
  EXPECT_EQ(cws::virt::parse_power_action("state"), power_action::state);
  EXPECT_EQ(cws::virt::parse_power_action("softoff"), power_action::softoff);
  EXPECT_FALSE(cws::virt::parse_power_action("cycle").has_value());
  EXPECT_EQ(cws::virt::vmhost_uri("hv01"), "qemu+ssh://root@hv01/system");
  EXPECT_EQ(cws::virt::vmhost_uri("test:///x.xml"), "test:///x.xml");
}

} // namespace
