// The IPMI engine in-process against ipmi_sim BMCs on 127.0.0.1: power and boot device as the
// chassis script records them, the pool, a wrong password, an address where nothing answers,
// a BMC killed in the middle of a call, and cancel.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <mutex>
#include <thread>
#include <unistd.h>

#include "../support/bmc_farm.hpp"
#include "../support/ipmi_jobs.hpp"
#include "ipmi/chassis.hpp"
#include "ipmi/engine.hpp"

namespace {

using namespace std::chrono_literals;
using cws::base::node_result;
using namespace cws::ipmi;

class ipmi_engine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cws::test::have_ipmi_sim()) {
      GTEST_SKIP() << "ipmi_sim (package openipmi) is not installed";
    }
    dir_ = std::filesystem::temp_directory_path()
           / ("cws-ipmi-" + std::to_string(getpid()) + "-"
              + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    farm_ = std::make_unique<cws::test::bmc_farm>(dir_, 3);
  }
  void TearDown() override {
    farm_.reset();
    std::filesystem::remove_all(dir_);
  }

  job make(size_t i, std::shared_ptr<action> a, std::string password = "secret") {
    return cws::test::farm_job(*farm_, i, std::move(a), std::move(password));
  }

  /// Three power stat jobs with 5 s deadlines, the first one's BMC answering after 2 s.
  std::vector<job> slow_first_of_three() {
    farm_->set_delay(0, 2);
    std::vector<job> jobs;
    for (size_t i = 0; i < 3; ++i) {
      jobs.push_back(make(i, power_action(power_op::stat)));
      jobs.back().timeout = 5s;
    }
    return jobs;
  }

  /// Runs `jobs` and waits for every result.
  std::vector<node_result> run(engine& e, std::vector<job> jobs, size_t fanout = 64,
                               uint64_t* id = nullptr) {
    return cws::test::run_jobs(e, std::move(jobs), fanout, id);
  }

  std::filesystem::path dir_;
  std::unique_ptr<cws::test::bmc_farm> farm_;
};

TEST_F(ipmi_engine, power_stat_on_off_as_the_chassis_records_them) {
  engine e{{}};
  farm_->set_power(1, true);
  auto r = run(e, {make(0, power_action(power_op::stat)), make(1, power_action(power_op::stat))});
  EXPECT_EQ(r[0].name, "n0");
  EXPECT_EQ(r[0].out, "off") << r[0].message;
  EXPECT_EQ(r[1].out, "on") << r[1].message;
  EXPECT_FALSE(r[0].failed());

  r = run(e, {make(0, power_action(power_op::on)), make(1, power_action(power_op::off))});
  EXPECT_EQ(r[0].out, "on") << r[0].message;
  EXPECT_EQ(r[1].out, "off") << r[1].message;
  EXPECT_EQ(farm_->power(0), "1");
  EXPECT_EQ(farm_->power(1), "0");
  EXPECT_NE(farm_->log(0).find("set power 1"), std::string::npos);
  EXPECT_NE(farm_->log(1).find("set power 0"), std::string::npos);

  // on when on: no Chassis Control is sent (xCAT's rule)
  auto before = farm_->log(0);
  r = run(e, {make(0, power_action(power_op::on))});
  EXPECT_EQ(r[0].out, "on");
  EXPECT_EQ(farm_->log(0).find("set", before.size()), std::string::npos);

  // boot: reset when on, on when off
  r = run(e, {make(0, power_action(power_op::boot)), make(1, power_action(power_op::boot))});
  EXPECT_EQ(r[0].out, "reset");
  EXPECT_EQ(r[1].out, "on");
  EXPECT_NE(farm_->log(0).find("set reset 1"), std::string::npos);
  EXPECT_EQ(farm_->power(1), "1");

  r = run(e, {make(0, power_action(power_op::softoff))});
  EXPECT_EQ(r[0].out, "softoff");
  EXPECT_NE(farm_->log(0).find("set shutdown 1"), std::string::npos);
}

TEST_F(ipmi_engine, boot_device_is_set_and_read_back) {
  engine e{{}};
  auto r = run(e, {make(0, boot_action(boot_op::net)), make(1, boot_action(boot_op::cd)),
                   make(2, boot_action(boot_op::hd))});
  EXPECT_EQ(r[0].out, "Network") << r[0].message;
  EXPECT_EQ(r[1].out, "CD/DVD") << r[1].message;
  EXPECT_EQ(r[2].out, "Hard Drive") << r[2].message;
  EXPECT_EQ(farm_->boot(0), "pxe");
  EXPECT_EQ(farm_->boot(1), "cdrom");
  r = run(e, {make(0, boot_action(boot_op::stat)), make(0, boot_action(boot_op::def))});
  EXPECT_EQ(r[0].out, "Network");
  EXPECT_EQ(r[1].out, "boot override inactive");
  EXPECT_EQ(farm_->boot(0), "none");
}

