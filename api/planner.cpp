#include "api/planner.hpp"

#include <algorithm>
#include <array>

#include "api/operation_traits.hpp"
#include "api/operations.hpp"

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
  std::shared_ptr<const ssh::copy_spec> copy;
  if (call.copy) {
    // a confined copy (REST, the local socket) reads its sources as its caller (N4)
    if (auto r = build_copy(*call.copy, p.d.copy, copy, p.auth.user); !r.ok()) {
      return r;
    }
  } else if (call.op == operation::nodecopy) {
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

} // namespace cws::api
