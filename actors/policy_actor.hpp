#pragma once

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>

#include "actors/messages.hpp"
#include "actors/store_actor.hpp"

namespace cws::actors {

/// Authentication and authorization. Reads passwords and policy from the store (rebuilt when
/// the database generation changes, so a change made with the CLI counts on the next request).
using policy_actor = caf::typed_actor<
  // Authenticates the call (X-Auth-Token, or user and password) and authorizes its command
  // with xCAT's policy semantics. Repeated failures of one client for one user are answered
  // later and later (backoff).
  caf::replies_to<authz_atom, api_call_ptr>::with<auth_result>,
  // Counters: failures, slow hash checks, cache hits.
  caf::replies_to<stats_atom>::with<auth_stats>,
  // Internal: answers a delayed (backed-off) failure.
  caf::reacts_to<fail_atom, uint64_t>>;

/// Checks passwords against crypt(3) hashes: slow on purpose, so it gets its own thread.
using hasher_actor
  = caf::typed_actor<caf::replies_to<verify_atom, std::string, std::string>::with<bool>>;

/// How the policy actor runs. Every limit is explicit.
struct policy_config {
  /// How long a verified password is remembered (the hash is not recomputed meanwhile).
  std::chrono::seconds cache_ttl{60};
  /// Failures of one client for one user answered at once; later ones are delayed.
  unsigned backoff_after = 3;
  /// First delay; doubles with each further failure, up to `backoff_max`.
  std::chrono::milliseconds backoff_base{250};
  std::chrono::milliseconds backoff_max{8000};
  /// Run the hasher on its own thread (off under the deterministic test coordinator).
  bool detached_hasher = true;
};

/// Spawns the policy actor (and its hasher) reading from `store`.
policy_actor spawn_policy(caf::actor_system& sys, store_actor store, policy_config cfg);

} // namespace cws::actors
