#pragma once

// A service node's executor in clusterwsd --service-node (docs/service-nodes.md): the shares
// the head sends are verified (their seal, under this service node's secret, with a replay
// cache) and bound to this machine's engines: nodeshell on the SSH engine with the user's key
// from this home (`<home>/ssh/<user>/id_ed25519`, put there by clusterctl sn sync), the
// hardware verbs on the IPMI engine with the BMC the head resolved, nodestat on the prober.

#include <memory>

#include "actors/service_node_actor.hpp"
#include "api/planner.hpp"
#include "api/result.hpp"
#include "api/wire.hpp"
#include "daemon/component.hpp"
#include "daemon/components.hpp"
#include "daemon/transports.hpp"

namespace cws::daemon {

/// Binds share job `job` (targets resolved by the head) to the operation of its transport in
/// `d`: nodeshell (every target's user the same; that user's key in `d.shell.key_dir`), the
/// hardware verbs (each target's BMC), nodestat (each target's address, sshd port and boot
/// state; the head's application ports in `job.command`, its deadline in `job.timeout_ms`).
/// Any other operation, or nodeshell's copy, is refused.
/// @returns a failure (its message is the share's refusal), or success with `out` set.
api::api_result bind_share(const api::drivers& d, const api::wire::job_request& job,
                           api::node_operation_ptr& out);

/// The service node's executor (actors/service_node_actor.hpp) over the engines in `engines`,
/// registered with the head by the link component (`link`), which it hands its handle at
/// start; shares are verified with the link's secret and replay cache.
class service_node_component : public component {
 public:
  service_node_component(const base::settings& s, const runtime_component& rt, transports engines,
                         sn_agent_component& link);
  std::string_view name() const override {
    return "service-node";
  }
  void start() override;
  void stop() override;

 private:
  const runtime_component& rt_;
  transports engines_;
  sn_agent_component& link_;
  api::wire::request_limits limits_;
  actors::sn_executor_actor handle_;
};

} // namespace cws::daemon
