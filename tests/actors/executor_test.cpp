// The fan-out executor. Its planning paths (refusals, a store that does not answer) and its
// runs over a fake operation (tests/support/fake_operation.hpp: ordering, streaming, cancel,
// limits) run under CAF's deterministic test coordinator; its runs over the real SSH engine
// against a private sshd on 127.0.0.1, whose callbacks come from the engine's own thread, run
// on the threaded scheduler (the test coordinator's queue must only be touched by the test
// thread) and wait for the executor's answer, bounded.

#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>

#include <algorithm>
#include <cstdlib>
#include <future>
#include <mutex>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/fake_operation.hpp"
#include "../support/sshd.hpp"
#include "actors/executor_actor.hpp"
#include "actors/store_actor.hpp"
#include "api/planner.hpp"
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

/// Collects streamed node results (pushed from the executor's thread).
struct collecting_sink : node_sink {
  void push(base::node_result node) override {
    std::lock_guard<std::mutex> guard{mutex};
    got.push_back(std::move(node));
  }
  std::mutex mutex;
  std::vector<base::node_result> got;
};

/// The executor's bind over real transports `d`, as the daemon makes it.
bind_ptr bind_to(std::shared_ptr<api::drivers> d) {
  return std::make_shared<bind_fn>(
    [d](const store::database& db, const api_call& call, const authorization& auth,
        const store::noderange_options& opts,
        node_operation_ptr& out) { return api::plan(db, call, auth, opts, *d, out); });
}

/// Where a test keeps what `done` got.
struct answer {
  bool got = false;
  api_result result;
};

done_ptr into(std::shared_ptr<answer> a) {
  return std::make_shared<done_fn>([a](api_result r) {
    EXPECT_FALSE(a->got) << "done is called once";
    a->got = true;
    a->result = std::move(r);
  });
}

struct coordinator_fixture : ::testing::Test, test::coordinated_system {
  /// Spawns the store and the executor over it, binding calls with `bind`.
  void spawn(bind_ptr bind, executor_config ec = {}) {
    store_config sc;
    sc.detached_writer = false;
    sc.commit_wait = {};
    st = spawn_store(sys, db, sc);
    ec.bind = std::move(bind);
    ex = spawn_executor(sys, st, ec);
    sched.run();
  }

  /// Spawns them over real transports `d`.
  void spawn(std::shared_ptr<api::drivers> d) {
    spawn(bind_to(std::move(d)));
  }

  /// Spawns them over the fake transport.
  void spawn_fake(executor_config ec = {}) {
    spawn(std::make_shared<bind_fn>(
            [b = fake](const store::database& d, const api_call& call, const authorization& auth,
                       const store::noderange_options& opts,
                       node_operation_ptr& out) { return (*b)(d, call, auth, opts, out); }),
          std::move(ec));
  }

  /// Starts `c` on the executor and runs every actor until nothing is left to do.
  std::shared_ptr<answer> send(api_call_ptr c, authorization auth = as_root()) {
    auto a = std::make_shared<answer>();
    self->send(ex, run_atom::value, std::move(c), std::move(auth), into(a));
    sched.run();
    return a;
  }

