// The wire types between two actor systems in one process over CAF's network layer (BASP on
// 127.0.0.1): a job request goes out, a result batch comes back, every field intact.

#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <chrono>
#include <future>

#include "actors/delegation_actor.hpp"
#include "actors/service_node_actor.hpp"
#include "actors/type_ids.hpp"

namespace {

using namespace cws;
namespace wire = cws::api::wire;

struct remote_config : caf::actor_system_config {
  remote_config() {
    set("logger.file-verbosity", caf::atom("quiet"));
    set("scheduler.max-threads", 2);
    actors::add_wire_types(*this);
    load<caf::io::middleman>();
  }
};

/// A stand-in service node: each target of a request gets a result naming it.
caf::behavior fake_service_node(caf::event_based_actor*) {
  return {[](const wire::job_request& r) {
    wire::result_batch b;
    b.id = r.id;
    for (const auto& t : r.targets) {
      wire::node_result n;
      n.index = t.index;
      n.name = t.name;
      n.rc = 0;
      n.out = r.command + " on " + t.address + ":" + std::to_string(t.port) + " as " + t.user;
      b.results.push_back(std::move(n));
    }
    return b;
  }};
}

TEST(wire_remote, a_request_and_its_results_cross_between_two_actor_systems) {
  remote_config head_cfg;
  remote_config sn_cfg;
  caf::actor_system sn{sn_cfg};
  caf::actor_system head{head_cfg};
  auto node = sn.spawn(fake_service_node);
  auto port = sn.middleman().publish(node, 0, "127.0.0.1");
  ASSERT_TRUE(port) << sn.render(port.error());
  auto remote = head.middleman().remote_actor("127.0.0.1", *port);
  ASSERT_TRUE(remote) << head.render(remote.error());
  wire::job_request req;
  req.id = 5;
  req.operation = "nodeshell";
  req.command = "uptime";
  req.targets = {{0, "n1", "10.0.0.1", 22, "alice"}, {1, "n2", "10.0.0.2", 2222, "alice"}};
  caf::scoped_actor self{head};
  bool answered = false;
  self->request(*remote, std::chrono::seconds(10), req)
    .receive(
      [&](const wire::result_batch& b) {
        answered = true;
        EXPECT_EQ(b.id, 5u);
        ASSERT_EQ(b.results.size(), 2u);
        EXPECT_EQ(b.results[1].name, "n2");
        EXPECT_EQ(b.results[1].out, "uptime on 10.0.0.2:2222 as alice");
      },
      [&](const caf::error& e) { ADD_FAILURE() << head.render(e); });
  EXPECT_TRUE(answered);
  caf::anon_send_exit(node, caf::exit_reason::user_shutdown);
}

/// A transport whose nodes answer at once ("<name> via <address>"), or never (`hang`: only
/// a cancel ends them).
class stub_operation : public api::node_operation {
 public:
  stub_operation(std::vector<api::wire::target> targets, bool hang)
      : targets_(std::move(targets)), hang_(hang) {
    for (const auto& t : targets_) {
      names_.push_back(t.name);
    }
  }
  const std::vector<std::string>& nodes() const override {
    return names_;
  }
  void start(result_fn on_result, std::function<void()> on_done) override {
    std::lock_guard<std::mutex> guard{mu_};
    on_result_ = std::move(on_result);
    on_done_ = std::move(on_done);
    if (!hang_) {
      end(false);
    }
  }
  void cancel() override {
    std::lock_guard<std::mutex> guard{mu_};
    if (on_result_) {
      end(true);
    }
  }

