// Service-node delegation under CAF's deterministic test coordinator: the head's delegation
// (actors/delegation_actor.hpp) behind the real executor, service nodes as local actors with
// the same typed interface as over the link (actors/service_node_actor.hpp), each running its
// share on a fake operation the test ends node by node. Partition and merge by index, batches
// and credits, a service node lost mid-run, cancel, the executor's stop; every node gets
// exactly one result (the end contract of tests/api/end_contract_test.cpp), nothing runs twice.

#include <gtest/gtest.h>

#include <caf/event_based_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <memory>
#include <mutex>

#include "../store/temp_home.hpp"
#include "../support/fake_operation.hpp"
#include "actors/delegation_actor.hpp"
#include "actors/executor_actor.hpp"
#include "actors/service_node_actor.hpp"
#include "actors/store_actor.hpp"
#include "coordinated_system.hpp"

namespace {

using namespace cws;
using namespace cws::actors;
using namespace cws::api;
namespace wire = cws::api::wire;

/// What a service node was asked to run: each share's job and its fake operation.
struct sn_record {
  std::vector<wire::job_request> jobs;
  std::vector<std::shared_ptr<test::fake_operation>> ops;
};

/// The end contract's tally (tests/api/end_contract_test.cpp): results per node, on_done.
struct tally {
  std::vector<int> results;
  std::vector<base::node_result> last;
  int done = 0;

  explicit tally(size_t n) : results(n), last(n) {
  }

  void expect_each_once() const {
    for (size_t i = 0; i < results.size(); ++i) {
      EXPECT_EQ(results[i], 1) << "node " << i;
    }
    EXPECT_EQ(done, 1);
  }
};

/// Collects streamed node results (pushed from the executor's thread).
struct collecting_sink : node_sink {
  void push(base::node_result node) override {
    got.push_back(std::move(node));
  }
  std::vector<base::node_result> got;
};

/// A share's sink the test reads: batches and ends as they came.
struct sink_log {
  std::vector<wire::result_batch> batches;
  std::vector<wire::share_end> ends;
};

sn_sink_actor::behavior_type recording_sink(sn_sink_actor::pointer, std::shared_ptr<sink_log> log) {
  return {
    [log](sn_batch_atom, wire::result_batch& b) { log->batches.push_back(std::move(b)); },
    [log](sn_end_atom, wire::share_end& e) { log->ends.push_back(std::move(e)); },
  };
}

std::shared_ptr<api_call> shell_call(std::string command) {
  auto c = std::make_shared<api_call>();
  c->op = operation::nodeshell;
  c->command = std::move(command);
  c->creds.user = "alice";
  c->policy_command = "xdsh";
  return c;
}

struct answer {
  bool got = false;
  api_result result;
};

struct delegation_fixture : ::testing::Test, test::coordinated_system {
  delegation_fixture() {
    store_config sc;
    sc.detached_writer = false;
    sc.commit_wait = {};
    st = spawn_store(sys, db, sc);
    executor_config ec;
    ec.bind = std::make_shared<bind_fn>(
      [this](const store::database&, const api_call&, const authorization&,
             const store::noderange_options&, node_operation_ptr& out) {
        out = next_op;
        return api_result{};
      });
    ex = spawn_executor(sys, st, ec);
    sched.run();
  }

  ~delegation_fixture() override {
    next_op.reset();
    self->send_exit(ex, caf::exit_reason::user_shutdown);
    self->send_exit(st, caf::exit_reason::user_shutdown);
    for (auto& [name, h] : sns) {
      self->send_exit(h, caf::exit_reason::user_shutdown);
    }
    sched.run();
  }

  /// Spawns service node `name`, whose shares run on fake operations kept in records[name].
  void spawn_sn(const std::string& name,
                std::function<std::string(const wire::share_request&)> verify = {}) {
    auto rec = std::make_shared<sn_record>();
    records[name] = rec;
    service_node_config c;
    c.name = name;
    c.verify = std::move(verify);
    c.bind = [rec](const wire::job_request& job, node_operation_ptr& out) {
      std::vector<std::string> names;
      for (const auto& t : job.targets) {
        names.push_back(t.name);
      }
      auto op = std::make_shared<test::fake_operation>(std::move(names));
      rec->jobs.push_back(job);
      rec->ops.push_back(op);
      out = op;
      return api_result{};
    };
    sns[name] = spawn_service_node(sys, c);
    sched.run();
  }

