// Service-node delegation on the head (docs/service-nodes.md): planning which nodes go where
// for 10,000 nodes, and the whole delegation path (plan, requests, batches back under
// credits, merge by index) through four service-node actors whose nodes answer at once.
// The budget is 10 us of head CPU per delegated node.

#include <benchmark/benchmark.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/send.hpp>

#include <ctime>
#include <future>
#include <string>
#include <vector>

#include "actors/delegation_actor.hpp"
#include "actors/service_node_actor.hpp"
#include "api/delegation.hpp"

namespace {

using namespace cws;

/// 10,000 nodes over four service nodes (one down, its nodes backed by another), a few on
/// the head, as groups give them.
void plan_10000_nodes(benchmark::State& state) {
  std::vector<std::string> names;
  std::vector<std::string> values;
  const char* pool[] = {"sn1,sn2", "sn2,sn1", "sn3,sn4", "sn4,sn3", ""};
  for (int i = 0; i < 10000; ++i) {
    names.push_back("node" + std::to_string(i));
    values.push_back(pool[(i / 100) % 5]);
  }
  api::service_nodes sns;
  sns.known = {{"sn1", true}, {"sn2", true}, {"sn3", false}, {"sn4", true}};
  sns.head = {"mgmt"};
  for (auto _ : state) {
    auto p = api::plan_delegation(names, values, sns);
    benchmark::DoNotOptimize(p.shares.data());
  }
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(plan_10000_nodes)->Unit(benchmark::kMicrosecond);

/// A service node's transport that answers every node at once (200 bytes of output), to
/// isolate the head's side.
class instant_operation : public api::node_operation {
 public:
  explicit instant_operation(std::vector<std::string> nodes) : nodes_(std::move(nodes)) {
  }
  const std::vector<std::string>& nodes() const override {
    return nodes_;
  }
  void start(result_fn on_result, std::function<void()> on_done) override {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      base::node_result r;
      r.name = nodes_[i];
      r.rc = 0;
      r.out = std::string(200, 'x');
      on_result(i, std::move(r));
    }
    on_done();
  }
  void cancel() override {
  }

 private:
  std::vector<std::string> nodes_;
};

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

/// 10,000 nodes through four service nodes (local actors behind the link's typed interface):
/// plan, shares, batches under credits, merge by index. `cpu_us_per_node` is the whole
/// process's CPU (head and service nodes together: an upper bound of the head's) per node.
void delegate_10000_nodes_through_4_service_nodes(benchmark::State& state) {
  caf::actor_system_config cfg;
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  std::unordered_map<std::string, actors::sn_executor_actor> sns;
  api::service_nodes known;
  for (const char* name : {"sn1", "sn2", "sn3", "sn4"}) {
    actors::service_node_config c;
    c.name = name;
    c.bind = [](const api::wire::job_request& job, api::node_operation_ptr& out) {
      std::vector<std::string> names;
      for (const auto& t : job.targets) {
        names.push_back(t.name);
      }
      out = std::make_shared<instant_operation>(std::move(names));
      return api::api_result{};
    };
    sns[name] = actors::spawn_service_node(sys, c);
    known.known[name] = true;
  }
  std::vector<std::string> names;
  std::vector<std::string> values;
  std::vector<api::wire::target> targets;
  for (uint32_t i = 0; i < 10000; ++i) {
    names.push_back("node" + std::to_string(i));
    values.push_back("sn" + std::to_string(1 + (i / 250) % 4));
    targets.push_back({i, names.back(), "10.2.0.1", 22, "alice", {}, 0, {}, {}, 0, {}});
  }
  api::api_call call;
  call.op = api::operation::nodeshell;
  call.command = "uptime";
  api::delegation_settings settings;
  double cpu = 0;
  for (auto _ : state) {
    auto before = process_cpu_seconds();
    auto plan = api::plan_delegation(names, values, known);
    auto job = api::wire::make_request(1, call, targets);
    size_t head_fanout = 0;
    auto run = actors::make_delegated_run(names, job, plan, sns, settings, 64, head_fanout);
    auto op = actors::delegate(sys, std::move(run));
    auto results = std::make_shared<std::vector<base::node_result>>(names.size());
    std::promise<void> done;
    op->start([results](size_t i, base::node_result r) { (*results)[i] = std::move(r); },
              [&done] { done.set_value(); });
    done.get_future().wait();
    op.reset();
    cpu += process_cpu_seconds() - before;
    benchmark::DoNotOptimize(results->data());
  }
  state.counters["cpu_us_per_node"]
    = cpu * 1e6 / (10000.0 * static_cast<double>(state.iterations()));
  state.SetItemsProcessed(state.iterations() * 10000);
  for (auto& [name, h] : sns) {
    caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
  }
}
BENCHMARK(delegate_10000_nodes_through_4_service_nodes)
  ->Unit(benchmark::kMillisecond)
  ->UseRealTime();

} // namespace
