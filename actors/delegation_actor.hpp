#pragma once

#include <caf/actor_system.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/atoms.hpp"
#include "actors/service_node_actor.hpp"
#include "actors/sn_registry.hpp"
#include "api/delegation.hpp"
#include "api/node_operation.hpp"
#include "api/planner.hpp"
#include "api/wire.hpp"

namespace cws::actors {

/// One service node's part of a delegated call.
struct delegated_share {
  std::string service_node;
  /// The service node's executor (the head monitors it: its down message is the loss).
  sn_executor_actor executor;
  /// The call's index of each of the share's nodes: share index i is call index indexes[i].
  std::vector<uint32_t> indexes;
  /// What goes to the service node (api::make_share: targets indexed 0..n-1, its own id).
  api::wire::share_request request;
};

/// A fan-out call split across the head and its service nodes (api::plan_delegation).
struct delegated_run {
  /// Every node of the call, in noderange order: results are reported by these indexes.
  std::vector<std::string> nodes;
  /// The head's share, already planned over the nodes at `head_indexes` in that order (null
  /// when the head runs none).
  api::node_operation_ptr head;
  std::vector<uint32_t> head_indexes;
  std::vector<delegated_share> shares;
  /// Nodes that run nowhere (every service node down, sn_fallback = fail): error
  /// `servicenode` with the message, reported at start.
  std::vector<api::sn_refusal> refused;
  /// The link's seal: called on each share just before it is sent, to fill `sealed` (the
  /// HMAC under that service node's secret). None: sent as it is.
  std::function<void(api::wire::share_request&)> seal;
  /// Where shares, batches and nodes in flight are counted per service node (the registry's
  /// board: the metrics page). None: not counted.
  std::shared_ptr<sn_board> board;
};

/// Builds the run of `plan`. `job` is the whole call's request (target i is node i, with its
/// address, port and user, resolved by the head); `executors` the handle of every service
/// node the plan names; `fanout` the call's effective fanout, split across the head and the
/// service nodes in proportion to their nodes (api::split_fanout): the service nodes' parts go
/// into their shares, the head's into `head_fanout`, for planning `head` (set by the caller).
/// Each share gets its own random id.
/// @throws std::out_of_range when `executors` lacks a service node of the plan.
delegated_run
make_delegated_run(std::vector<std::string> nodes, const api::wire::job_request& job,
                   const api::delegation_plan& plan,
                   const std::unordered_map<std::string, sn_executor_actor>& executors,
                   const api::delegation_settings& settings, size_t fanout, size_t& head_fanout);

/// The delegated call as the executor drives any operation (api/node_operation.hpp): the
/// executor's results, streaming, limits, jobs and cancel see no difference from the head
/// doing the work itself.
///
/// start() spawns the delegation: refused nodes are reported at once, the head's share
/// starts, and each service node gets its share (sn_run_atom). Results merge by index: a
/// node is reported once, whoever reports it, as it ends (streaming order is completion
/// order, as on the head); each batch is credited once taken. A service node that goes
/// away (its executor's down message: the link's loss or heartbeat timeout, an actor that
/// exits) turns each of its nodes not yet reported into error `servicenode`: "service node
/// sn2 became unreachable after the command was sent; it may have run". Nothing is ever sent
/// twice or run elsewhere after it was sent. A share refused whole (sn_end_atom with a reason)
/// reports its nodes `servicenode` with that reason. cancel() cancels the head's share and
/// sends sn_cancel_atom to every service node still working; their nodes come back
/// `cancelled` (or `servicenode` if the service node goes away first). Dropping the operation
/// (the executor stopping, or a destroyed job) ends the delegation: the service nodes' work is
/// cancelled and every node not yet reported gets `disconnected` ("the service is stopping"),
/// then on_done. Every node gets exactly one result, then on_done once.
api::node_operation_ptr delegate(caf::actor_system& sys, delegated_run run);

/// How the head's executor delegates (docs/service-nodes.md).
struct delegation_config {
  api::delegation_settings settings;
  /// The registered service nodes (the registry's roster; null: none, nothing is delegated).
  std::shared_ptr<const sn_roster> roster;
  /// The head's own names and addresses (with site.master: a `servicenode` entry naming one
  /// runs the node from the head).
  std::vector<std::string> head;
  /// How long a share's seal is valid (sn_request_ttl_ms).
  std::chrono::milliseconds seal_ttl{60000};
  /// The registry's board: each run counts its shares, batches and nodes in flight there.
  std::shared_ptr<sn_board> board;
};

/// The head executor's bind (executor_config::bind) over the head's transports `d`: a call
/// that api::delegates, while the roster knows any service node, is planned by
/// api::plan_delegated with the roster's live set and, when any node goes to a service node,
/// runs as `delegate` (each share sealed under its service node's secret); every other call
/// is api::plan as before (no `servicenode` read, nothing more spent).
bind_ptr delegating_bind(caf::actor_system& sys, std::shared_ptr<const api::drivers> d,
                         delegation_config cfg);

} // namespace cws::actors
