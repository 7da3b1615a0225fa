// The SSH engine in-process against a real sshd on 127.0.0.1: results, fan-out, the pool
// (reuse, idle expiry, max_pooled, clear, recovery), failures (refused, connect timeout,
// command timeout, cancel, shutdown) and the host key policies.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <netinet/in.h>
#include <sstream>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "../store/temp_home.hpp"
#include "../support/sshd.hpp"
#include "ssh/engine.hpp"

namespace {

using namespace std::chrono_literals;
using cws::base::node_result;
using cws::ssh::engine;
using cws::ssh::engine_config;
using cws::ssh::host_key_policy;
using cws::ssh::job;
using steady = std::chrono::steady_clock;

/// One run's results as they arrive; `wait` blocks until the run ends, with a bound.
/// Shared with the engine's callbacks, so a run that outlives a failed wait stays safe.
struct collector {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<node_result> results;
  std::vector<int> reports; // how often each index was reported
  int done = 0;

  explicit collector(size_t n) : results(n), reports(n) {
    // nop
  }

  bool wait(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock{mu};
    return cv.wait_for(lock, limit, [this] { return done > 0; });
  }
};

/// Starts `jobs` on `e`; the collector fills in as they end.
std::shared_ptr<collector> start(engine& e, std::vector<job> jobs, size_t fanout,
                                 uint64_t* id = nullptr) {
  auto c = std::make_shared<collector>(jobs.size());
  auto run = e.run(
    std::move(jobs), fanout,
    [c](size_t i, node_result r) {
      std::lock_guard<std::mutex> guard{c->mu};
      c->results.at(i) = std::move(r);
      ++c->reports.at(i);
    },
    [c] {
      {
        std::lock_guard<std::mutex> guard{c->mu};
        ++c->done;
      }
      c->cv.notify_all();
    });
  if (id != nullptr) {
    *id = run;
  }
  return c;
}

/// Runs `jobs` and waits (bounded) for all their results.
std::vector<node_result> run_all(engine& e, std::vector<job> jobs, size_t fanout = 8,
                                 std::chrono::milliseconds limit = 60s) {
  auto n = jobs.size();
  auto c = start(e, std::move(jobs), fanout);
  if (!c->wait(limit)) {
    ADD_FAILURE() << "the run did not end within " << limit.count() << " ms";
    return std::vector<node_result>(n);
  }
  std::lock_guard<std::mutex> guard{c->mu};
  EXPECT_EQ(c->done, 1);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(c->reports[i], 1) << "index " << i;
  }
  return c->results;
}

node_result run_one(engine& e, job j) {
  std::vector<job> jobs;
  jobs.push_back(std::move(j));
  return run_all(e, std::move(jobs)).at(0);
}

