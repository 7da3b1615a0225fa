#pragma once

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <memory>

#include "actors/atoms.hpp"
#include "actors/store_actor.hpp"
#include "api/service_metrics.hpp"

namespace cws::actors {

/// The fan-out executor: has the store plan a call into a per-node operation
/// (api/node_operation.hpp: SSH, IPMI, libvirt, the prober; service-node delegation next) and
/// drives it: per-node results in noderange order, each also streamed to the call's sink as
/// it completes. Fanout limits and per-node deadlines are the plan's; the executor ends an
/// operation when its caller cancels the call (api::call_cancel) and every operation still
/// running when it stops. It speaks the store's protocol, so policy's verdict sends a call
/// to either alike.
using executor_actor = caf::typed_actor<
  // Runs an authorized fan-out call and calls `done` with the result when every node is
  // done (or the call could not start), on the executor's thread: no reply message.
  caf::reacts_to<run_atom, api::api_call_ptr, api::authorization, done_ptr>>;

/// How the executor runs.
struct executor_config {
  /// Binds a call to the operation of its transport on a store reader (the daemon: api::plan
  /// over its drivers; tests: a fake). None: fan-out calls are refused as unavailable.
  bind_ptr bind;
  /// Request timeout to the store (planning).
  std::chrono::seconds store_timeout{60};
  /// Nodes of running fan-out calls at most, in total and of one user: a call that would
  /// pass either is refused (503) before it starts (max_nodes_in_flight,
  /// max_nodes_in_flight_per_user).
  size_t max_nodes = 200000;
  size_t max_nodes_per_user = 50000;
  /// Where nodes in flight and finished nodes by result are counted.
  std::shared_ptr<api::service_metrics> metrics = std::make_shared<api::service_metrics>();
};

/// Spawns the executor over the store.
executor_actor spawn_executor(caf::actor_system& sys, store_actor store, executor_config cfg);

} // namespace cws::actors
