#pragma once

// Turns a fan-out call into the node_operation of its transport. A new transport (IPMI,
// libvirt, service-node delegation) adds its driver here and its planning beside
// api/shell.hpp; the executor does not change.

#include <memory>

#include "api/call.hpp"
#include "api/copy.hpp"
#include "api/delegation.hpp"
#include "api/hardware.hpp"
#include "api/node_operation.hpp"
#include "api/nodestat.hpp"
#include "api/result.hpp"
#include "api/rinstall.hpp"
#include "api/shell.hpp"
#include "store/database.hpp"
#include "store/noderange.hpp"

namespace cws::api {

/// The transports per-node operations run on, with their settings. A null transport is
/// disabled: its operations are refused as unavailable.
struct drivers {
  std::shared_ptr<ssh::engine> ssh;
  shell_config shell;
  /// nodecopy, xdcp and xdsh -e.
  copy_config copy;
  /// Hardware control (rpower, rsetboot) of mgt=ipmi nodes.
  std::shared_ptr<ipmi::engine> ipmi;
  hardware_config hardware;
  /// Power control of mgt=kvm nodes (libvirt).
  std::shared_ptr<virt::hypervisors> virt;
  /// nodestat's port probes.
  std::shared_ptr<probe::prober> probe;
  nodestat_config nodestat;
  /// rinstall's nodeset step (none: rinstall is refused as unavailable).
  std::shared_ptr<const boot_state_writer> boot_states;
};

/// Plans fan-out call `call` in one read of `db`: its nodes (expanded once: the nodes policy
/// expanded are reused), their addresses, and the transport's jobs.
/// @returns a failure, or success with `out` set.
api_result plan(const store::database& db, const api_call& call, const authorization& auth,
                const store::noderange_options& opts, const drivers& d, node_operation_ptr& out);

/// True if `call`'s nodes may run on service nodes: nodeshell, nodecopy and xdsh -e (their
/// files' bytes go in the share: api/copy_share.hpp), the hardware verbs, nodestat. A pull
/// (xdcp -P: the files would come back through the results) and rinstall (it writes the
/// store) run from the head.
bool delegates(const api_call& call);

/// A fan-out call planned across the head and its service nodes.
struct delegated_plan {
  /// The call's nodes, in noderange order.
  std::vector<std::string> nodes;
  /// Where each node runs (api::plan_delegation).
  delegation_plan where;
  /// The whole call's request: target i is node i, resolved by the head (only the targets of
  /// nodes going to a service node are filled).
  wire::job_request job;
  /// The head's own nodes (`where.head`), planned with the head's part of the fanout; the
  /// whole call when `where.all_on_head()`; null when the head runs none.
  node_operation_ptr head;
  /// The call's effective fanout (split across the head and the service nodes).
  size_t fanout = 1;
  /// A copy's files (nodecopy, xdsh -e), read once when nodes go to service nodes: the
  /// head's share copies from them and the shares carry them (api::carry_copy). Null when
  /// every node stays on the head (its plan read them) or the call copies nothing.
  std::shared_ptr<const ssh::copy_spec> copy;
};

/// Plans fan-out call `call` (an operation that `delegates`) as `plan` does, split by each
/// node's `servicenode` over the service nodes in `sns` (the head's names: site.master and
/// `sns.head`). A node whose transport cannot be delegated (a hardware verb's node that is
/// not mgt=ipmi with a bmc) runs from the head, which gives its error or runs it. The
/// delegated nodes' targets are resolved here (address, port, user; a BMC's address, port,
/// user and password; the boot state) from the same read.
/// @returns a failure (as plan's), or success with `out` set.
api_result plan_delegated(const store::database& db, const api_call& call,
                          const authorization& auth, const store::noderange_options& opts,
                          const drivers& d, const service_nodes& sns, delegated_plan& out);

/// True if `op` has a planner here (every fan-out operation has: a unit test checks).
bool has_planner(operation op);

} // namespace cws::api
