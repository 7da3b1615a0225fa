#pragma once

#include <caf/actor_system.hpp>

#include <chrono>
#include <functional>

#include "actors/executor_actor.hpp"
#include "actors/messages.hpp"
#include "actors/policy_actor.hpp"
#include "actors/store_actor.hpp"

namespace cws::actors {

/// The actors a request goes through, as the HTTP layer sees them.
struct service {
  caf::actor_system* sys = nullptr;
  store_actor store;
  policy_actor policy;
  /// nodeshell and node deletes (null: node deletes go to the store, nodeshell is refused).
  executor_actor executor;
  /// Longest time a call may take before it is answered as unavailable.
  std::chrono::milliseconds timeout{60000};
};

/// Authorizes `call` with the policy actor, then runs it on the store, or on the fan-out
/// executor for nodeshell and node deletes. Calls `done` exactly once, on an actor thread: the
/// caller posts it to its own executor. Never blocks the calling thread.
void submit(const service& svc, api_call_ptr call, std::function<void(api_result)> done);

} // namespace cws::actors
