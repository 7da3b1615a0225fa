#include "api/planner.hpp"

#include "api/operations.hpp"

namespace cws::api {

api_result plan(const store::database& db, const api_call& call, const authorization& auth,
                const store::noderange_options& opts, const drivers& d, node_operation_ptr& out) {
  if (call.op == operation::nodestat) {
    if (!d.probe) {
      return api_result::failure(errc::unavailable, "nodestat is not enabled on this service.");
    }
    std::shared_ptr<nodestat_operation> op;
    auto r = plan_nodestat(db, call, auth, opts, d.nodestat, d.probe, op);
    out = std::move(op);
    return r;
  }
  if (call.op == operation::power || call.op == operation::nextboot
      || call.op == operation::eventlog || call.op == operation::beacon
      || call.op == operation::vitals || call.op == operation::inventory) {
    return plan_hardware(db, call, auth, opts, d.hardware, {d.ipmi, d.virt}, out);
  }
  if (call.op != operation::nodeshell && call.op != operation::nodecopy) {
    return api_result::failure({"This operation does not run on nodes."});
  }
  if (!d.ssh) {
    return api_result::failure(errc::unavailable, "nodeshell is not enabled on this service.");
  }
  std::vector<node_target> targets;
  if (auto r = find_targets(db, call, auth, opts, targets); !r.ok()) {
    return r;
  }
  std::shared_ptr<const ssh::copy_spec> copy;
  if (call.copy) {
    // a confined copy (REST, the local socket) reads its sources as its caller (N4)
    if (auto r = build_copy(*call.copy, d.copy, copy, auth.user); !r.ok()) {
      return r;
    }
  } else if (call.op == operation::nodecopy) {
    return api_result::failure(errc::missing_data, "Lack of operation data.");
  }
  return plan_shell(call, auth.user, std::move(targets), d.shell, d.ssh, out, std::move(copy));
}

} // namespace cws::api