/// Polls `done` until it holds or `limit` passes: for effects outside the engine's callbacks.
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds limit = 10s) {
  auto end = steady::now() + limit;
  while (!done()) {
    if (steady::now() >= end) {
      return false;
    }
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in{p};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

long long ms_since(steady::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(steady::now() - t0).count();
}

class engine_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) {
      return; // sshd cannot log anybody in; every test skips
    }
    dir_ = new cws::test::temp_dir;
    cws::test::make_key(dir_->path / "key" / "id_ed25519");
    farm_ = new cws::test::sshd(dir_->path / "farm");
    farm_->authorize("root", key().string() + ".pub");
    farm_->start();
  }

  static void TearDownTestSuite() {
    delete farm_;
    delete dir_;
    farm_ = nullptr;
    dir_ = nullptr;
  }

  void SetUp() override {
    if (farm_ == nullptr) {
      GTEST_SKIP() << "needs root to run a private sshd";
    }
  }

  static std::filesystem::path key() {
    return dir_->path / "key" / "id_ed25519";
  }

  /// A known_hosts file of this test's own.
  static std::filesystem::path known_hosts() {
    return dir_->path
           / (std::string{"known_hosts."}
              + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  static engine_config config() {
    engine_config c;
    c.known_hosts = known_hosts();
    c.host_keys = host_key_policy::accept_new;
    c.connect_timeout = 20s; // room for many logins on a busy 2-core machine
    return c;
  }

  static job make_job(const std::string& node, const std::string& command,
                      unsigned short port = 0) {
    job j;
    j.node = node;
    j.address = "127.0.0.1";
    j.port = port != 0 ? port : farm_->port();
    j.user = "root";
    j.private_key = key();
    j.public_key = key().string() + ".pub";
    j.command = command;
    return j;
  }

  /// Runs a command on `node` and checks that it took a new login: nothing was pooled for it.
  static void expect_new_login(engine& e, const std::string& node) {
    int logins = farm_->logins();
    auto r = run_one(e, make_job(node, "echo fresh"));
    EXPECT_EQ(r.error, "") << r.message;
    EXPECT_EQ(r.out, "fresh\n");
    EXPECT_FALSE(r.reused);
    EXPECT_EQ(farm_->logins(), logins + 1);
  }

  static cws::test::temp_dir* dir_;
  static cws::test::sshd* farm_;
};

cws::test::temp_dir* engine_test::dir_ = nullptr;
cws::test::sshd* engine_test::farm_ = nullptr;

// -- results --------------------------------------------------------------------------

TEST_F(engine_test, stdout_stderr_and_exit_status_come_back) {
  engine e{config()};
  auto r = run_one(e, make_job("n1", "echo out; echo err >&2; exit 3"));
  EXPECT_EQ(r.name, "n1");
  EXPECT_EQ(r.error, "") << r.message;
  EXPECT_EQ(r.rc, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.truncated);
  EXPECT_FALSE(r.reused);
}

TEST_F(engine_test, a_run_without_jobs_is_done_at_once) {
  engine e{config()};
  bool done = false;
  auto id = e.run(
    {}, 4, [](size_t, node_result) { ADD_FAILURE() << "no job, no result"; }, [&] { done = true; });
  EXPECT_EQ(id, 0u);
  EXPECT_TRUE(done);
}

TEST_F(engine_test, output_past_the_cap_is_read_dropped_and_marked) {
  auto cfg = config();
  cfg.output_max = 100;
  engine e{cfg};
  auto r = run_one(e, make_job("n1", "printf %05000d 0; echo tail >&2"));
  EXPECT_EQ(r.rc, 0) << r.message;
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.out.size() + r.err.size(), 100u);
}

TEST_F(engine_test, a_node_without_an_address_is_resolved_first) {
  engine e{config()};
  auto j = make_job("127.0.0.1", "echo resolved"); // numeric: no name server is asked
  j.address.clear();
  auto r = run_one(e, j);
  EXPECT_EQ(r.error, "") << r.message;
  EXPECT_EQ(r.out, "resolved\n");
}

TEST_F(engine_test, many_jobs_share_a_small_fanout_and_keep_their_indexes) {
  engine e{config()};
  std::vector<job> jobs;
  for (int i = 0; i < 20; ++i) {
    jobs.push_back(make_job("n1", "echo " + std::to_string(i) + "; echo e" + std::to_string(i)
                                    + " >&2; exit " + std::to_string(i % 5)));
  }
  auto results = run_all(e, std::move(jobs), 4);
  for (int i = 0; i < 20; ++i) {
    const auto& r = results[static_cast<size_t>(i)];
    EXPECT_EQ(r.error, "") << i << ": " << r.message;
    EXPECT_EQ(r.out, std::to_string(i) + "\n");
    EXPECT_EQ(r.err, "e" + std::to_string(i) + "\n");
    EXPECT_EQ(r.rc, i % 5);
  }
  // never more than 4 at once: 4 connections, and every later job took one from the pool
  EXPECT_EQ(e.stats().connects, 4u);
  EXPECT_EQ(e.stats().reuses, 16u);
  EXPECT_EQ(e.stats().pooled, 4u);
}

// -- the pool -------------------------------------------------------------------------

TEST_F(engine_test, a_second_run_reuses_the_pooled_connection) {
  engine e{config()};
  auto first = run_one(e, make_job("n1", "echo one"));
  ASSERT_EQ(first.error, "") << first.message;
  EXPECT_FALSE(first.reused);
  EXPECT_EQ(e.stats().connects, 1u);
  EXPECT_EQ(e.stats().pooled, 1u);
  int logins = farm_->logins();
  auto second = run_one(e, make_job("n1", "echo two"));
  EXPECT_EQ(second.out, "two\n") << second.message;
  EXPECT_TRUE(second.reused);
  EXPECT_EQ(e.stats().reuses, 1u);
  EXPECT_EQ(e.stats().connects, 1u);
  EXPECT_EQ(farm_->logins(), logins); // no new login on the node
}

