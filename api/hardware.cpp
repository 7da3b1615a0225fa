#include "api/hardware.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

#include "api/operations.hpp"
#include "api/targets.hpp"
#include "ipmi/beacon.hpp"
#include "ipmi/chassis.hpp"
#include "ipmi/fru.hpp"
#include "ipmi/sel.hpp"
#include "ipmi/sensors.hpp"
#include "store/cluster_view.hpp"
#include "store/tables.hpp"

namespace cws::api {

namespace {

/// One node's plan: its BMC or virtual machine job, or why it has none.
struct planned_node {
  std::string name;
  std::string error;
  std::string message;
  bool vm = false;
  size_t job = 0; ///< index into its driver's jobs when error is empty
};

/// The call's action on its nodes: the ipmi engine's jobs, the hypervisors' jobs, and the
/// nodes no driver serves, which fail at once with their own message. `on_done` comes after
/// both drivers' runs have ended.
class hardware_operation : public node_operation {
 public:
  hardware_operation(hardware_drivers drivers, std::vector<planned_node> nodes,
                     std::vector<ipmi::job> jobs, std::vector<virt::vm_job> vm_jobs, size_t fanout)
      : drivers_(std::move(drivers)), planned_(std::move(nodes)), jobs_(std::move(jobs)),
        vm_jobs_(std::move(vm_jobs)), fanout_(fanout) {
    names_.reserve(planned_.size());
    for (size_t i = 0; i < planned_.size(); ++i) {
      names_.push_back(planned_[i].name);
      if (planned_[i].error.empty()) {
        (planned_[i].vm ? by_vm_job_ : by_job_).push_back(i);
      }
    }
  }

  const std::vector<std::string>& nodes() const override {
    return names_;
  }

  void start(result_fn on_result, std::function<void()> on_done) override {
    for (size_t i = 0; i < planned_.size(); ++i) {
      if (!planned_[i].error.empty()) {
        base::node_result r;
        r.name = planned_[i].name;
        r.rc = 1;
        r.error = planned_[i].error;
        r.message = planned_[i].message;
        on_result(i, std::move(r));
      }
    }
    // each driver's run ends once; the last of them ends the operation
    auto runs = std::make_shared<std::atomic<int>>(2);
    auto one_done = [runs, on_done = std::move(on_done)] {
      if (--*runs == 0) {
        on_done();
      }
    };
    auto map = by_job_;
    auto vm_map = by_vm_job_;
    uint64_t id = 0;
    uint64_t vm_id = 0;
    if (jobs_.empty()) {
      one_done();
    } else {
      id = drivers_.ipmi->run(
        std::move(jobs_), fanout_,
        [on_result, map](size_t j, base::node_result r) { on_result(map[j], std::move(r)); },
        one_done);
    }
    if (vm_jobs_.empty()) {
      one_done();
    } else {
      vm_id = drivers_.virt->run(
        std::move(vm_jobs_), fanout_,
        [on_result, vm_map](size_t j, base::node_result r) { on_result(vm_map[j], std::move(r)); },
        one_done);
    }
    std::lock_guard<std::mutex> guard{mu_};
    run_ = id;
    vm_run_ = vm_id;
    if (cancelled_) {
      cancel_runs();
    }
  }

  void cancel() override {
    std::lock_guard<std::mutex> guard{mu_};
    cancelled_ = true;
    cancel_runs();
  }

 private:
  void cancel_runs() { // under mu_
    if (run_ != 0) {
      drivers_.ipmi->cancel(run_);
    }
    if (vm_run_ != 0) {
      drivers_.virt->cancel(vm_run_);
    }
  }

