#pragma once

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstddef>
#include <functional>
#include <string>

#include "actors/atoms.hpp"
#include "api/node_operation.hpp"
#include "api/result.hpp"
#include "api/wire.hpp"

namespace cws::actors {

/// Where a service node sends a share's results: the head's delegation of the call
/// (actors/delegation_actor.hpp). One sender per share, so its batches and its end arrive in
/// order (also over the link).
using sn_sink_actor = caf::typed_actor<
  // Results of share `batch.id`, batch `batch.seq` (0, 1, ...): the head credits each one
  // with sn_credit_atom once it has taken it.
  caf::reacts_to<sn_batch_atom, api::wire::result_batch>,
  // The share's last message: every node was reported (in `end.batches` batches), or the
  // share was refused whole (`end.refused`: nothing ran).
  caf::reacts_to<sn_end_atom, api::wire::share_end>>;

/// A service node's executor as the head sees it: local in tests, a handle over the link
/// (CAF remoting) in the daemon. The head monitors it: its down message is the service node's
/// loss.
using sn_executor_actor = caf::typed_actor<
  // Runs `share` on this service node's transports; results go to `sink` in batches of at
  // most share.batch_nodes results and share.batch_bytes bytes, at most share.credits of
  // them not yet credited; then sn_end_atom. A share that cannot run (another service
  // node's, a failed check, a repeated id, a failed bind) gets only sn_end_atom with the
  // reason. A share id is run at most once.
  caf::reacts_to<sn_run_atom, api::wire::share_request, sn_sink_actor>,
  // Batch `c.seq` of share `c.id` was taken: one more may go.
  caf::reacts_to<sn_credit_atom, api::wire::credit>,
  // Ends share `c.id`'s nodes still running or waiting (each reported `cancelled`).
  caf::reacts_to<sn_cancel_atom, api::wire::cancel>>;

/// How a service node runs shares.
struct service_node_config {
  /// This service node's name: a share for another is refused (empty: any).
  std::string name;
  /// Binds a share's job (targets resolved by the head: names, addresses, ports, the user)
  /// to the operation of its transport: the service node's engines in the daemon, a fake in
  /// tests. None: every share is refused.
  std::function<api::api_result(const api::wire::job_request& job, api::node_operation_ptr& out)>
    bind;
  /// The link's check of a share's seal (its `sealed` field, its id and expiry): why it is
  /// refused, or "" (none: every share passes).
  std::function<std::string(const api::wire::share_request& share)> verify;
  /// The bounds a share is checked against.
  api::wire::request_limits limits;
  /// Share ids remembered after their end, so a repeated one is refused rather than run again.
  size_t remember_ids = 65536;
};

/// Spawns a service node's executor: each share runs on the operation `bind` makes,
/// results stream back under the head's credits, a cancel ends its nodes, and a head that
/// goes away (its sink's down message) ends that head's shares.
sn_executor_actor spawn_service_node(caf::actor_system& sys, service_node_config cfg);

} // namespace cws::actors
