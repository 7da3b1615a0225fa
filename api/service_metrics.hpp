#pragma once

#include "api/auth.hpp"
#include "base/metric.hpp"

namespace cws::api {

/// What the actors count, for the metrics page (http/metrics_page) and for tests. One
/// instance is shared by the policy actor, the store and the executor; every update is one
/// relaxed atomic add.
struct service_metrics {
  // -- authentication (policy actor) ---------------------------------------------
  /// Refused credentials, throttled guesses included.
  base::counter auth_failures;
  /// Slow password hash checks run.
  base::counter hash_checks;
  /// Passwords accepted from the cache (no hash).
  base::counter auth_cache_hits;
  /// Guesses refused without a hash (too many failures of the user or the client).
  base::counter auth_throttled;
  /// Noderanges expanded for policy rows with a noderange.
  base::counter policy_expansions;

  /// The authentication counters as the policy actor answers them (stats_atom).
  auth_stats auth() const {
    return {auth_failures.value(), hash_checks.value(), auth_cache_hits.value(),
            auth_throttled.value(), policy_expansions.value()};
  }

  // -- store (group-committing writer) -------------------------------------------
  /// Transactions committed (one per batch), and those that failed (nothing written).
  base::counter commits;
  base::counter commit_failures;
  /// Writes per committed batch.
  base::histogram batch_writes{{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}, 1};
  /// Time of one batch's transaction, from its first change to the end of its commit (the
  /// fsync dominates it), observed in microseconds, exposed in seconds.
  base::histogram commit_seconds{
    {100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 1000000, 5000000}, 1e-6};

  // -- executor (fan-out) --------------------------------------------------------
  /// Nodes of running fan-out calls not finished yet.
  base::gauge nodes_in_flight;
  /// Finished nodes: exit status 0, another exit status, no status (a transport error:
  /// refused, timeout, authentication, cancelled).
  base::counter nodes_ok;
  base::counter nodes_nonzero;
  base::counter nodes_error;
};

} // namespace cws::api
