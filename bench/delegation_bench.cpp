// Service-node delegation on the head (docs/service-nodes.md): planning which nodes go where
// for 10,000 nodes, and the whole delegation path (plan, requests, batches back under
// credits, merge by index) through four service-node actors whose nodes answer at once.
// The budget is 10 us of head CPU per delegated node.

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

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

} // namespace