  /// The delegated operation of nodes `names` with `servicenode` values `values`, the head's
  /// share on a fake operation (`head_op`).
  node_operation_ptr delegated(const std::vector<std::string>& names,
                               const std::vector<std::string>& values, size_t fanout = 64,
                               std::function<void(wire::share_request&)> seal = {}) {
    service_nodes known;
    for (const auto& [name, h] : sns) {
      known.known[name] = true;
    }
    for (const auto& name : down) {
      known.known[name] = false;
    }
    known.head = {"mgmt"};
    auto plan = plan_delegation(names, values, known);
    std::vector<wire::target> targets;
    for (size_t i = 0; i < names.size(); ++i) {
      targets.push_back(
        {static_cast<uint32_t>(i), names[i], "10.1.0." + std::to_string(i), 2222, "alice"});
    }
    auto job = wire::make_request(0, *shell_call("uptime"), std::move(targets));
    size_t head_fanout = 0;
    auto run = make_delegated_run(names, job, plan, sns, settings, fanout, head_fanout);
    this->head_fanout = head_fanout;
    std::vector<std::string> head_names;
    for (auto i : plan.head) {
      head_names.push_back(names[i]);
    }
    head_op = std::make_shared<test::fake_operation>(head_names);
    run.head = head_names.empty() ? nullptr : head_op;
    run.seal = std::move(seal);
    return delegate(sys, std::move(run));
  }

  /// Runs `c` on the executor over `op`; every actor runs until nothing is left to do.
  std::shared_ptr<answer> send(api_call_ptr c, node_operation_ptr op) {
    next_op = std::move(op);
    auto a = std::make_shared<answer>();
    auto done = std::make_shared<done_fn>([a](api_result r) {
      EXPECT_FALSE(a->got) << "done is called once";
      a->got = true;
      a->result = std::move(r);
    });
    self->send(ex, run_atom::value, std::move(c), authorization{"alice"}, std::move(done));
    sched.run();
    next_op.reset(); // the executor holds it now
    return a;
  }

