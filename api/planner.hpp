#pragma once

// Turns a fan-out call into the node_operation of its transport. A new transport (IPMI,
// libvirt, service-node delegation) adds its driver here and its planning beside
// api/shell.hpp; the executor does not change.

#include <memory>

#include "api/call.hpp"
#include "api/copy.hpp"
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

/// True if `op` has a planner here (every fan-out operation has: a unit test checks).
bool has_planner(operation op);

} // namespace cws::api