TEST_F(engine_test, idle_pooled_connections_expire_after_pool_idle) {
  auto cfg = config();
  cfg.pool_idle = 300ms;
  engine e{cfg};
  auto t0 = steady::now();
  ASSERT_EQ(run_one(e, make_job("n1", "true")).error, "");
  EXPECT_TRUE(wait_until([&] { return e.stats().pooled == 0; }, 10s));
  EXPECT_GE(ms_since(t0), 300); // not before pool_idle
  expect_new_login(e, "n1");
  EXPECT_EQ(e.stats().connects, 2u);
  EXPECT_EQ(e.stats().reuses, 0u);
}

TEST_F(engine_test, max_pooled_closes_the_least_recently_parked_connection) {
  auto cfg = config();
  cfg.max_pooled = 2;
  engine e{cfg};
  // one run each, so that the order in which they are parked is known: a, b, c
  for (const char* node : {"a", "b", "c"}) {
    ASSERT_EQ(run_one(e, make_job(node, "true")).error, "") << node;
  }
  EXPECT_EQ(e.stats().pooled, 2u); // a was closed
  auto c = run_one(e, make_job("c", "true"));
  EXPECT_TRUE(c.reused); // c is kept, and is now the most recently parked: b is the oldest
  auto a = run_one(e, make_job("a", "true"));
  EXPECT_EQ(a.error, "") << a.message;
  EXPECT_FALSE(a.reused); // a was the victim
  auto b = run_one(e, make_job("b", "true"));
  EXPECT_FALSE(b.reused); // parking a closed b
  auto c2 = run_one(e, make_job("c", "true"));
  EXPECT_FALSE(c2.reused); // parking b closed c
  EXPECT_EQ(e.stats().pooled, 2u);
  EXPECT_EQ(e.stats().connects, 6u);
}

TEST_F(engine_test, clear_pool_closes_every_pooled_connection) {
  engine e{config()};
  std::vector<job> jobs{make_job("a", "true"), make_job("b", "true"), make_job("c", "true")};
  run_all(e, jobs, 3);
  EXPECT_EQ(e.stats().pooled, 3u);
  e.clear_pool();
  EXPECT_TRUE(wait_until([&] { return e.stats().pooled == 0; }, 5s));
  expect_new_login(e, "a");
}

TEST_F(engine_test, a_pooled_connection_broken_by_an_sshd_restart_is_replaced) {
  engine e{config()};
  ASSERT_EQ(run_one(e, make_job("n1", "true")).error, "");
  farm_->stop();
  farm_->start();            // same port and host key; the pooled connection is dead
  expect_new_login(e, "n1"); // the broken connection was dropped, not reported as a failure
}

// -- failures -------------------------------------------------------------------------

TEST_F(engine_test, nothing_listening_is_refused_quickly) {
  engine e{config()};
  auto t0 = steady::now();
  auto r = run_one(e, make_job("dead", "true", cws::test::free_port()));
  EXPECT_LT(ms_since(t0), 2000);
  EXPECT_EQ(r.error, "refused");
  EXPECT_NE(r.message.find("Connection refused"), std::string::npos) << r.message;
  EXPECT_EQ(r.rc, -1);
}

TEST_F(engine_test, a_silent_server_ends_at_the_connect_timeout) {
  // accepts (in the kernel's backlog) but never sends a banner
  int silent = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(silent, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(silent, 16), 0);
  socklen_t len = sizeof a;
  getsockname(silent, reinterpret_cast<sockaddr*>(&a), &len);
  auto cfg = config();
  cfg.connect_timeout = 500ms;
  engine e{cfg};
  auto t0 = steady::now();
  auto r = run_one(e, make_job("silent", "true", ntohs(a.sin_port)));
  auto took = ms_since(t0);
  ::close(silent);
  EXPECT_EQ(r.error, "connect-timeout") << r.message;
  EXPECT_GE(took, 500);
  EXPECT_LT(took, 5000);
}

TEST_F(engine_test, command_timeout_ends_the_command_on_the_node) {
  engine e{config()};
  auto pidfile = dir_->path / "timeout.pid";
  auto j = make_job("n1", "echo $$ > " + pidfile.string() + "; exec sleep 30");
  j.command_timeout = 500ms;
  auto t0 = steady::now();
  auto r = run_one(e, j);
  EXPECT_LT(ms_since(t0), 10000);
  EXPECT_EQ(r.error, "timeout") << r.message;
  EXPECT_EQ(r.rc, -1);
  EXPECT_NE(r.message.find("n1"), std::string::npos);
  // the pty hang-up ends it on the node (here: this machine)
  auto pid = std::atoi(read_file(pidfile).c_str());
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(wait_until([&] { return ::kill(pid, 0) != 0; }, 10s)) << "sleep still runs";
}