  ~coordinator_fixture() override {
    self->send_exit(st, caf::exit_reason::user_shutdown);
    self->send_exit(ex, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// Runs `c` through the executor, every actor run to the end.
  api_result run(api_call_ptr c) {
    auto a = send(std::move(c));
    EXPECT_TRUE(a->got);
    return a->result;
  }

  std::shared_ptr<test::fake_binder> fake = std::make_shared<test::fake_binder>();
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
  auto a = std::make_shared<answer>();
  self->send(ex, run_atom::value, api_call_ptr{shell_call("n1", "true")}, as_root(), into(a));
  ASSERT_TRUE(sched.prioritize(ex));
  ASSERT_TRUE(sched.try_run_once()); // the executor asks the store, which is never run
  ASSERT_EQ(sched.trigger_timeouts(), 1u);
  ASSERT_TRUE(sched.prioritize(ex));
  ASSERT_TRUE(sched.try_run_once()); // the request timed out
  EXPECT_TRUE(a->got);
  EXPECT_EQ(a->result.error, errc::unavailable);
  sched.run(); // the store's late answer finds no one waiting
}

TEST_F(coordinator_fixture, an_executor_without_a_bind_refuses_fan_out_calls_as_unavailable) {
  spawn(bind_ptr{});
  auto r = run(shell_call("n1", "true"));
  EXPECT_EQ(r.error, errc::unavailable);
}

TEST_F(coordinator_fixture, results_come_in_noderange_order_whatever_order_nodes_finish_in) {
  spawn_fake();
  auto a = send(shell_call("n1,n2,n3", "x"));
  ASSERT_EQ(fake->ops().size(), 1u);
  auto op = fake->ops()[0];
  EXPECT_TRUE(op->started());
  op->finish(2, 0, "three");
  op->finish(0, 1, "one");
  sched.run();
  EXPECT_FALSE(a->got) << "a node is still running";
  op->finish(1, 0, "two");
  sched.run();
  ASSERT_TRUE(a->got);
  ASSERT_EQ(a->result.nodes.size(), 3u);
  EXPECT_EQ(a->result.nodes[0].name, "n1");
  EXPECT_EQ(a->result.nodes[0].rc, 1);
  EXPECT_EQ(a->result.nodes[0].out, "one");
  EXPECT_EQ(a->result.nodes[1].out, "two");
  EXPECT_EQ(a->result.nodes[2].out, "three");
}

TEST_F(coordinator_fixture, a_streamed_call_pushes_each_node_as_it_ends_and_keeps_its_status) {
  spawn_fake();
  auto sink = std::make_shared<collecting_sink>();
  auto c = shell_call("n1,n2", "x");
  c->sink = sink;
  auto a = send(c);
  auto op = fake->ops().at(0);
  op->finish(1, 4, "second");
  sched.run();
  ASSERT_EQ(sink->got.size(), 1u);
  EXPECT_EQ(sink->got[0].name, "n2");
  EXPECT_EQ(sink->got[0].out, "second");
  op->finish(0, 0, "first");
  sched.run();
  ASSERT_EQ(sink->got.size(), 2u);
  ASSERT_TRUE(a->got);
  EXPECT_EQ(a->result.nodes[1].rc, 4);
  EXPECT_TRUE(a->result.nodes[1].out.empty()) << "the output went out in the stream";
}

TEST_F(coordinator_fixture, a_cancelled_call_ends_its_running_nodes_with_the_reason) {
  spawn_fake();
  auto c = shell_call("n1,n2", "x");
  c->cancel = std::make_shared<call_cancel>();
  auto a = send(c);
  auto op = fake->ops().at(0);
  op->finish(0, 0);
  sched.run();
  c->cancel->cancel("The client closed the connection; ended.");
  sched.run();
  EXPECT_TRUE(op->cancelled());
  ASSERT_TRUE(a->got);
  EXPECT_EQ(a->result.nodes[0].rc, 0);
  EXPECT_EQ(a->result.nodes[1].error, "cancelled");
  EXPECT_EQ(a->result.nodes[1].message, "The client closed the connection; ended.");
}

TEST_F(coordinator_fixture,
       a_call_over_the_nodes_in_flight_limit_is_refused_and_never_bound_to_run) {
  executor_config ec;
  ec.max_nodes_per_user = 3;
  spawn_fake(ec);
  auto first = send(shell_call("n1,n2", "x"));
  auto second = send(shell_call("n3,n4", "x")); // 2 running + 2 > 3
  ASSERT_TRUE(second->got);
  EXPECT_EQ(second->result.error, errc::unavailable);
  EXPECT_FALSE(fake->ops().at(1)->started());
  fake->ops()[0]->finish(0, 0);
  fake->ops()[0]->finish(1, 0);
  sched.run();
  EXPECT_TRUE(first->got);
  auto third = send(shell_call("n3,n4", "x")); // the first one's nodes were released
  EXPECT_TRUE(fake->ops().at(2)->started());
}

TEST_F(coordinator_fixture, an_executor_that_stops_answers_its_running_calls_and_cancels_them) {
  spawn_fake();
  auto a = send(shell_call("n1", "x"));
  self->send_exit(ex, caf::exit_reason::user_shutdown);
  sched.run();
  ASSERT_TRUE(a->got);
  EXPECT_EQ(a->result.error, errc::unavailable);
  EXPECT_TRUE(fake->ops().at(0)->cancelled());
}

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
    st = spawn_store(*sys, db, store_config{});
    executor_config xc;
    xc.bind = bind_to(drivers);
    ex = spawn_executor(*sys, st, xc);
  }

  ~sshd_fixture() override {
    caf::anon_send_exit(ex, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(st, caf::exit_reason::user_shutdown);
  }

  api_result run(api_call_ptr c) {
    auto got = std::make_shared<std::promise<api_result>>();
    auto done = std::make_shared<done_fn>([got](api_result r) { got->set_value(std::move(r)); });
    caf::anon_send(ex, run_atom::value, std::move(c), as_root(), std::move(done));
    auto f = got->get_future();
    if (f.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      ADD_FAILURE() << "no answer within 60 s";
      return {};
    }
    return f.get();
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
  self->send(ex, run_atom::value, api_call_ptr{c}, as_root(),
             std::make_shared<done_fn>([](api_result) {}));
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