  test::temp_dir dir;
  std::shared_ptr<store::database> db = std::make_shared<store::database>(dir.path / "db");
  store_actor st;
  executor_actor ex;
  node_operation_ptr next_op;
  std::unordered_map<std::string, sn_executor_actor> sns;
  std::unordered_map<std::string, std::shared_ptr<sn_record>> records;
  std::vector<std::string> down;
  delegation_settings settings;
  std::shared_ptr<test::fake_operation> head_op;
  size_t head_fanout = 0;
};

TEST_F(delegation_fixture, a_delegated_call_answers_as_the_head_would_every_node_at_its_index) {
  spawn_sn("sn1");
  spawn_sn("sn2");
  down = {"sn3"};
  auto op = delegated({"n0", "n1", "n2", "n3", "n4", "n5"},
                      {"", "sn1", "sn2", "sn1,sn2", "sn3,sn2", "sn3"}, 12);
  auto sink = std::make_shared<collecting_sink>();
  auto c = shell_call("uptime");
  c->sink = sink;
  auto a = send(c, op);
  // each service node got its share only, re-indexed, with the resolved targets
  auto& sn1 = *records["sn1"];
  auto& sn2 = *records["sn2"];
  ASSERT_EQ(sn1.jobs.size(), 1u);
  ASSERT_EQ(sn2.jobs.size(), 1u);
  ASSERT_EQ(sn1.jobs[0].targets.size(), 2u);
  EXPECT_EQ(sn1.jobs[0].targets[1].name, "n3");
  EXPECT_EQ(sn1.jobs[0].targets[1].index, 1u);
  EXPECT_EQ(sn1.jobs[0].targets[1].address, "10.1.0.3");
  EXPECT_EQ(sn1.jobs[0].targets[1].port, 2222);
  EXPECT_EQ(sn1.jobs[0].targets[1].user, "alice");
  EXPECT_EQ(sn1.jobs[0].command, "uptime");
  ASSERT_EQ(sn2.jobs[0].targets.size(), 2u); // n2, and n4 from its backup
  EXPECT_EQ(sn2.jobs[0].targets[1].name, "n4");
  // fanout 12 over 1 (head), 2, 2 nodes: never more than their nodes
  EXPECT_EQ(head_fanout, 1u);
  EXPECT_EQ(sn1.jobs[0].fanout, 2u);
  // n5's only service node is down: refused at once, naming it
  ASSERT_EQ(sink->got.size(), 1u);
  EXPECT_EQ(sink->got[0].name, "n5");
  EXPECT_EQ(sink->got[0].error, "servicenode");
  EXPECT_EQ(sink->got[0].message,
            "service node sn3 is not registered or down; nothing was run on this node "
            "(sn_fallback = fail)");
  // nodes end in any order, wherever they run
  sn2.ops[0]->finish(1, 0, "four");
  sn1.ops[0]->finish(1, 3, "three");
  sched.run();
  head_op->finish(0, 0, "zero");
  sn2.ops[0]->finish(0, 0, "two");
  sched.run();
  EXPECT_FALSE(a->got) << "n1 still runs";
  sn1.ops[0]->finish(0, 1, "one");
  sched.run();
  ASSERT_TRUE(a->got);
  ASSERT_TRUE(a->result.ok());
  ASSERT_EQ(a->result.nodes.size(), 6u);
  const char* outs[] = {"zero", "one", "two", "three", "four", ""};
  int rcs[] = {0, 1, 0, 3, 0, -1};
  ASSERT_EQ(sink->got.size(), 6u) << "each node streamed once";
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(a->result.nodes[i].name, "n" + std::to_string(i)) << "noderange order";
    EXPECT_EQ(a->result.nodes[i].rc, rcs[i]) << i;
  }
  std::map<std::string, std::string> streamed;
  for (const auto& n : sink->got) {
    EXPECT_TRUE(streamed.emplace(n.name, n.out).second) << n.name << " twice";
  }
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(streamed["n" + std::to_string(i)], outs[i]);
  }
  EXPECT_EQ(sink->got[1].name, "n4") << "streamed as they end, as from the head";
}

