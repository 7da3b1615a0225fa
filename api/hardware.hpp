#pragma once

// Hardware control planning (rpower, rsetboot): a call's nodes become per-node work for the
// driver their `mgt` names (ipmi: the BMC; kvm: libvirt on the vmhost), as one
// node_operation. Nodes no driver can serve get
// their own error (xCAT's messages) without holding the others back.

#include <memory>
#include <string>

#include "api/call.hpp"
#include "api/node_operation.hpp"
#include "api/result.hpp"
#include "ipmi/engine.hpp"
#include "ipmi/sdr.hpp"
#include "ipmi/sel.hpp"
#include "store/cluster_view.hpp"
#include "store/database.hpp"
#include "store/noderange.hpp"
#include "virt/hypervisors.hpp"

namespace cws::api {

/// How hardware control runs. Every limit is explicit (docs/hardware.md).
struct hardware_config {
  /// BMCs worked on at once by one request.
  size_t fanout = 1024;
  /// RMCP+ port of BMCs without `bmcport`.
  uint16_t port = 623;
  /// reventlog's bounds per BMC.
  ipmi::sel_limits sel;
  /// rvitals: SDR records read from one BMC at most (`ipmi_sdr_max_records`).
  size_t sdr_max_records = 1024;
  /// rinv: FRU bytes read from one BMC at most (`ipmi_fru_max_bytes`).
  size_t fru_max_bytes = 4096;
  /// rvitals: the SDR repositories read so far, per BMC (null: none kept).
  std::shared_ptr<ipmi::sdr_cache> sdr_cache;
};

/// xCAT's credentials when neither the node nor the passwd table has any (ipmi.pm).
constexpr const char* default_bmc_user = "USERID";
constexpr const char* default_bmc_password = "PASSW0RD";

/// Where a node's BMC is and how to log in to it, as every hardware verb (rpower, rsetboot,
/// reventlog, ...) and the console server resolve it.
struct bmc_access {
  std::string address; ///< the node's `bmc` (its first, for a multi-BMC node); "" when unset
  uint16_t port = 623;
  std::string user;
  std::string password;
};

/// The BMC user and password of nodes without their own: the passwd table's ipmi row, else
/// xCAT's defaults.
bmc_access fallback_bmc_credentials(const store::read_txn& txn);

/// Node `node`'s BMC in `view`: `bmc`, `bmcport` (else `default_port`), `bmcusername` and
/// `bmcpassword` (inherited from groups; else `fallback`'s). `out.address` is empty when the
/// node has no bmc.
/// @returns a failure naming the node, attribute and value for a bad bmcport.
api_result resolve_bmc(const store::cluster_view& view, const std::string& node,
                       const bmc_access& fallback, uint16_t default_port, bmc_access& out);

/// The drivers hardware control runs on; a null one is disabled (its nodes fail alone).
struct hardware_drivers {
  std::shared_ptr<ipmi::engine> ipmi;
  std::shared_ptr<virt::hypervisors> virt;
};

/// Plans `call` (power, nextboot, eventlog, beacon, vitals or inventory; the action in
/// `call.command`) in one read of
/// `db`: the nodes, their mgt, BMC address, port and credentials, site.ipmitimeout and
/// site.ipmiretries; for mgt=kvm the hypervisor (`vmhost`) and the domain (the node's name).
/// @returns a failure (missing nodes, an unknown action, stale), or success with `out` set.
api_result plan_hardware(const store::database& db, const api_call& call, const authorization& auth,
                         const store::noderange_options& opts, const hardware_config& cfg,
                         const hardware_drivers& drivers, node_operation_ptr& out);

/// One node of a hardware call whose BMC the head resolved (a service node's share).
struct bmc_target {
  std::string name;
  bmc_access bmc;
  /// Staged power-on: how long the node's work waits.
  std::chrono::milliseconds delay{0};
};

/// Plans `op`'s `action` on BMCs resolved elsewhere (a service node: no store): each target's
/// BMC, `timeout` per try and `retries` tries, `fanout` BMCs at once, as plan_hardware plans
/// an mgt=ipmi node.
/// @returns a failure for an unknown action or no ipmi engine, or success with `out` set.
api_result plan_bmc_targets(operation op, const std::string& action,
                            std::vector<bmc_target> targets, std::chrono::seconds timeout,
                            int retries, size_t fanout, const hardware_config& cfg,
                            const hardware_drivers& drivers, node_operation_ptr& out);

/// The message xCAT gives for an action rpower (rsetboot, rvitals, rinv) does not know.
std::string unsupported_action_message(operation op, const std::string& action);

} // namespace cws::api
