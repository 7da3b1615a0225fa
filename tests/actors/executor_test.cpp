// The fan-out executor. Its planning paths (refusals, a store that does not answer) run under
// CAF's deterministic test coordinator; its runs drive the real SSH engine against a private
// sshd on 127.0.0.1, whose callbacks come from the engine's own thread, so those run on the
// threaded scheduler (the test coordinator's queue must only be touched by the test thread)
// and wait for the executor's reply, bounded.

#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/sshd.hpp"
#include "actors/executor_actor.hpp"
#include "actors/store_actor.hpp"
#include "coordinated_system.hpp"

namespace {

using namespace cws;
using namespace cws::actors;
using namespace cws::api;
using store::object_type;

std::shared_ptr<api_call> shell_call(std::string target, std::string command) {
  auto c = std::make_shared<api_call>();
  c->op = operation::nodeshell;
  c->target = std::move(target);
  c->command = std::move(command);
  c->creds.user = "root";
  c->policy_command = "xdsh";
  return c;
}

authorization as_root() {
  authorization a;
  a.user = "root";
  return a;
}

/// A store with nodes n1..n6 on `port` of 127.0.0.1, and keys under `dir/keys`.
std::shared_ptr<store::database> nodes_db(const std::filesystem::path& dir, uint16_t port) {
  auto db = std::make_shared<store::database>(dir / "db");
  db->write([&](store::write_txn& t) {
    for (int i = 1; i <= 6; ++i) {
      t.put(object_type::node, "n" + std::to_string(i),
            {{"groups", "all"}, {"ip", "127.0.0.1"}, {"sshport", std::to_string(port)}});
    }
  });
  return db;
}

struct coordinator_fixture : ::testing::Test, test::coordinated_system {
  /// Spawns the store (with `d` as its transports) and the executor over it.
  void spawn(std::shared_ptr<api::drivers> d) {
    store_config sc;
    sc.detached_writer = false;
    sc.commit_wait = {};
    sc.drivers = std::move(d);
    st = spawn_store(sys, db, sc);
    ex = spawn_executor(sys, st, executor_config{});
    sched.run();
  }