TEST_F(engine_test, cancel_ends_running_and_waiting_jobs_promptly) {
  engine e{config()};
  std::vector<job> jobs;
  for (int i = 0; i < 3; ++i) {
    auto mark = dir_->path / ("started." + std::to_string(i));
    jobs.push_back(make_job("n1", "touch " + mark.string() + "; sleep 30"));
  }
  uint64_t id = 0;
  auto c = start(e, std::move(jobs), 2, &id); // job 2 waits for a free slot
  ASSERT_NE(id, 0u);
  ASSERT_TRUE(wait_until([&] {
    return std::filesystem::exists(dir_->path / "started.0")
           && std::filesystem::exists(dir_->path / "started.1");
  }));
  auto t0 = steady::now();
  e.cancel(id);
  ASSERT_TRUE(c->wait(5s));
  EXPECT_LT(ms_since(t0), 5000);
  std::lock_guard<std::mutex> guard{c->mu};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(c->results[i].error, "cancelled") << i;
    EXPECT_EQ(c->reports[i], 1) << i;
  }
  EXPECT_NE(c->results[2].message.find("before it started"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_->path / "started.2"));
  EXPECT_EQ(e.stats().pooled, 0u); // a cancelled command's connection is closed, not pooled
  e.cancel(id);                    // ended: left alone
}

TEST_F(engine_test, cancel_ends_the_remote_command_and_its_children_without_a_pty) {
  engine e{config()};
  std::vector<job> jobs;
  for (int i = 0; i < 2; ++i) {
    auto pidfile = dir_->path / ("child.pid." + std::to_string(i));
    // a child in the background and a `trap ''`-free shell: both must go
    jobs.push_back(make_job("n1", "sleep 300 & echo $! > " + pidfile.string() + "; wait"));
  }
  uint64_t id = 0;
  auto c = start(e, std::move(jobs), 2, &id);
  auto pid_of = [&](int i) {
    return std::atol(read_file(dir_->path / ("child.pid." + std::to_string(i))).c_str());
  };
  ASSERT_TRUE(wait_until([&] { return pid_of(0) > 0 && pid_of(1) > 0; }));
  ASSERT_EQ(::kill(static_cast<pid_t>(pid_of(0)), 0), 0); // running
  e.cancel(id);
  ASSERT_TRUE(c->wait(10s));
  {
    std::lock_guard<std::mutex> guard{c->mu};
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(c->results[i].error, "cancelled") << i;
      EXPECT_EQ(c->results[i].message, "The request was cancelled.") << i;
    }
  }
  for (int i = 0; i < 2; ++i) { // gone on the node (reaped by init: poll a moment)
    EXPECT_TRUE(wait_until([&] { return ::kill(static_cast<pid_t>(pid_of(i)), 0) != 0; }, 5s))
      << "sleep " << pid_of(i) << " still runs";
  }
}

TEST_F(engine_test, output_arrives_as_it_comes_and_matches_the_result) {
  engine e{config()};
  struct seen {
    std::mutex mu;
    std::string out, err;
    bool first_before_end = false;
  };
  auto s = std::make_shared<seen>();
  auto flag = dir_->path / "streamed.go";
  std::vector<job> jobs;
  // the second line is written only once the first has been seen here
  jobs.push_back(make_job("n1", "echo one; echo two >&2; while [ ! -e " + flag.string()
                                  + " ]; do sleep 0.05; done; echo three"));
  auto c = std::make_shared<collector>(1);
  e.run(
    std::move(jobs), 1,
    [c](size_t i, node_result r) {
      std::lock_guard<std::mutex> guard{c->mu};
      c->results.at(i) = std::move(r);
    },
    [c] {
      {
        std::lock_guard<std::mutex> guard{c->mu};
        ++c->done;
      }
      c->cv.notify_all();
    },
    [s](size_t i, int stream, const char* data, size_t size) {
      std::lock_guard<std::mutex> guard{s->mu};
      EXPECT_EQ(i, 0u);
      (stream == 0 ? s->out : s->err).append(data, size);
    });
  ASSERT_TRUE(wait_until([&] {
    std::lock_guard<std::mutex> guard{s->mu};
    return s->out == "one\n" && s->err == "two\n";
  }));
  std::ofstream{flag} << "go";
  ASSERT_TRUE(c->wait(20s));
  std::lock_guard<std::mutex> guard{c->mu};
  EXPECT_EQ(c->results[0].out, "one\nthree\n"); // the pid marker is never output
  EXPECT_EQ(s->out, c->results[0].out);
  EXPECT_EQ(s->err, c->results[0].err);
}

