#pragma once

// rinstall (and PUT /nodes/{nr}/provision): xCAT's rinstall.pm as one fan-out operation over
// the verbs that already exist: nodeset (api/nodeset, each node on its own), then `rsetboot
// net` (`-u`: UEFI) for mgt=ipmi nodes, then `rpower boot` (api/hardware: the same planner
// and drivers rsetboot and rpower run on). A node that fails a step gets that step's error
// as its result and goes no further; the others go on. Every node gets exactly one result.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/call.hpp"
#include "api/hardware.hpp"
#include "api/node_operation.hpp"
#include "api/nodeset.hpp"
#include "api/result.hpp"
#include "store/database.hpp"
#include "store/noderange.hpp"

namespace cws::api {

/// What `rinstall <noderange> ...` asks for.
struct rinstall_request {
  /// osimage[=NAME] (the default: each node's nodetype.provmethod), boot or shell.
  nodeset_action action;
  /// -u: the BMC boots the node in UEFI mode (rsetboot net -u).
  bool uefi = false;
};

/// xCAT's usage lines of rinstall.
extern const char* const rinstall_usage;

/// Parses a provision call's command: the state word (`osimage`, `osimage=NAME`, `boot`,
/// `shell`; none: `osimage`), then `-u`. nullopt with `error` in xCAT's words otherwise.
std::optional<rinstall_request> parse_rinstall(std::string_view command, std::string& error);

/// The command of a provision call for `request` (what parse_rinstall reads back).
std::string rinstall_command(const rinstall_request& request);

/// Called once with one result per node given, in their order: ok with the node's new
/// boot state in `out`, or failed (error `boot-state`) with nodeset's message.
using boot_state_done = std::function<void(std::vector<base::node_result>)>;

/// rinstall's nodeset step: sets `action` on each of `nodes` on its own, so that one node
/// nodeset refuses keeps its old state and does not hold the others back. The daemon writes
/// through the store's writer (so the change feed sees it), the CLI in its own transaction.
/// `done` may be called on any thread.
using boot_state_writer = std::function<void(std::vector<std::string> nodes, nodeset_action action,
                                             boot_state_done done)>;

/// What rinstall runs on.
struct rinstall_drivers {
  /// The nodeset step (none: rinstall is unavailable).
  std::shared_ptr<const boot_state_writer> boot_states;
  hardware_config hardware;
  hardware_drivers drivers;
};

/// Plans a provision call in one read of `db`: its nodes, each node's mgt (ipmi: nodeset,
/// rsetboot, rpower; kvm: nodeset, rpower, as rinstall.pm; anything else fails alone), and an
/// osimage named by the call must exist (else the whole call fails, as xCAT, before any
/// change). The later steps are planned (api/hardware) when they start, on `db`, which must
/// outlive the operation (the daemon's database does; the executor ends its operations first).
/// @returns a failure, or success with `out` set.
api_result plan_rinstall(const store::database& db, const api_call& call, const authorization& auth,
                         const store::noderange_options& opts, const rinstall_drivers& d,
                         node_operation_ptr& out);

/// The boot_state_writer's work in a write transaction: nodeset `action` on each node on its
/// own (api::set_boot_state_each), as results for boot_state_done.
std::vector<base::node_result> write_boot_states_each(store::write_txn& t,
                                                      const std::vector<std::string>& nodes,
                                                      const nodeset_action& action);

} // namespace cws::api
