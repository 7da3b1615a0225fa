#include "api/planner.hpp"

#include <algorithm>
#include <array>

#include "api/operation_traits.hpp"
#include "api/operations.hpp"
#include "api/targets.hpp"

namespace cws::api {

namespace {

/// What one planner is given.
struct planning {
  const store::database& db;
  const api_call& call;
  const authorization& auth;
  const store::noderange_options& opts;
  const drivers& d;
};

using planner_fn = api_result (*)(const planning& p, node_operation_ptr& out);

api_result plan_probe(const planning& p, node_operation_ptr& out) {
  if (!p.d.probe) {
    return api_result::failure(errc::unavailable, "nodestat is not enabled on this service.");
  }
  std::shared_ptr<nodestat_operation> op;
  auto r = plan_nodestat(p.db, p.call, p.auth, p.opts, p.d.nodestat, p.d.probe, op);
  out = std::move(op);
  return r;
}

api_result plan_bmc(const planning& p, node_operation_ptr& out) {
  return plan_hardware(p.db, p.call, p.auth, p.opts, p.d.hardware, {p.d.ipmi, p.d.virt}, out);
}

api_result plan_provision(const planning& p, node_operation_ptr& out) {
  rinstall_drivers d{p.d.boot_states, p.d.hardware, {p.d.ipmi, p.d.virt}};
  return plan_rinstall(p.db, p.call, p.auth, p.opts, d, out);
}

api_result plan_ssh(const planning& p, node_operation_ptr& out) {
  const auto& call = p.call;
  if (!p.d.ssh) {
    return api_result::failure(errc::unavailable, "nodeshell is not enabled on this service.");
  }
  std::vector<node_target> targets;
  if (auto r = find_targets(p.db, call, p.auth, p.opts, targets); !r.ok()) {
    return r;
  }
  // (already read by plan_delegated when the call has nodes on service nodes: once a call)
  std::shared_ptr<const ssh::copy_spec> copy = call.copy_files;
  if (call.copy && !copy) {
    // a confined copy (REST, the local socket) reads its sources as its caller (N4)
    if (auto r = build_copy(*call.copy, p.d.copy, copy, p.auth.user); !r.ok()) {
      return r;
    }
  } else if (!call.copy && call.op == operation::nodecopy) {
    return api_result::failure(errc::missing_data, "Lack of operation data.");
  }
  return plan_shell(call, p.auth.user, std::move(targets), p.d.shell, p.d.ssh, out,
                    std::move(copy));
}

/// The planner of each fan-out operation (operation_traits' fan_out rows).
constexpr std::array<std::pair<operation, planner_fn>, 10> planners{{
  {operation::nodeshell, plan_ssh},
  {operation::nodecopy, plan_ssh},
  {operation::power, plan_bmc},
  {operation::nextboot, plan_bmc},
  {operation::eventlog, plan_bmc},
  {operation::beacon, plan_bmc},
  {operation::vitals, plan_bmc},
  {operation::inventory, plan_bmc},
  {operation::nodestat, plan_probe},
  {operation::provision, plan_provision},
}};

} // namespace

bool has_planner(operation op) {
  return std::any_of(planners.begin(), planners.end(), [op](auto& p) { return p.first == op; });
}

api_result plan(const store::database& db, const api_call& call, const authorization& auth,
                const store::noderange_options& opts, const drivers& d, node_operation_ptr& out) {
  for (const auto& [op, fn] : planners) {
    if (op == call.op) {
      return fn({db, call, auth, opts, d}, out);
    }
  }
  return api_result::failure({"This operation does not run on nodes."});
}

bool delegates(const api_call& call) {
  if (call.copy && call.copy->pull) {
    return false; // xdcp -P: the files would come back through the results
  }
  switch (call.op) {
    case operation::nodeshell:
    case operation::nodecopy:
    case operation::power:
    case operation::nextboot:
    case operation::eventlog:
    case operation::beacon:
    case operation::vitals:
    case operation::inventory:
    case operation::nodestat: return true;
    default: return false;
  }
}

namespace {

bool is_hardware(operation op) {
  return op == operation::power || op == operation::nextboot || op == operation::eventlog
         || op == operation::beacon || op == operation::vitals || op == operation::inventory;
}

/// The call's effective fanout, as its planner reads it.
size_t call_fanout(const api_call& call, const drivers& d) {
  if (call.op == operation::nodestat) {
    return effective_fanout(call.fanout, d.nodestat.fanout, d.nodestat.fanout);
  }
  if (is_hardware(call.op)) {
    return effective_fanout(call.fanout, d.hardware.fanout, d.hardware.fanout);
  }
  return effective_fanout(call.fanout, d.shell.fanout, d.shell.fanout_max);
}

/// The nodestat_ports text of `apps` (a share carries the head's in its command).
std::string apps_text(const std::vector<app_port>& apps) {
  std::string out;
  for (const auto& a : apps) {
    out += (out.empty() ? "" : ",") + a.name + ":" + std::to_string(a.port);
  }
  return out;
}

/// Fills the targets of the nodes at `indexes` of `names` (their servicenode values cleared
/// in `values` for those that cannot be delegated). A staged power-on fills `waves`: every
/// BMC node's wave in the whole call, the head's as the service nodes' (its share is planned
/// with them, api_call::power_waves).
api_result resolve_targets(const store::read_txn& txn, const store::cluster_view& view,
                           const api_call& call, const authorization& auth, const drivers& d,
                           const std::vector<std::string>& names, std::vector<std::string>& values,
                           wire::job_request& job,
                           std::unordered_map<std::string, uint32_t>& waves) {
  job.version = wire::version;
  job.operation = std::string{traits(call.op).name};
  job.command = call.command;
  job.timeout_ms = call.timeout_ms;
  if (call.copy) {
    // (the files' bytes are added by the head's bind: api::carry_copy)
    for (const auto& e : call.copy->entries) {
      job.copy.push_back({e.sources, e.target});
    }
    job.recursive = call.copy->recursive;
    job.preserve = call.copy->preserve;
    job.pull = call.copy->pull;
    job.execute = call.copy->execute;
  }
  job.targets.resize(names.size());
  bmc_access fallback;
  long interval = 0;
  long per_stage = 0;
  if (is_hardware(call.op)) {
    long timeout_s = 0;
    long retries = 0;
    if (auto r = read_site_number(txn, {"ipmitimeout", 2, 1, 3600}, timeout_s); !r.ok()) {
      return r;
    }
    if (auto r = read_site_number(txn, {"ipmiretries", 3, 1, 100}, retries); !r.ok()) {
      return r;
    }
    job.bmc_timeout_s = static_cast<uint32_t>(timeout_s);
    job.bmc_retries = static_cast<uint32_t>(retries);
    if (call.op == operation::power
        && (call.command == "on" || call.command == "reset" || call.command == "boot")) {
      if (auto r = read_site_number(txn, {"syspowerinterval", 0, 0, 86400}, interval); !r.ok()) {
        return r;
      }
      if (auto r = read_site_number(txn, {"syspowermaxnodes", 0, 0, 100000000}, per_stage);
          !r.ok()) {
        return r;
      }
      if (interval > 0 && per_stage == 0) { // (as the head's own planning says)
        return api_result::failure(
          {"IPMI plugin requires syspowermaxnodes be defined if syspowerinterval is defined"});
      }
    }
    fallback = fallback_bmc_credentials(txn);
  } else if (call.op == operation::nodestat) {
    job.command = apps_text(d.nodestat.apps);
    job.timeout_ms = d.nodestat.timeout.count();
  }
  size_t bmcs = 0; // the call's ipmi nodes so far: staged power-on counts across the call
  for (size_t i = 0; i < names.size(); ++i) {
    const auto& n = names[i];
    auto& t = job.targets[i];
    if (is_hardware(call.op)) {
      bool ipmi = view.attribute(n, "mgt") == "ipmi" && !view.attribute(n, "bmc").empty();
      if (!ipmi) {
        values[i].clear(); // the head gives its error, or runs it (kvm)
        continue;
      }
      auto position = bmcs++;
      auto wave = interval > 0 && per_stage > 0 ? position / per_stage : 0;
      if (interval > 0 && per_stage > 0) {
        waves[n] = static_cast<uint32_t>(wave);
      }
      if (values[i].empty()) {
        continue;
      }
      bmc_access a;
      if (auto r = resolve_bmc(view, n, fallback, d.hardware.port, a); !r.ok()) {
        return r;
      }
      t.bmc = std::move(a.address);
      t.bmc_port = a.port;
      t.bmc_user = std::move(a.user);
      t.bmc_password = std::move(a.password);
      t.delay_ms = interval * 1000 * static_cast<long>(wave);
    } else if (values[i].empty()) {
      continue;
    } else {
      if (auto r = node_port(view, n, "sshport", t.port); !r.ok()) {
        return r;
      }
      if (t.port == 0) {
        t.port = call.op == operation::nodestat ? d.nodestat.ssh_port : d.shell.port;
      }
      t.address = view.attribute(n, "ip");
      t.user = auth.user;
      if (call.op == operation::nodestat) {
        t.state = view.attribute(n, "currstate");
      }
    }
    t.index = static_cast<uint32_t>(i);
    t.name = n;
  }
  return {};
}

} // namespace

api_result plan_delegated(const store::database& db, const api_call& call,
                          const authorization& auth, const store::noderange_options& opts,
                          const drivers& d, const service_nodes& sns, delegated_plan& out) {
  service_nodes with_head = sns;
  std::vector<std::string> values;
  std::unordered_map<std::string, uint32_t> waves;
  try {
    auto txn = db.read();
    if (is_stale(txn, auth)) {
      return api_result::failure(errc::stale, "authorization is stale");
    }
    store::cluster_view view{txn};
    if (auto r = verified_nodes(view, call, auth, caller_options(opts, auth), out.nodes); !r.ok()) {
      return r;
    }
    values = service_node_values(view, out.nodes);
    for (auto& h : head_names(view, {})) {
      with_head.head.insert(std::move(h));
    }
    if (std::any_of(values.begin(), values.end(),
                    [](const std::string& v) { return !v.empty(); })) {
      if (auto r = resolve_targets(txn, view, call, auth, d, out.nodes, values, out.job, waves);
          !r.ok()) {
        return r;
      }
    }
  } catch (const store::error& e) {
    return api_result::failure(from_store(e.code()), e.what());
  }
  out.where = plan_delegation(out.nodes, values, with_head);
  out.fanout = call_fanout(call, d);
  // the head's own nodes, planned as always (the nodes verified above, as policy's are)
  auto head_auth = auth;
  auto head_call = call;
  if (out.where.all_on_head()) {
    head_auth.nodes = std::make_shared<const std::vector<std::string>>(out.nodes);
  } else {
    std::vector<size_t> counts{out.where.head.size()};
    for (const auto& s : out.where.shares) {
      counts.push_back(s.indexes.size());
    }
    head_call.fanout = split_fanout(out.fanout, counts)[0];
    if (call.copy && !call.copy->pull) {
      // read once, here, for the head's nodes and the shares (api::carry_copy) alike
      if (auto r = build_copy(*call.copy, d.copy, out.copy, auth.user); !r.ok()) {
        return r;
      }
      head_call.copy_files = out.copy;
    }
    if (!waves.empty()) {
      head_call.power_waves
        = std::make_shared<const std::unordered_map<std::string, uint32_t>>(std::move(waves));
    }
    std::vector<std::string> mine;
    mine.reserve(out.where.head.size());
    for (auto i : out.where.head) {
      mine.push_back(out.nodes[i]);
    }
    if (mine.empty()) {
      return {};
    }
    head_auth.nodes = std::make_shared<const std::vector<std::string>>(std::move(mine));
  }
  return plan(db, head_call, head_auth, opts, d, out.head);
}

} // namespace cws::api