TEST_F(delegation_fixture, a_service_node_sends_bounded_batches_and_waits_for_credit) {
  spawn_sn("sn1");
  auto log = std::make_shared<sink_log>();
  auto sink = sys.spawn(recording_sink, log);
  wire::job_request job;
  job.operation = "nodeshell";
  job.command = "x";
  for (uint32_t i = 0; i < 9; ++i) {
    job.targets.push_back({i, "n" + std::to_string(i), "", 0, "alice", {}, 0, {}, {}, 0, {}});
  }
  delegation_settings s;
  s.credits = 2;
  s.batch_nodes = 3;
  s.batch_bytes = 10;
  std::vector<uint32_t> all{0, 1, 2, 3, 4, 5, 6, 7, 8};
  self->send(sns["sn1"], sn_run_atom::value, make_share(job, all, "sn1", 99, 9, s), sink);
  sched.run();
  auto op = records["sn1"]->ops.at(0);
  for (size_t i = 0; i < 9; ++i) {
    op->finish(i, 0, i == 4 ? std::string(40, 'x') : std::string{});
    sched.run();
  }
  // two credits: the first results went out one at a time while credit lasted, the rest wait
  ASSERT_EQ(log->batches.size(), 2u);
  EXPECT_EQ(log->batches[0].results.size(), 1u);
  EXPECT_EQ(log->batches[1].results.size(), 1u);
  EXPECT_TRUE(log->ends.empty());
  self->send(sns["sn1"], sn_credit_atom::value, wire::credit{99, 0});
  sched.run();
  ASSERT_EQ(log->batches.size(), 3u);
  EXPECT_EQ(log->batches[2].seq, 2u);
  EXPECT_EQ(log->batches[2].results.size(), 2u) << "n4's 40 bytes do not join a 10-byte batch";
  self->send(sns["sn1"], sn_credit_atom::value, wire::credit{99, 1});
  sched.run();
  ASSERT_EQ(log->batches.size(), 4u);
  ASSERT_EQ(log->batches[3].results.size(), 1u) << "a larger result goes alone";
  EXPECT_EQ(log->batches[3].results[0].index, 4u);
  for (uint32_t seq = 2; seq < 6; ++seq) {
    self->send(sns["sn1"], sn_credit_atom::value, wire::credit{99, seq});
    sched.run();
  }
  ASSERT_EQ(log->ends.size(), 1u);
  EXPECT_EQ(log->ends[0].batches, log->batches.size());
  EXPECT_TRUE(log->ends[0].refused.empty());
  std::vector<int> seen(9, 0);
  for (size_t k = 0; k < log->batches.size(); ++k) {
    EXPECT_EQ(log->batches[k].seq, k);
    EXPECT_LE(log->batches[k].results.size(), 3u);
    for (const auto& r : log->batches[k].results) {
      ++seen.at(r.index);
    }
  }
  EXPECT_EQ(seen, std::vector<int>(9, 1));
  // the same share again is refused, never run twice
  self->send(sns["sn1"], sn_run_atom::value, make_share(job, all, "sn1", 99, 9, s), sink);
  sched.run();
  ASSERT_EQ(log->ends.size(), 2u);
  EXPECT_EQ(log->ends[1].refused, "share 99 was sent before; it is not run again");
  EXPECT_EQ(records["sn1"]->ops.size(), 1u);
  self->send_exit(sink, caf::exit_reason::user_shutdown);
}

TEST_F(delegation_fixture, a_share_for_another_service_node_or_that_cannot_be_planned_is_refused) {
  spawn_sn("sn1");
  auto log = std::make_shared<sink_log>();
  auto sink = sys.spawn(recording_sink, log);
  wire::job_request job;
  job.operation = "nodeshell";
  job.targets = {{0, "n0", "", 0, "alice", {}, 0, {}, {}, 0, {}}};
  self->send(sns["sn1"], sn_run_atom::value, make_share(job, {0}, "sn2", 5, 1, {}), sink);
  job.operation = "lsdef";
  self->send(sns["sn1"], sn_run_atom::value, make_share(job, {0}, "sn1", 6, 1, {}), sink);
  sched.run();
  ASSERT_EQ(log->ends.size(), 2u);
  EXPECT_EQ(log->ends[0].refused, "the share is for service node 'sn2', this is 'sn1'");
  EXPECT_EQ(log->ends[1].refused, "'lsdef' is not an operation that runs on nodes");
  EXPECT_TRUE(log->batches.empty());
  EXPECT_TRUE(records["sn1"]->ops.empty()) << "nothing ran";
  self->send_exit(sink, caf::exit_reason::user_shutdown);
}

TEST_F(delegation_fixture, the_head_credits_each_batch_so_a_long_share_streams_to_its_end) {
  spawn_sn("sn1");
  settings.credits = 1;
  settings.batch_nodes = 2;
  std::vector<std::string> names;
  std::vector<std::string> values;
  for (int i = 0; i < 50; ++i) {
    names.push_back("n" + std::to_string(i));
    values.push_back("sn1");
  }
  auto a = send(shell_call("x"), delegated(names, values));
  auto op = records["sn1"]->ops.at(0);
  for (size_t i = 0; i < 50; ++i) {
    op->finish(49 - i, 0, std::to_string(49 - i));
  }
  sched.run();
  ASSERT_TRUE(a->got);
  ASSERT_EQ(a->result.nodes.size(), 50u);
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_EQ(a->result.nodes[i].out, std::to_string(i));
  }
}