TEST_F(engine_test, stopping_the_engine_ends_running_jobs_as_disconnected) {
  auto e = std::make_unique<engine>(config());
  auto mark = dir_->path / "stopping.started";
  std::vector<job> jobs{make_job("n1", "touch " + mark.string() + "; sleep 30")};
  auto c = start(*e, std::move(jobs), 1);
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(mark); }));
  auto t0 = steady::now();
  e.reset();
  EXPECT_LT(ms_since(t0), 5000);
  std::lock_guard<std::mutex> guard{c->mu};
  EXPECT_EQ(c->results[0].error, "disconnected");
  EXPECT_EQ(c->reports[0], 1);
}

// -- host keys ------------------------------------------------------------------------

TEST_F(engine_test, an_unknown_host_is_refused_when_strict_and_learned_with_accept_new) {
  auto cfg = config();
  cfg.host_keys = host_key_policy::strict;
  {
    engine e{cfg};
    auto r = run_one(e, make_job("stranger", "true"));
    EXPECT_EQ(r.error, "host-key");
    EXPECT_NE(r.message.find("No host key is known for stranger"), std::string::npos) << r.message;
  }
  EXPECT_EQ(read_file(cfg.known_hosts).find("stranger"), std::string::npos);
  cfg.host_keys = host_key_policy::accept_new;
  {
    engine e{cfg};
    auto r = run_one(e, make_job("stranger", "true"));
    EXPECT_EQ(r.error, "") << r.message;
  } // written by the engine's thread at the latest when it stops
  auto port = std::to_string(farm_->port());
  EXPECT_NE(read_file(cfg.known_hosts).find("[stranger]:" + port + " ssh-ed25519 "),
            std::string::npos)
    << read_file(cfg.known_hosts);
  cfg.host_keys = host_key_policy::strict;
  engine e{cfg};
  EXPECT_EQ(run_one(e, make_job("stranger", "true")).error, ""); // known now
}

TEST_F(engine_test, a_changed_host_key_is_refused_unless_checking_is_off) {
  cws::test::sshd node{dir_->path / "rekeyed"};
  node.authorize("root", key().string() + ".pub");
  node.start();
  auto cfg = config();
  {
    engine e{cfg};
    ASSERT_EQ(run_one(e, make_job("rekeyed", "true", node.port())).error, ""); // learned
  }
  auto learned = read_file(cfg.known_hosts);
  ASSERT_NE(learned.find("rekeyed"), std::string::npos);
  node.stop();
  node.new_host_key();
  node.start();
  for (auto policy : {host_key_policy::strict, host_key_policy::accept_new}) {
    cfg.host_keys = policy;
    engine e{cfg};
    auto r = run_one(e, make_job("rekeyed", "true", node.port()));
    EXPECT_EQ(r.error, "host-key") << static_cast<int>(policy);
    EXPECT_NE(r.message.find("REMOTE HOST IDENTIFICATION HAS CHANGED"), std::string::npos)
      << r.message;
  }
  EXPECT_EQ(read_file(cfg.known_hosts), learned); // the old key stays
  cfg.host_keys = host_key_policy::off;
  engine e{cfg};
  auto r = run_one(e, make_job("rekeyed", "echo unchecked", node.port()));
  EXPECT_EQ(r.error, "") << r.message;
  EXPECT_EQ(r.out, "unchecked\n");
  node.stop();
}

TEST(host_key_policy_test, parses_the_three_names_and_refuses_others) {
  EXPECT_EQ(cws::ssh::parse_host_key_policy("strict"), host_key_policy::strict);
  EXPECT_EQ(cws::ssh::parse_host_key_policy("accept-new"), host_key_policy::accept_new);
  EXPECT_EQ(cws::ssh::parse_host_key_policy("off"), host_key_policy::off);
  EXPECT_THROW(cws::ssh::parse_host_key_policy("yes"), std::invalid_argument);
}

} // namespace
