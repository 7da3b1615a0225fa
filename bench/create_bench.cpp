// One node create as the daemon pays for it past the HTTP layer, at two database sizes: the
// write (mkdef's definitions, one non-durable commit) and what the commit's change set then
// costs the console server (api::consoles_affected, the consoles of the nodes it names read
// again). Every node is in `compute`, whose row sets cons=ipmi, as a real cluster does: a
// per-write cost that grows with the nodes stored shows as the ratio of the two sizes
// (make bench prints it as a GOAL; docs/performance.md).

#include <benchmark/benchmark.h>

#include <filesystem>
#include <map>
#include <memory>
#include <unistd.h>

#include "api/console.hpp"
#include "store/database.hpp"
#include "store/definitions.hpp"

namespace {

using namespace cws;
using store::object_type;

/// A temporary database with `n` nodes in group compute (cons=ipmi), each with its own bmc.
struct cluster {
  std::filesystem::path dir;
  std::unique_ptr<store::database> db;
  size_t next = 0;

  explicit cluster(size_t n) {
    dir = std::filesystem::temp_directory_path()
          / ("cws-create-bench-" + std::to_string(getpid()) + "-" + std::to_string(n));
    std::filesystem::remove_all(dir);
    store::lmdb_options opts;
    opts.durable = false;
    db = std::make_unique<store::database>(dir, opts);
    db->write([&](store::write_txn& t) {
      t.put(object_type::group, "compute", {{"cons", "ipmi"}, {"mgt", "ipmi"}});
      char name[32];
      char bmc[32];
      for (size_t i = 1; i <= n; ++i) {
        std::snprintf(name, sizeof name, "node%06zu", i);
        std::snprintf(bmc, sizeof bmc, "10.1.%zu.%zu", i / 250, i % 250 + 1);
        t.put(object_type::node, name, {{"groups", "compute"}, {"bmc", bmc}});
      }
    });
  }

  ~cluster() {
    db.reset();
    std::filesystem::remove_all(dir);
  }
};

cluster& of_size(size_t n) {
  static std::map<size_t, std::unique_ptr<cluster>> all;
  auto& c = all[n];
  if (!c) {
    c = std::make_unique<cluster>(n);
  }
  return *c;
}

void node_create(benchmark::State& state) {
  auto& c = of_size(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    std::string name = "new" + std::to_string(c.next++);
    store::change_request req;
    req.names = {name};
    req.attrs = {{"groups", "compute"}, {"bmc", "10.9.0.1"}};
    c.db->write([&](store::write_txn& t) { store::make_objects(t, req); });
    store::change_set set;
    set.changes.push_back(
      {object_type::node, name, store::change_kind::created, {"bmc", "groups"}});
    auto scope = api::consoles_affected(set);
    auto specs = api::read_consoles(*c.db, 623, scope.nodes);
    benchmark::DoNotOptimize(specs.data());
  }
}
BENCHMARK(node_create)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMicrosecond);

} // namespace