TEST_F(delegation_fixture, a_service_node_lost_mid_run_errors_its_unreported_nodes_only) {
  spawn_sn("sn1");
  spawn_sn("sn2");
  auto a = send(shell_call("x"),
                delegated({"n0", "n1", "n2", "n3", "n4"}, {"", "sn1", "sn2", "sn2", "sn1"}));
  auto sn2 = records["sn2"]->ops.at(0);
  sn2->finish(0, 0, "two"); // n2 reported before the loss
  sched.run();
  self->send_exit(sns["sn2"], caf::exit_reason::remote_link_unreachable);
  sched.run();
  EXPECT_FALSE(a->got) << "the head's and sn1's nodes still run";
  head_op->finish(0, 0, "zero");
  records["sn1"]->ops.at(0)->finish(0, 0, "one");
  records["sn1"]->ops.at(0)->finish(1, 0, "four");
  sched.run();
  ASSERT_TRUE(a->got);
  const auto& n = a->result.nodes;
  ASSERT_EQ(n.size(), 5u);
  EXPECT_EQ(n[2].out, "two") << "reported before the loss: kept";
  EXPECT_EQ(n[3].error, "servicenode");
  EXPECT_EQ(n[3].rc, -1);
  EXPECT_EQ(n[3].message,
            "service node sn2 became unreachable after the command was sent; it may have run");
  EXPECT_EQ(n[0].out, "zero");
  EXPECT_EQ(n[1].out, "one");
  EXPECT_EQ(n[4].out, "four");
  // nothing ran twice: one share per service node, the head's share once
  EXPECT_EQ(records["sn1"]->ops.size(), 1u);
  EXPECT_EQ(records["sn2"]->ops.size(), 1u);
  EXPECT_FALSE(head_op->cancelled());
}

TEST_F(delegation_fixture, a_silent_service_node_is_given_up_at_its_down_message) {
  // a service node that takes the share and never answers, until the link calls it lost
  auto silent = sys.spawn([](caf::event_based_actor*) -> caf::behavior {
    return {[](sn_run_atom, const wire::share_request&, const sn_sink_actor&) {},
            [](sn_credit_atom, const wire::credit&) {},
            [](sn_cancel_atom, const wire::cancel&) {
            }};
  });
  sns["sn9"] = caf::actor_cast<sn_executor_actor>(silent);
  auto a = send(shell_call("x"), delegated({"n0", "n1"}, {"sn9", "sn9"}));
  EXPECT_FALSE(a->got);
  self->send_exit(silent, caf::exit_reason::remote_link_unreachable);
  sched.run();
  ASSERT_TRUE(a->got);
  for (const auto& n : a->result.nodes) {
    EXPECT_EQ(n.error, "servicenode") << n.name;
  }
}

TEST_F(delegation_fixture, a_cancel_reaches_the_service_nodes_work_and_every_node_ends_once) {
  spawn_sn("sn1");
  auto c = shell_call("x");
  c->cancel = std::make_shared<call_cancel>();
  auto sink = std::make_shared<collecting_sink>();
  c->sink = sink;
  auto a = send(c, delegated({"n0", "n1", "n2"}, {"", "sn1", "sn1"}));
  records["sn1"]->ops.at(0)->finish(0, 0, "one");
  sched.run();
  c->cancel->cancel("The client closed the connection; ended.");
  sched.run();
  EXPECT_TRUE(head_op->cancelled());
  EXPECT_TRUE(records["sn1"]->ops.at(0)->cancelled()) << "the cancel crossed to the service node";
  ASSERT_TRUE(a->got);
  const auto& n = a->result.nodes;
  EXPECT_EQ(n[0].error, "cancelled");
  EXPECT_EQ(n[1].rc, 0);
  EXPECT_EQ(n[2].error, "cancelled");
  ASSERT_EQ(sink->got.size(), 3u) << "each node once";
  for (const auto& r : sink->got) {
    if (r.error == "cancelled") {
      EXPECT_EQ(r.message, "The client closed the connection; ended.") << r.name;
    }
  }
}