TEST_F(ipmi_engine, sessions_are_pooled_and_reused) {
  engine e{{}};
  run(e, {make(0, power_action(power_op::stat)), make(1, power_action(power_op::stat))});
  EXPECT_EQ(e.stats().sessions, 2u);
  EXPECT_EQ(e.stats().pooled, 2u);
  auto r = run(e, {make(0, power_action(power_op::stat)), make(1, power_action(power_op::stat))});
  EXPECT_TRUE(r[0].reused);
  EXPECT_TRUE(r[1].reused);
  EXPECT_EQ(e.stats().sessions, 2u);
  EXPECT_EQ(e.stats().reuses, 2u);
  // another password is another pool entry: no reuse across credentials
  farm_->stop(0);
  farm_->start(0); // the BMC forgot its sessions: the pooled one is replaced, once
  r = run(e, {make(0, power_action(power_op::stat))});
  EXPECT_EQ(r[0].out, "off") << r[0].message;
  EXPECT_FALSE(r[0].reused);
  EXPECT_EQ(e.stats().sessions, 3u);
}

TEST_F(ipmi_engine, pool_idle_expiry_and_limit) {
  engine_config cfg;
  cfg.pool_idle = 300ms;
  cfg.max_pooled = 1;
  engine e{cfg};
  run(e, {make(0, power_action(power_op::stat)), make(1, power_action(power_op::stat))});
  EXPECT_EQ(e.stats().pooled, 1u);
  for (int i = 0; i < 100 && e.stats().pooled != 0; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(e.stats().pooled, 0u);
}

TEST_F(ipmi_engine, wrong_password_is_refused_at_set_up) {
  engine e{{}};
  auto r
    = run(e, {make(0, power_action(power_op::on), "wrong"), make(1, power_action(power_op::stat))});
  EXPECT_EQ(r[0].error, "auth");
  EXPECT_EQ(r[0].message, "Incorrect password provided");
  EXPECT_EQ(farm_->power(0), "0"); // nothing was done
  EXPECT_EQ(r[1].out, "off");
  auto u = make(2, power_action(power_op::stat));
  u.user = "nobody";
  r = run(e, {u});
  EXPECT_EQ(r[0].error, "auth");
  EXPECT_FALSE(r[0].message.empty());
}

TEST_F(ipmi_engine, nothing_listening_costs_its_deadline) {
  engine e{{}};
  farm_->stop(2);
  auto dead = make(2, power_action(power_op::stat));
  dead.timeout = 200ms;
  dead.retries = 3;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run(e, {dead, make(0, power_action(power_op::stat))});
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r[0].error, "timeout");
  EXPECT_NE(r[0].message.find("3 tries"), std::string::npos) << r[0].message;
  EXPECT_EQ(r[1].out, "off");
  EXPECT_GE(took, 550ms);
  EXPECT_LT(took, 3s);
  // a name that does not resolve fails alone
  auto bad = make(0, power_action(power_op::stat));
  bad.address = "no-such-bmc.invalid";
  r = run(e, {bad});
  EXPECT_EQ(r[0].error, "resolve");
}

TEST_F(ipmi_engine, a_pooled_session_of_a_dead_bmc_costs_only_its_deadline) {
  engine e{{}};
  run(e, {make(2, power_action(power_op::stat))});
  ASSERT_EQ(e.stats().pooled, 1u);
  farm_->stop(2);
  auto dead = make(2, power_action(power_op::stat));
  dead.timeout = 200ms;
  dead.retries = 3;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run(e, {dead});
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(r[0].error, "timeout");
  EXPECT_GE(took, 550ms);
  EXPECT_LT(took, 800ms); // 3 tries in all: the pooled one counts
}

TEST_F(ipmi_engine, delayed_jobs_start_after_their_delay) {
  engine e{{}};
  auto later = make(1, power_action(power_op::on));
  later.delay = 600ms;
  std::vector<std::chrono::steady_clock::duration> ended(2);
  auto t0 = std::chrono::steady_clock::now();
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  e.run(
    {make(0, power_action(power_op::on)), later}, 64,
    [&](size_t i, node_result r) {
      std::lock_guard<std::mutex> g{mu};
      EXPECT_EQ(r.out, "on") << r.message;
      ended[i] = std::chrono::steady_clock::now() - t0;
    },
    [&] {
      std::lock_guard<std::mutex> g{mu};
      done = true;
      cv.notify_all();
    });
  std::unique_lock<std::mutex> lock{mu};
  ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return done; }));
  EXPECT_LT(ended[0], 500ms);
  EXPECT_GE(ended[1], 600ms);
  EXPECT_EQ(farm_->power(1), "1");
}

