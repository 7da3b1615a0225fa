// Micro-benchmarks of the store: noderange expansion, selection, store get/put/scan.

#include <benchmark/benchmark.h>

#include <filesystem>
#include <unistd.h>

#include "store/cluster_view.hpp"
#include "store/database.hpp"
#include "store/definitions.hpp"
#include "store/noderange.hpp"

namespace {

using namespace cws::store;

/// A temporary database with `n` nodes node000001..; half kvm, half ipmi.
struct fixture {
  std::filesystem::path dir;
  std::unique_ptr<database> db;

  explicit fixture(size_t n) {
    dir = std::filesystem::temp_directory_path() / ("cws-bench-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    lmdb_options opts;
    opts.durable = false;
    db = std::make_unique<database>(dir, opts);
    db->write([&](write_txn& t) {
      char name[32];
      for (size_t i = 1; i <= n; ++i) {
        std::snprintf(name, sizeof name, "node%06zu", i);
        t.put(object_type::node, name,
              {{"groups", "all,compute"}, {"mgt", i % 2 ? "kvm" : "ipmi"}, {"os", "rhels9"}});
      }
    });
  }

  ~fixture() {
    db.reset();
    std::filesystem::remove_all(dir);
  }
};

fixture& store100k() {
  static fixture f{100000};
  return f;
}

void expand(benchmark::State& state, const char* range) {
  auto& f = store100k();
  for (auto _ : state) {
    auto txn = f.db->read();
    cluster_view view{txn};
    auto r = expand_noderange(range, view);
    benchmark::DoNotOptimize(r.nodes.data());
    state.counters["nodes"] = static_cast<double>(r.nodes.size());
  }
}

BENCHMARK_CAPTURE(expand, range_100k, "node[000001-100000]")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(expand, multi_bracket, "node[0000-0099][01-10]")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(expand, exclusion, "all,-node[000001-050000]")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(expand, select_mgt_kvm, "mgt==kvm")->Unit(benchmark::kMillisecond);

void expand_without_store(benchmark::State& state) {
  empty_universe universe;
  noderange_options opts;
  opts.verify = false;
  for (auto _ : state) {
    auto r = expand_noderange("node[000001-100000]", universe, opts);
    benchmark::DoNotOptimize(r.nodes.data());
  }
}
BENCHMARK(expand_without_store)->Unit(benchmark::kMillisecond);

void fold_100k(benchmark::State& state) {
  std::vector<std::string> names;
  char name[32];
  for (int i = 1; i <= 100000; ++i) {
    std::snprintf(name, sizeof name, "node%06d", i);
    names.emplace_back(name);
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(fold_nodes(names).size());
  }
}
BENCHMARK(fold_100k)->Unit(benchmark::kMillisecond);

void store_get(benchmark::State& state) {
  auto& f = store100k();
  auto txn = f.db->read();
  size_t i = 0;
  char name[32];
  for (auto _ : state) {
    std::snprintf(name, sizeof name, "node%06zu", (i++ % 100000) + 1);
    benchmark::DoNotOptimize(txn.get(object_type::node, name));
  }
}
BENCHMARK(store_get);

void store_put(benchmark::State& state) {
  auto& f = store100k();
  size_t i = 0;
  char name[32];
  for (auto _ : state) {
    std::snprintf(name, sizeof name, "node%06zu", (i++ % 100000) + 1);
    f.db->write([&](write_txn& t) {
      t.put(object_type::node, name, {{"groups", "all,compute"}, {"mgt", "kvm"}, {"os", "rhels9"}});
    });
  }
}
BENCHMARK(store_put); // one (non-durable) commit each: the commit path without the fsync

void store_scan(benchmark::State& state) {
  auto& f = store100k();
  for (auto _ : state) {
    auto txn = f.db->read();
    size_t n = 0;
    txn.scan(object_type::node, [&](std::string_view, record_view) { ++n; });
    benchmark::DoNotOptimize(n);
  }
}
BENCHMARK(store_scan)->Unit(benchmark::kMillisecond);

/// lsdef of all 100,000 nodes with the `compute` group row holding plain values, or the same
/// attributes as xCAT expressions evaluated per node (the goal: less than 2x).
void list_100k(benchmark::State& state, bool expressions) {
  auto& f = store100k();
  f.db->write([&](write_txn& t) {
    if (expressions) {
      t.put(object_type::group, "compute",
            {{"ip", "|node(\\d+)|10.0.($1/256).($1%256)|"}, {"bmc", "/\\z/-bmc/"}});
    } else {
      t.put(object_type::group, "compute", {{"ip", "10.0.0.1"}, {"bmc", "node-bmc"}});
    }
  });
  auto txn = f.db->read();
  auto names = txn.names(object_type::node);
  for (auto _ : state) {
    cluster_view view{txn};
    auto listed = list_objects(view, object_type::node, names);
    benchmark::DoNotOptimize(listed.objects.data());
  }
  state.counters["nodes"] = static_cast<double>(names.size());
}
BENCHMARK_CAPTURE(list_100k, plain, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(list_100k, regex, true)->Unit(benchmark::kMillisecond);

} // namespace
