// Micro-benchmarks of the HTTP layer: routing a request, rendering JSON for 1 and 1000 nodes,
// and what observing a request adds (metrics and the Date header).

#include <benchmark/benchmark.h>

#include "http/date.hpp"
#include "http/monitor.hpp"
#include "http/render.hpp"
#include "http/router.hpp"

namespace {

using namespace cws;

api::api_result objects(size_t n) {
  api::api_result r;
  for (size_t i = 0; i < n; ++i) {
    r.objects.emplace_back("node" + std::to_string(100000 + i),
                           store::attr_map{{"arch", "x86_64"},
                                           {"groups", "compute,all"},
                                           {"mgt", "kvm"},
                                           {"os", "rhels9.4"},
                                           {"postbootscripts", "otherpkgs"},
                                           {"postscripts", "syslog,remoteshell,syncfiles"},
                                           {"vmmemory", "8192"}});
  }
  return r;
}

void render_nodes(benchmark::State& state) {
  http::routed req;
  req.out = http::output::objects;
  auto res = objects(static_cast<size_t>(state.range(0)));
  size_t bytes = 0;
  for (auto _ : state) {
    auto out = http::render(req, res);
    bytes = out.body.size();
    benchmark::DoNotOptimize(out.body.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes * state.iterations()));
}
BENCHMARK(render_nodes)->Arg(1)->Arg(1000);

void route_get_node(benchmark::State& state) {
  http::http_input in;
  in.method = "GET";
  in.target = "/clusterws/nodes/node000001?userName=root&userPW=secret&pretty=1";
  in.client = "127.0.0.1";
  for (auto _ : state) {
    auto r = http::route(in, {});
    benchmark::DoNotOptimize(r.call->target.data());
  }
}
BENCHMARK(route_get_node);

void route_put_body(benchmark::State& state) {
  http::http_input in;
  in.method = "PUT";
  in.target = "/clusterws/nodes/node000001?userName=root&userPW=secret";
  in.body = R"({"groups":"compute,all","mgt":"kvm","vmmemory":"8192","os":"rhels9.4"})";
  in.content_type = "application/json";
  for (auto _ : state) {
    auto r = http::route(in, {});
    benchmark::DoNotOptimize(r.call->changes.data());
  }
}
BENCHMARK(route_put_body);

} // namespace

namespace {

/// Per request: counting it (route, method, status, latency), calls in flight, the clock reads
/// and the Date header. Two threads, as the daemon's two io threads share the counters.
void observe_request(benchmark::State& state) {
  static http::monitor mon;
  for (auto _ : state) {
    auto start = std::chrono::steady_clock::now();
    mon.in_flight.add(1);
    mon.in_flight.add(-1);
    auto date = http::http_date();
    benchmark::DoNotOptimize(date.data());
    mon.answered(1, "GET", 200, std::chrono::steady_clock::now() - start);
  }
}
BENCHMARK(observe_request)->Threads(1)->Threads(2);

} // namespace
