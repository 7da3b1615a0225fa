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

/// Authentication and authorization. Reads passwords and policy from the store (rebuilt when
/// the database generation changes, so a change made with the CLI counts on the next request).
using policy_actor = caf::typed_actor<
  // Authenticates the call (X-Auth-Token, or user and password) and authorizes its command
  // with xCAT's policy semantics. Repeated failures of one client for one user are answered
  // later and later (backoff); past a threshold per client, per user and per both, guesses
  // are refused without hashing. The request's noderange is expanded only when a policy row
  // with a noderange could decide, and at most once per request; a "yes" carries those nodes
  // on to the operation. `true` reads passwords and policy again first (after a stale "yes").
  // The decision goes to the verdict function, on policy's thread: no reply message (it would
  // be one more message and actor activation on every request).
  caf::reacts_to<authz_atom, api::api_call_ptr, bool, verdict_ptr>,
  // Counters: failures, slow hash checks, cache hits.
  caf::replies_to<stats_atom>::with<api::auth_stats>>;

/// Checks passwords against crypt(3) hashes: slow on purpose, so it gets its own thread.
using hasher_actor
  = caf::typed_actor<caf::replies_to<verify_atom, std::string, std::string>::with<bool>>;

/// How the policy actor runs. Every limit is explicit.
struct policy_config {
  /// How long a verified password is remembered (the hash is not recomputed meanwhile).
  std::chrono::seconds cache_ttl{60};
  /// Failures of one client for one user answered at once; later ones are delayed, and
  /// from then on a guess is checked only one at a time and only once the last failure's
  /// delay has passed: others are refused without computing the hash.
  unsigned backoff_after = 3;
  /// The same across every client for one user, and across every user for one client
  /// (failures and checks in progress both count).
  unsigned user_backoff_after = 10;
  unsigned client_backoff_after = 10;
  /// First delay; doubles with each further failure, up to `backoff_max`.
  std::chrono::milliseconds backoff_base{250};
  std::chrono::milliseconds backoff_max{8000};
  /// Run the hasher on its own thread (off under the deterministic test coordinator).
  bool detached_hasher = true;
  /// Where failures, hash checks, cache hits and throttled guesses are counted.
  std::shared_ptr<api::service_metrics> metrics = std::make_shared<api::service_metrics>();
};

/// Spawns the policy actor (and its hasher) reading from `store`.
policy_actor spawn_policy(caf::actor_system& sys, store_actor store, policy_config cfg);

} // namespace cws::actors