  ~coordinator_fixture() override {
    self->send_exit(st, caf::exit_reason::user_shutdown);
    self->send_exit(ex, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// Runs `c` through the executor, every actor run to the end.
  api_result run(api_call_ptr c) {
    self->send(ex, run_atom::value, std::move(c), as_root());
    sched.run();
    api_result out;
    self->receive([&](api_result& r) { out = std::move(r); },
                  [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
    return out;
  }

  test::temp_dir dir;
  std::shared_ptr<store::database> db = nodes_db(dir.path, test::free_port());
  store_actor st;
  executor_actor ex;
};

TEST_F(coordinator_fixture, a_disabled_transport_is_refused_as_unavailable) {
  spawn(std::make_shared<api::drivers>()); // no SSH engine
  auto r = run(shell_call("n1", "true"));
  EXPECT_EQ(r.error, errc::unavailable);
  ASSERT_FALSE(r.messages.empty());
  EXPECT_EQ(r.messages.front(), "nodeshell is not enabled on this service.");
}

TEST_F(coordinator_fixture, planning_failures_come_back_as_the_result_and_nothing_runs) {
  auto d = std::make_shared<api::drivers>();
  d->ssh = std::make_shared<ssh::engine>(ssh::engine_config{});
  d->shell.key_dir = dir.path / "keys";
  spawn(d);
  auto r = run(shell_call("n1,ghost", "true"));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.nodes.empty());
  r = run(shell_call("n1", "true")); // root has no key yet
  EXPECT_FALSE(r.ok());
  ASSERT_FALSE(r.messages.empty());
  EXPECT_NE(r.messages.front().find("No SSH key is configured for user 'root'"), std::string::npos)
    << r.messages.front();
  EXPECT_EQ(d->ssh->stats().connects, 0u);
}

TEST_F(coordinator_fixture, a_store_that_does_not_answer_ends_the_call_as_unavailable) {
  spawn(std::make_shared<api::drivers>());
  self->send(ex, run_atom::value, api_call_ptr{shell_call("n1", "true")}, as_root());
  ASSERT_TRUE(sched.prioritize(ex));
  ASSERT_TRUE(sched.try_run_once()); // the executor asks the store, which is never run
  ASSERT_EQ(sched.trigger_timeouts(), 1u);
  ASSERT_TRUE(sched.prioritize(ex));
  ASSERT_TRUE(sched.try_run_once()); // the request timed out
  bool got = false;
  self->receive(
    [&](api_result& r) {
      got = true;
      EXPECT_EQ(r.error, errc::unavailable);
    },
    [&](caf::error& e) { ADD_FAILURE() << sys.render(e); });
  EXPECT_TRUE(got);
  sched.run(); // the store's late answer finds no one waiting
}

/// Collects streamed node results (pushed from the executor's thread).
struct collecting_sink : node_sink {
  void push(base::node_result node) override {
    std::lock_guard<std::mutex> guard{mutex};
    got.push_back(std::move(node));
  }
  std::mutex mutex;
  std::vector<base::node_result> got;
};

struct sshd_fixture : ::testing::Test {
  static void SetUpTestSuite() {
    dir_ = new test::temp_dir;
    farm_ = new test::sshd(dir_->path / "farm");
    test::make_key(dir_->path / "keys" / "root" / "id_ed25519");
    farm_->authorize("root", dir_->path / "keys" / "root" / "id_ed25519.pub");
    farm_->start();
  }

  static void TearDownTestSuite() {
    farm_->stop();
    delete farm_;
    delete dir_;
  }

  sshd_fixture() {
    cfg.set("logger.file-verbosity", caf::atom("quiet"));
    ssh::engine_config ec;
    ec.known_hosts = dir.path / "known_hosts";
    ec.connect_timeout = std::chrono::seconds(10);
    drivers->ssh = std::make_shared<ssh::engine>(ec);
    drivers->shell.key_dir = dir_->path / "keys";
    drivers->shell.fanout = 2; // fewer at once than nodes: the executor sees them finish in turns
    store_config sc;
    sc.drivers = drivers;
    st = spawn_store(*sys, db, sc);
    ex = spawn_executor(*sys, st, executor_config{});
  }

  ~sshd_fixture() override {
    caf::anon_send_exit(ex, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(st, caf::exit_reason::user_shutdown);
  }

  api_result run(api_call_ptr c) {
    caf::scoped_actor self{*sys};
    api_result out;
    self->request(ex, std::chrono::seconds(60), run_atom::value, std::move(c), as_root())
      .receive([&](api_result& r) { out = std::move(r); },
               [&](caf::error& e) { ADD_FAILURE() << sys->render(e); });
    return out;
  }

  static test::temp_dir* dir_;
  static test::sshd* farm_;
  test::temp_dir dir;
  std::shared_ptr<store::database> db = nodes_db(dir.path, farm_->port());
  std::shared_ptr<api::drivers> drivers = std::make_shared<api::drivers>();
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys = std::make_unique<caf::actor_system>(cfg);
  store_actor st;
  executor_actor ex;
};

test::temp_dir* sshd_fixture::dir_ = nullptr;
test::sshd* sshd_fixture::farm_ = nullptr;

TEST_F(sshd_fixture, every_node_is_answered_in_noderange_order_with_its_output) {
  auto r = run(shell_call("n6,n1-n5", "echo out-$((6*7)); echo err >&2; exit 3"));
  ASSERT_TRUE(r.ok()) << (r.messages.empty() ? "" : r.messages.front());
  ASSERT_EQ(r.nodes.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    const auto& n = r.nodes[i];
    EXPECT_EQ(n.name, "n" + std::to_string(i + 1)) << "noderange order, not finishing order";
    EXPECT_EQ(n.rc, 3) << n.name << ": " << n.error << " " << n.message;
    EXPECT_EQ(n.out, "out-42\n");
    EXPECT_EQ(n.err, "err\n");
  }
  // the second run finds the connections pooled
  auto connects = drivers->ssh->stats().connects;
  r = run(shell_call("n1-n6", "true"));
  EXPECT_EQ(drivers->ssh->stats().connects, connects);
  EXPECT_GE(drivers->ssh->stats().reuses, 6u);
}

TEST_F(sshd_fixture, a_streamed_run_pushes_each_node_once_and_keeps_only_the_status) {
  auto sink = std::make_shared<collecting_sink>();
  auto c = shell_call("n1-n4", "echo $((1+1))");
  c->sink = sink;
  auto r = run(c);
  ASSERT_EQ(r.nodes.size(), 4u);
  std::vector<std::string> pushed;
  {
    std::lock_guard<std::mutex> guard{sink->mutex};
    for (const auto& n : sink->got) {
      pushed.push_back(n.name);
      EXPECT_EQ(n.out, "2\n");
    }
  }
  std::sort(pushed.begin(), pushed.end());
  EXPECT_EQ(pushed, (std::vector<std::string>{"n1", "n2", "n3", "n4"}));
  for (const auto& n : r.nodes) {
    EXPECT_EQ(n.rc, 0) << n.name;
    EXPECT_TRUE(n.out.empty()) << "the output went out in the stream, not again in the result";
  }
}

TEST_F(sshd_fixture, an_executor_that_stops_cancels_its_running_nodes) {
  // the command would run for a minute; with a timeout it gets a pty, so the hang-up ends it
  auto c = shell_call("n1-n2", "sleep 61");
  c->timeout_ms = 120000;
  caf::scoped_actor self{*sys};
  self->send(ex, run_atom::value, api_call_ptr{c}, as_root());
  // both nodes started: the sleeps are running on the sshd
  auto running = [] {
    return std::system("pgrep -x sleep -a | grep -q 'sleep 61'") == 0;
  };
  for (int i = 0; i < 3000 && !running(); ++i) { // up to 30 s: logins are slow on a loaded machine
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(running());
  self->send_exit(ex, caf::exit_reason::user_shutdown);
  bool gone = false;
  for (int i = 0; i < 3000 && !gone; ++i) {
    gone = !running();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the remote commands outlived the executor";
}

} // namespace
