#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "actors/executor_actor.hpp"
#include "actors/messages.hpp"
#include "actors/policy_actor.hpp"
#include "actors/store_actor.hpp"

namespace cws::actors {

/// The actors a request goes through, as the HTTP layer sees them.
class service {
 public:
  /// Spawns `dispatchers` long-lived actors that carry calls through policy and store (no
  /// actor is spawned per request). `executor` may be null: node deletes then go to the
  /// store and nodeshell is refused.
  /// Calls carry no actor-side timeouts (a timer per hop costs the clock thread on every
  /// request): the caller bounds the whole call (the HTTP session's call_timeout).
  service(caf::actor_system& sys, store_actor store, policy_actor policy, executor_actor executor,
          size_t dispatchers = 2);

  /// Authorizes `call` with the policy actor, then runs it on the store, or on the fan-out
  /// executor for nodeshell and node deletes. Calls `done` exactly once, on an actor thread:
  /// the caller posts it to its own executor. Never blocks the calling thread.
  void submit(api_call_ptr call, done_fn done) const;

  /// Stops the dispatchers.
  void shutdown() const;

 private:
  std::vector<caf::actor> dispatchers_;
  mutable std::atomic<size_t> next_{0};
};

} // namespace cws::actors