TEST_F(ipmi_engine, bmc_killed_in_the_middle_of_a_call) {
  engine e{{}};
  farm_->set_delay(1, 1.5); // the chassis script holds the BMC in its answer
  auto slow = make(1, power_action(power_op::on));
  slow.timeout = 300ms;
  slow.retries = 2;
  std::thread killer([&] {
    std::this_thread::sleep_for(400ms);
    farm_->stop(1, SIGKILL);
  });
  auto r = run(e, {slow, make(0, power_action(power_op::stat))});
  killer.join();
  EXPECT_EQ(r[0].error, "timeout") << r[0].message;
  EXPECT_EQ(r[1].out, "off");
}

TEST_F(ipmi_engine, cancel_ends_running_and_waiting_jobs) {
  engine e{{}};
  cws::test::job_run run{e, slow_first_of_three(), 1};
  std::this_thread::sleep_for(200ms);
  auto t0 = std::chrono::steady_clock::now();
  e.cancel(run.id);
  ASSERT_TRUE(run.wait(5s));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  for (const auto& r : run.results()) {
    EXPECT_EQ(r.error, "cancelled");
  }
  // the kit's one wording (base/node_errc.hpp): the first was running (fanout 1)
  auto r = run.results();
  EXPECT_EQ(r[0].message, "The request was cancelled.");
  EXPECT_EQ(r[1].message, "The request was cancelled before it started.");
  EXPECT_EQ(r[2].message, "The request was cancelled before it started.");
  EXPECT_EQ(r[2].name, "n2");
}

TEST_F(ipmi_engine, an_engine_ending_mid_run_gives_every_node_its_result) {
  // at once (the batch still in its lookups) and with the first job running, two waiting
  for (auto wait : {0ms, 200ms}) {
    auto e = std::make_unique<engine>(engine_config{});
    cws::test::job_run run{*e, slow_first_of_three(), 1};
    std::this_thread::sleep_for(wait);
    e.reset(); // (the callbacks run on its threads, which end here)
    EXPECT_TRUE(run.wait(0ms)) << "after " << wait.count() << " ms";
    EXPECT_EQ(run.received(), 3u);
    for (const auto& r : run.results()) {
      EXPECT_TRUE(r.error == "cancelled" || r.error == "disconnected") << r.name << ": " << r.error;
      EXPECT_TRUE(r.message == "the service is stopping"
                  || r.message == "The service stopped before the request started.")
        << r.name << ": " << r.message;
    }
  }
}

/// A conversation that never ends: each answer is followed by another request (a BMC that
/// answers every request in time and always has more to say, as a SEL walk of a hostile one).
class endless_action : public action {
 public:
  request first() override {
    return {0x00, 0x01, {}}; // Get Chassis Status
  }
  step next(const response&) override {
    ++answers;
    step s;
    s.next = first();
    return s;
  }
  std::atomic<int> answers{0};
};

TEST_F(ipmi_engine, a_conversation_ends_at_the_node_timeout_though_every_answer_came_in_time) {
  engine_config cfg;
  cfg.node_timeout = 1500ms;
  engine e{cfg};
  auto endless = std::make_shared<endless_action>();
  auto t0 = std::chrono::steady_clock::now();
  cws::test::job_run run{e, {make(0, endless), make(1, power_action(power_op::stat))}, 64};
  bool ended = run.wait(10s);
  auto took = std::chrono::steady_clock::now() - t0;
  if (!ended) {
    e.cancel(run.id); // (the run must end before `run` goes)
    run.wait(5s);
  }
  ASSERT_TRUE(ended) << "the conversation was not bounded";
  EXPECT_GE(took, 1400ms);
  EXPECT_LT(took, 4s);
  EXPECT_GT(endless->answers.load(), 2) << "the BMC did answer";
  auto r = run.results();
  EXPECT_EQ(r[0].error, "timeout");
  EXPECT_NE(r[0].message.find("ipmi_node_timeout"), std::string::npos) << r[0].message;
  EXPECT_EQ(r[1].error, "") << r[1].message; // a short conversation is not touched
}

} // namespace
