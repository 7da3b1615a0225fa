#pragma once

#include <caf/actor_system.hpp>

#include <chrono>
#include <functional>

#include "actors/messages.hpp"
#include "actors/policy_actor.hpp"
#include "actors/store_actor.hpp"

namespace cws::actors {

/// The actors a request goes through, as the HTTP layer sees them.
struct service {
  caf::actor_system* sys = nullptr;
  store_actor store;
  policy_actor policy;
  /// Longest time a call may take before it is answered as unavailable.
  std::chrono::milliseconds timeout{60000};
};

/// Authorizes `call` with the policy actor, then runs it on the store (or the fan-out
/// executor). Calls `done` exactly once, on an actor thread: the caller posts it to its own
/// executor. Never blocks the calling thread.
void submit(const service& svc, api_call_ptr call, std::function<void(api_result)> done);

} // namespace cws::actors