TEST_F(delegation_fixture, an_executor_that_stops_ends_the_delegation_and_the_service_nodes_work) {
  spawn_sn("sn1");
  auto a = send(shell_call("x"), delegated({"n0", "n1"}, {"", "sn1"}));
  self->send_exit(ex, caf::exit_reason::user_shutdown);
  sched.run();
  ASSERT_TRUE(a->got);
  EXPECT_EQ(a->result.error, errc::unavailable);
  EXPECT_TRUE(head_op->cancelled());
  EXPECT_TRUE(records["sn1"]->ops.at(0)->cancelled());
}

TEST_F(delegation_fixture, a_dropped_delegation_still_gives_every_node_exactly_one_result) {
  spawn_sn("sn1");
  spawn_sn("sn2");
  down = {"sn3"};
  auto t = std::make_shared<tally>(5);
  {
    auto op = delegated({"n0", "n1", "n2", "n3", "n4"}, {"", "sn1", "sn2", "sn3", "sn1"});
    op->start(
      [t](size_t i, base::node_result r) {
        ++t->results.at(i);
        t->last.at(i) = std::move(r);
      },
      [t] { ++t->done; });
    sched.run();
    records["sn1"]->ops.at(0)->finish(0, 0);
    sched.run();
  } // dropped, as the executor drops it at a stop
  sched.run();
  t->expect_each_once();
  EXPECT_EQ(t->last[1].rc, 0);
  EXPECT_EQ(t->last[3].error, "servicenode");
  EXPECT_EQ(t->last[0].error, "disconnected");
  EXPECT_EQ(t->last[2].error, "disconnected");
  EXPECT_EQ(t->last[4].message, "the service is stopping");
  EXPECT_TRUE(records["sn2"]->ops.at(0)->cancelled()) << "the service node's work ends too";
}

TEST_F(delegation_fixture, a_service_node_ends_the_shares_of_a_head_that_went_away) {
  spawn_sn("sn1");
  auto log = std::make_shared<sink_log>();
  auto sink = sys.spawn(recording_sink, log);
  wire::job_request job;
  job.operation = "nodeshell";
  job.targets = {{0, "n0", "", 0, "alice", {}, 0, {}, {}, 0, {}}};
  self->send(sns["sn1"], sn_run_atom::value, make_share(job, {0}, "sn1", 7, 1, {}), sink);
  sched.run();
  self->send_exit(sink, caf::exit_reason::remote_link_unreachable);
  sched.run();
  EXPECT_TRUE(records["sn1"]->ops.at(0)->cancelled());
}

TEST_F(delegation_fixture, the_links_seal_is_set_before_sending_and_checked_before_running) {
  auto check = [](const wire::share_request& r) {
    return r.sealed == "seal of " + r.service_node ? std::string{} : std::string{"bad seal"};
  };
  spawn_sn("sn1", check);
  spawn_sn("sn2", check);
  auto seal = [](wire::share_request& r) {
    r.sealed = r.service_node == "sn1" ? "seal of sn1" : "forged";
  };
  auto a = send(shell_call("x"), delegated({"n0", "n1"}, {"sn1", "sn2"}, 64, seal));
  EXPECT_TRUE(records["sn2"]->ops.empty()) << "refused before anything ran";
  records["sn1"]->ops.at(0)->finish(0, 0, "ran");
  sched.run();
  ASSERT_TRUE(a->got);
  EXPECT_EQ(a->result.nodes[0].out, "ran");
  EXPECT_EQ(a->result.nodes[1].error, "servicenode");
  EXPECT_EQ(a->result.nodes[1].message,
            "service node sn2 refused the request: bad seal; nothing was run");
}

TEST_F(delegation_fixture, a_call_whose_nodes_are_all_refused_ends_at_once) {
  down = {"sn1"};
  auto t = std::make_shared<tally>(2);
  auto op = delegated({"n0", "n1"}, {"sn1", "sn1"});
  op->start([t](size_t i, base::node_result) { ++t->results.at(i); }, [t] { ++t->done; });
  sched.run();
  t->expect_each_once();
}

} // namespace