  hardware_drivers drivers_;
  std::vector<planned_node> planned_;
  std::vector<ipmi::job> jobs_;
  std::vector<virt::vm_job> vm_jobs_;
  std::vector<size_t> by_job_;
  std::vector<size_t> by_vm_job_;
  std::vector<std::string> names_;
  size_t fanout_;
  std::mutex mu_;
  uint64_t run_ = 0;
  uint64_t vm_run_ = 0;
  bool cancelled_ = false;
};

/// The action's conversation, or nothing for a word the command does not know. `bmc` names
/// the BMC in the SDR cache.
std::shared_ptr<ipmi::action> make_action(operation op, const std::string& word,
                                          const hardware_config& cfg, const std::string& bmc) {
  if (op == operation::eventlog) {
    auto e = ipmi::parse_eventlog(word);
    return e ? ipmi::eventlog_action(*e, cfg.sel) : nullptr;
  }
  if (op == operation::beacon) {
    auto b = ipmi::parse_beacon(word);
    return b ? ipmi::beacon_action(*b) : nullptr;
  }
  if (op == operation::vitals) {
    auto f = ipmi::parse_vitals(word);
    return f ? ipmi::vitals_action(*f, cfg.sdr_cache, bmc, {cfg.sdr_max_records}) : nullptr;
  }
  if (op == operation::inventory) {
    auto f = ipmi::parse_inventory(word);
    return f ? ipmi::inventory_action(*f, cfg.fru_max_bytes) : nullptr;
  }
  if (op == operation::power) {
    auto p = ipmi::parse_power(word);
    return p ? ipmi::power_action(*p) : nullptr;
  }
  // rsetboot: the device, then `-u` (UEFI) for a device that is set
  auto space = word.find(' ');
  auto device = word.substr(0, space);
  bool uefi = space != std::string::npos && word.substr(space + 1) == "-u";
  if (space != std::string::npos && !uefi) {
    return nullptr;
  }
  auto b = ipmi::parse_boot(device);
  if (!b || (uefi && (*b == ipmi::boot_op::stat || *b == ipmi::boot_op::def))) {
    return nullptr;
  }
  return ipmi::boot_action(*b, uefi);
}

} // namespace

std::string unsupported_action_message(operation op, const std::string& action) {
  if (op == operation::eventlog) {
    return "Unsupported command: reventlog " + action;
  }
  if (op == operation::beacon) {
    return "Unsupported command: rbeacon " + action;
  }
  if (op == operation::vitals) {
    return "Unrecognized rvitals arguments " + action;
  }
  if (op == operation::inventory) {
    std::string word;
    ipmi::parse_inventory(action, &word);
    return "unsupported BMC inv argument " + word;
  }
  if (op == operation::power) {
    return "Unsupported command: rpower " + action;
  }
  return "unsupported command setboot " + action;
}

bmc_access fallback_bmc_credentials(const store::read_txn& txn) {
  bmc_access a;
  a.user = default_bmc_user;
  a.password = default_bmc_password;
  if (auto row = txn.get(store::object_type::site, store::bmc_credentials_object)) {
    a.user = std::string{row->find("username").value_or(a.user)};
    a.password = std::string{row->find("password").value_or(a.password)};
  }
  return a;
}

bool resolve_vm(const store::cluster_view& view, const std::string& node, vm_access& out,
                std::string& error) {
  auto vmhost = view.attribute(node, "vmhost");
  if (vmhost.empty()) {
    error = "Unable to identify vmhost for " + node + " (set its vmhost attribute)";
    return false;
  }
  out.uri = virt::vmhost_uri(vmhost);
  out.domain = node;
  return true;
}

api_result resolve_bmc(const store::cluster_view& view, const std::string& node,
                       const bmc_access& fallback, uint16_t default_port, bmc_access& out) {
  auto bmc = view.attribute(node, "bmc");
  out.address = bmc.substr(0, bmc.find(',')); // a multi-BMC node: its first, as xCAT
  uint16_t port = 0;
  if (auto r = node_port(view, node, "bmcport", port); !r.ok()) {
    return r;
  }
  out.port = port != 0 ? port : default_port;
  auto user = view.attribute(node, "bmcusername");
  auto password = view.attribute(node, "bmcpassword");
  out.user = user.empty() ? fallback.user : user;
  out.password = password.empty() ? fallback.password : password;
  return {};
}

api_result plan_bmc_targets(operation op, const std::string& action,
                            std::vector<bmc_target> targets, std::chrono::seconds timeout,
                            int retries, size_t fanout, const hardware_config& cfg,
                            const hardware_drivers& drivers, node_operation_ptr& out) {
  if (!make_action(op, action, cfg, {})) {
    return api_result::failure({unsupported_action_message(op, action)});
  }
  if (!drivers.ipmi) {
    return api_result::failure(errc::unavailable,
                               "Hardware control is not enabled on this service.");
  }
  std::vector<planned_node> nodes;
  std::vector<ipmi::job> jobs;
  nodes.reserve(targets.size());
  jobs.reserve(targets.size());
  for (auto& t : targets) {
    planned_node p;
    p.name = t.name;
    p.job = jobs.size();
    ipmi::job j;
    j.node = std::move(t.name);
    j.address = std::move(t.bmc.address);
    j.port = t.bmc.port != 0 ? t.bmc.port : cfg.port;
    j.user = std::move(t.bmc.user);
    j.password = std::move(t.bmc.password);
    j.timeout = timeout;
    j.retries = retries;
    j.work = make_action(op, action, cfg, j.address + ":" + std::to_string(j.port));
    j.delay = t.delay;
    jobs.push_back(std::move(j));
    nodes.push_back(std::move(p));
  }
  out = std::make_shared<hardware_operation>(drivers, std::move(nodes), std::move(jobs),
                                             std::vector<virt::vm_job>{},
                                             std::max<size_t>(1, fanout));
  return {};
}

api_result plan_hardware(const store::database& db, const api_call& call, const authorization& auth,
                         const store::noderange_options& opts, const hardware_config& cfg,
                         const hardware_drivers& drivers, node_operation_ptr& out) {
  if (!make_action(call.op, call.command, cfg, {})) {
    return api_result::failure({unsupported_action_message(call.op, call.command)});
  }
  try {
    auto txn = db.read();
    if (is_stale(txn, auth)) {
      return api_result::failure(errc::stale, "authorization is stale");
    }
    store::cluster_view view{txn};
    std::vector<std::string> names;
    if (auto r = verified_nodes(view, call, auth, caller_options(opts, auth), names); !r.ok()) {
      return r;
    }
    // site.ipmitimeout (seconds per try) and site.ipmiretries, xCAT's defaults 2 and 3
    long timeout_s = 0;
    long retries = 0;
    if (auto r = read_site_number(txn, {"ipmitimeout", 2, 1, 3600}, timeout_s); !r.ok()) {
      return r;
    }
    if (auto r = read_site_number(txn, {"ipmiretries", 3, 1, 100}, retries); !r.ok()) {
      return r;
    }
    auto timeout = std::chrono::seconds(timeout_s);
    // staged power-on (xCAT's ipmi.pm): on, reset and boot go to syspowermaxnodes BMCs at a
    // time, each group syspowerinterval seconds after the one before
    long interval = 0;
    long per_stage = 0;
    if (call.op == operation::power
        && (call.command == "on" || call.command == "reset" || call.command == "boot")) {
      if (auto r = read_site_number(txn, {"syspowerinterval", 0, 0, 86400}, interval); !r.ok()) {
        return r;
      }
      if (auto r = read_site_number(txn, {"syspowermaxnodes", 0, 0, 100000000}, per_stage);
          !r.ok()) {
        return r;
      }
      if (interval > 0 && per_stage == 0) {
        return api_result::failure(
          {"IPMI plugin requires syspowermaxnodes be defined if syspowerinterval is defined"});
      }
    }
    auto fallback = fallback_bmc_credentials(txn);
    std::vector<planned_node> nodes;
    std::vector<ipmi::job> jobs;
    std::vector<virt::vm_job> vm_jobs;
    auto vm_action = call.op == operation::inventory ? std::optional{virt::power_action::inventory}
                                                     : virt::parse_power_action(call.command);
    nodes.reserve(names.size());
    for (auto& n : names) {
      planned_node p;
      p.name = n;
      auto mgt = view.attribute(n, "mgt");
      auto bmc = view.attribute(n, "bmc");
      bool vm_op = call.op == operation::power || call.op == operation::inventory;
      if (mgt == "kvm" && vm_op && vm_action) {
        vm_access vm;
        if (!resolve_vm(view, n, vm, p.message)) {
          p.error = to_string(base::node_errc::no_vmhost);
        } else {
          p.vm = true;
          p.job = vm_jobs.size();
          vm_jobs.push_back({n, std::move(vm.uri), std::move(vm.domain), *vm_action});
        }
      } else if (mgt != "ipmi") {
        // xcatd's answer for a node no plugin takes (kvm, openbmc, redfish: later drivers)
        p.error = to_string(base::node_errc::unsupported);
        p.message = std::string{"Unable to identify plugin for this command, check relevant "
                                "tables: "}
                    + (call.op == operation::power ? "nodehm.power,mgt" : "nodehm.mgt");
      } else if (bmc.empty()) {
        p.error = to_string(base::node_errc::no_bmc);
        p.message = "Unable to identify bmc for " + n + " (set its bmc attribute)";
      } else {
        ipmi::job j;
        j.node = n;
        bmc_access a;
        if (auto r = resolve_bmc(view, n, fallback, cfg.port, a); !r.ok()) {
          return r;
        }
        j.address = std::move(a.address);
        j.port = a.port;
        j.user = std::move(a.user);
        j.password = std::move(a.password);
        j.timeout = timeout;
        j.retries = static_cast<int>(retries);
        j.work = make_action(call.op, call.command, cfg, j.address + ":" + std::to_string(j.port));
        if (interval > 0) {
          auto wave = jobs.size() / per_stage;
          if (call.power_waves) { // (the head's share: waves counted across the whole call)
            auto w = call.power_waves->find(n);
            wave = w != call.power_waves->end() ? w->second : wave;
          }
          j.delay = std::chrono::seconds(interval * static_cast<long>(wave));
        }
        p.job = jobs.size();
        jobs.push_back(std::move(j));
      }
      nodes.push_back(std::move(p));
    }
    if ((!jobs.empty() && !drivers.ipmi) || (!vm_jobs.empty() && !drivers.virt)) {
      return api_result::failure(errc::unavailable,
                                 "Hardware control is not enabled on this service.");
    }
    auto fanout = effective_fanout(call.fanout, cfg.fanout, cfg.fanout);
    out = std::make_shared<hardware_operation>(drivers, std::move(nodes), std::move(jobs),
                                               std::move(vm_jobs), fanout);
    return {};
  } catch (const store::error& e) {
    return api_result::failure(from_store(e.code()), e.what());
  }
}

} // namespace cws::api