 private:
  void end(bool cancelled) {
    for (size_t i = 0; i < targets_.size(); ++i) {
      base::node_result r;
      r.name = targets_[i].name;
      r.rc = cancelled ? -1 : 0;
      r.error = cancelled ? "cancelled" : "";
      r.out = targets_[i].name + " via " + targets_[i].address;
      on_result_(i, std::move(r));
    }
    on_done_();
    on_result_ = nullptr;
  }
  std::vector<api::wire::target> targets_;
  std::vector<std::string> names_;
  bool hang_;
  std::mutex mu_;
  result_fn on_result_;
  std::function<void()> on_done_;
};

/// Runs `op`, waiting (at most 20 s) for its end.
std::vector<base::node_result> run_to_end(api::node_operation_ptr op, size_t n,
                                          std::function<void()> meanwhile = {}) {
  auto results = std::make_shared<std::vector<base::node_result>>(n);
  auto counts = std::make_shared<std::vector<int>>(n, 0);
  auto done = std::make_shared<std::promise<void>>();
  op->start(
    [results, counts](size_t i, base::node_result r) {
      ++(*counts)[i];
      (*results)[i] = std::move(r);
    },
    [done] { done->set_value(); });
  if (meanwhile) {
    meanwhile();
  }
  EXPECT_EQ(done->get_future().wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(*counts, std::vector<int>(n, 1)) << "each node once";
  return *results;
}

TEST(wire_remote, a_delegated_call_runs_across_actor_systems_and_a_lost_service_node_is_seen) {
  remote_config head_cfg;
  remote_config sn_cfg;
  caf::actor_system sn{sn_cfg};
  caf::actor_system head{head_cfg};
  auto hang = std::make_shared<std::atomic<bool>>(false);
  actors::service_node_config c;
  c.name = "sn1";
  c.bind = [hang](const wire::job_request& job, api::node_operation_ptr& out) {
    out = std::make_shared<stub_operation>(job.targets, hang->load());
    return api::api_result{};
  };
  auto node = actors::spawn_service_node(sn, c);
  auto port = sn.middleman().publish(node, 0, "127.0.0.1");
  ASSERT_TRUE(port) << sn.render(port.error());
  auto remote = head.middleman().remote_actor<actors::sn_executor_actor>("127.0.0.1", *port);
  ASSERT_TRUE(remote) << head.render(remote.error());
  std::unordered_map<std::string, actors::sn_executor_actor> sns{{"sn1", *remote}};
  api::service_nodes known;
  known.known["sn1"] = true;
  std::vector<std::string> names;
  std::vector<std::string> values;
  std::vector<wire::target> targets;
  for (uint32_t i = 0; i < 300; ++i) {
    names.push_back("n" + std::to_string(i));
    values.push_back(i % 3 == 0 ? "" : "sn1");
    targets.push_back(
      {i, names.back(), "10.3.0." + std::to_string(i % 250), 22, "alice", {}, 0, {}, {}, 0, {}});
  }
  api::api_call call;
  call.op = api::operation::nodeshell;
  call.command = "uptime";
  api::delegation_settings s;
  s.credits = 2;
  s.batch_nodes = 16;
  auto make_op = [&] {
    auto plan = api::plan_delegation(names, values, known);
    size_t head_fanout = 0;
    auto run = actors::make_delegated_run(names, wire::make_request(1, call, targets), plan, sns, s,
                                          64, head_fanout);
    std::vector<wire::target> mine;
    for (auto i : plan.head) {
      mine.push_back(targets[i]);
    }
    run.head = std::make_shared<stub_operation>(mine, false);
    return actors::delegate(head, std::move(run));
  };
  auto r = run_to_end(make_op(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(r[i].rc, 0) << i << " " << r[i].message;
    EXPECT_EQ(r[i].out, names[i] + " via " + targets[i].address);
  }
  // the service node's work hangs; the service node goes away: its nodes error, the head's end
  hang->store(true);
  r = run_to_end(make_op(), names.size(),
                 [&] { caf::anon_send_exit(node, caf::exit_reason::kill); });
  for (size_t i = 0; i < names.size(); ++i) {
    if (i % 3 == 0) {
      EXPECT_EQ(r[i].rc, 0) << i;
    } else {
      EXPECT_EQ(r[i].error, "servicenode") << i;
      EXPECT_EQ(r[i].message,
                "service node sn1 became unreachable after the command was sent; it may have run");
    }
  }
}

} // namespace
