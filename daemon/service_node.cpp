#include "daemon/service_node.hpp"

#include <caf/send.hpp>

#include <algorithm>

#include "actors/share_seal.hpp"
#include "api/copy_share.hpp"
#include "api/hardware.hpp"
#include "api/nodestat.hpp"
#include "api/operation_traits.hpp"
#include "api/settings.hpp"
#include "api/sn_seal.hpp"
#include "api/targets.hpp"

namespace cws::daemon {

namespace {

bool is_hardware(api::operation op) {
  using api::operation;
  return op == operation::power || op == operation::nextboot || op == operation::eventlog
         || op == operation::beacon || op == operation::vitals || op == operation::inventory;
}

api::api_result refuse(std::string why) {
  return api::api_result::failure({std::move(why)});
}

api::api_result bind_shell(api::operation op, const api::drivers& d,
                           const api::wire::job_request& job, api::node_operation_ptr& out) {
  if (!d.ssh) {
    return refuse("nodeshell is not enabled on this service node");
  }
  // a copy's files come in the share, never from a path of this host's (bind_copy)
  std::shared_ptr<const ssh::copy_spec> copy;
  if (auto r = api::bind_copy(job, d.copy.chunk, copy); !r.ok()) {
    return r;
  }
  if (op == api::operation::nodecopy && !copy) {
    return refuse("the request names no files to copy");
  }
  const auto& user = job.targets.empty() ? std::string{} : job.targets.front().user;
  std::vector<api::node_target> targets;
  targets.reserve(job.targets.size());
  for (const auto& t : job.targets) {
    if (t.user.empty() || t.user != user) {
      return refuse("a share's nodes run as one user, named in each target");
    }
    targets.push_back({t.name, t.address, t.port});
  }
  api::api_call call;
  call.op = op;
  call.command = job.command;
  call.timeout_ms = job.timeout_ms;
  call.fanout = job.fanout;
  // the user's key is this home's (clusterctl sn sync puts it there); none: nothing runs
  return api::plan_shell(call, user, std::move(targets), d.shell, d.ssh, out, std::move(copy));
}

api::api_result bind_hardware(api::operation op, const api::drivers& d,
                              const api::wire::job_request& job, api::node_operation_ptr& out) {
  std::vector<api::bmc_target> targets;
  targets.reserve(job.targets.size());
  for (const auto& t : job.targets) {
    if (t.bmc.empty()) {
      return refuse("target " + std::to_string(t.index) + " has no BMC address");
    }
    api::bmc_target b;
    b.name = t.name;
    b.bmc = {t.bmc, t.bmc_port, t.bmc_user, t.bmc_password};
    b.delay = std::chrono::milliseconds(t.delay_ms);
    targets.push_back(std::move(b));
  }
  auto timeout = std::chrono::seconds(job.bmc_timeout_s != 0 ? job.bmc_timeout_s : 2);
  auto retries = static_cast<int>(job.bmc_retries != 0 ? job.bmc_retries : 3);
  return api::plan_bmc_targets(op, job.command, std::move(targets), timeout, retries,
                               job.fanout != 0 ? job.fanout : d.hardware.fanout, d.hardware,
                               {d.ipmi, nullptr}, out);
}

api::api_result bind_nodestat(const api::drivers& d, const api::wire::job_request& job,
                              api::node_operation_ptr& out) {
  if (!d.probe) {
    return refuse("nodestat is not enabled on this service node");
  }
  auto cfg = d.nodestat;
  try {
    cfg.apps = api::parse_app_ports(job.command); // the head's, so both read nodes alike
  } catch (const std::invalid_argument& e) {
    return refuse(std::string{"the share's application ports: "} + e.what());
  }
  if (job.timeout_ms > 0) {
    cfg.timeout = std::chrono::milliseconds(job.timeout_ms);
  }
  std::vector<api::probe_node> nodes;
  nodes.reserve(job.targets.size());
  for (const auto& t : job.targets) {
    nodes.push_back({t.name, t.address, t.port, t.state});
  }
  out = api::plan_probe_nodes(std::move(nodes), cfg, job.fanout != 0 ? job.fanout : cfg.fanout,
                              d.probe);
  return {};
}

} // namespace

api::api_result bind_share(const api::drivers& d, const api::wire::job_request& job,
                           api::node_operation_ptr& out) {
  const auto* traits = api::find_operation(job.operation);
  if (traits == nullptr) {
    return refuse("'" + job.operation.substr(0, 64) + "' is not an operation");
  }
  if (traits->op == api::operation::nodeshell || traits->op == api::operation::nodecopy) {
    return bind_shell(traits->op, d, job, out);
  }
  if (is_hardware(traits->op)) {
    return bind_hardware(traits->op, d, job, out);
  }
  if (traits->op == api::operation::nodestat) {
    return bind_nodestat(d, job, out);
  }
  return refuse(std::string{traits->name} + " is not run on service nodes");
}

service_node_component::service_node_component(const base::settings& s, const runtime_component& rt,
                                               transports engines, sn_agent_component& link)
    : rt_(rt), engines_(engines), link_(link), limits_(api::sn_request_limits(s)) {
}

void service_node_component::start() {
  actors::service_node_config cfg;
  cfg.name = link_.link().name;
  cfg.limits = limits_;
  auto drivers = engines_.drivers();
  cfg.bind = [d = drivers](const api::wire::job_request& job, api::node_operation_ptr& out) {
    return bind_share(*d, job, out);
  };
  // on the executor's thread only: the replay cache needs no lock
  cfg.verify = [name = link_.link().name, secret = link_.link().secret,
                seen = link_.replay_cache()](const api::wire::share_request& share) {
    return actors::verify_share(share, name, secret, api::sn_now_ms(), *seen);
  };
  handle_ = actors::spawn_service_node(rt_.system(), std::move(cfg));
  // the link registers it with the head; its heartbeats carry the engines' nodes in flight
  link_.serve(handle_, [d = drivers] {
    int64_t n = 0;
    if (d->ssh) {
      n += d->ssh->meter().read().nodes_in_flight;
    }
    if (d->ipmi) {
      n += d->ipmi->meter().read().nodes_in_flight;
    }
    if (d->probe) {
      n += d->probe->meter().read().nodes_in_flight;
    }
    return static_cast<uint32_t>(std::clamp<int64_t>(n, 0, UINT32_MAX));
  });
}

void service_node_component::stop() {
  if (handle_) {
    caf::anon_send_exit(handle_, caf::exit_reason::user_shutdown);
    handle_ = nullptr;
  }
}

} // namespace cws::daemon
