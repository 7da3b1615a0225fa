// Micro-benchmarks of authorization: policy evaluation, and a full policy actor round trip
// answered from the verified-password cache.

#include <benchmark/benchmark.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include <filesystem>
#include <future>
#include <unistd.h>

#include "actors/policy_actor.hpp"
#include "actors/store_actor.hpp"
#include "store/credentials.hpp"
#include "store/policy.hpp"

namespace {

using namespace cws;

void policy_evaluation(benchmark::State& state) {
  std::vector<store::policy_row> rows;
  for (int i = 0; i < 20; ++i) {
    rows.push_back(store::make_policy_row(
      std::to_string(i + 2),
      {{"name", "user" + std::to_string(i)}, {"commands", "lsdef,nodels"}, {"rule", "allow"}}));
  }
  rows.push_back(store::make_policy_row("30", {{"name", "alice"}, {"rule", "allow"}}));
  store::sort_policy(rows);
  store::policy_request q;
  q.user = "alice";
  q.command = "chdef";
  q.hosts = {"127.0.0.1", "localhost"};
  for (auto _ : state) {
    benchmark::DoNotOptimize(store::evaluate_policy(rows, q).allowed);
  }
}
BENCHMARK(policy_evaluation);

void password_cache_hit(benchmark::State& state) {
  auto dir
    = std::filesystem::temp_directory_path() / ("cws-bench-auth-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  {
    auto db = std::make_shared<store::database>(dir);
    db->write([](store::write_txn& t) {
      t.put(store::object_type::passwd, "root", {{"password", store::hash_password("pw")}});
      t.put(store::object_type::policy, "1", {{"name", "root"}, {"rule", "allow"}});
    });
    caf::actor_system_config cfg;
    caf::actor_system sys{cfg};
    auto st = actors::spawn_store(sys, db, {});
    auto pol = actors::spawn_policy(sys, st, {});
    auto call = std::make_shared<api::api_call>();
    call->creds = {"root", "pw", "", ""};
    call->client = "127.0.0.1";
    call->policy_command = "lsdef";
    api::api_call_ptr c = call;
    caf::scoped_actor self{sys};
    bool ok = false;
    for (auto _ : state) {
      std::promise<bool> allowed;
      self->send(pol, actors::authz_atom::value, c, false,
                 std::make_shared<actors::verdict_fn>(
                   [&](api::auth_result r) { allowed.set_value(r.allowed); }));
      ok = allowed.get_future().get();
    }
    if (!ok) {
      state.SkipWithError("authorization failed");
    }
    self->send_exit(pol, caf::exit_reason::user_shutdown);
    self->send_exit(st, caf::exit_reason::user_shutdown);
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(password_cache_hit)->UseRealTime();

} // namespace
