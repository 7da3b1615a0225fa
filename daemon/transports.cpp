#include "daemon/transports.hpp"

#include <string>

#include "api/settings.hpp"

namespace cws::daemon {

namespace {

using base::metric_type;
using base::metric_writer;

/// The families every engine has, from its run meter: `clusterws_<engine>_runs_total`,
/// `_runs_in_flight`, `_nodes_in_flight`, `_nodes_total{result}`.
void write_runs(metric_writer& out, const std::string& engine, const char* what,
                const base::run_meter& m) {
  auto s = m.read();
  auto prefix = "clusterws_" + engine;
  out.counter(prefix + "_runs_total", std::string{"Runs started by the "} + what,
              static_cast<double>(s.runs));
  out.gauge(prefix + "_runs_in_flight", std::string{"Runs of the "} + what + " not ended yet",
            static_cast<double>(s.runs_in_flight));
  out.gauge(prefix + "_nodes_in_flight",
            std::string{"Nodes of the "} + what + "'s runs without a result yet",
            static_cast<double>(s.nodes_in_flight));
  auto& nodes = out.family(prefix + "_nodes_total",
                           std::string{"Nodes finished by the "} + what
                             + ", by result (ok, nonzero or the node's error code)",
                           metric_type::counter);
  for (const auto& [result, n] : s.results) {
    metric_writer::add(nodes, static_cast<double>(n), {{"result", result}});
  }
}

} // namespace

// -- ssh ---------------------------------------------------------------------------

ssh_component::ssh_component(const base::settings& s, const std::filesystem::path& home)
    : cfg_(api::engine_settings(s, home)), shell_(api::shell_settings(s, home)),
      copy_(api::copy_settings(s, home)) {
  // nop
}

void ssh_component::start() {
  engine_ = std::make_shared<ssh::engine>(cfg_);
}

void ssh_component::stop() {
  engine_.reset(); // (the last holder: the actors are gone)
}

void ssh_component::fill(api::drivers& d) const {
  d.ssh = engine_;
  d.shell = shell_;
  d.copy = copy_;
}

void ssh_component::metrics(metric_writer& out) const {
  if (!engine_) {
    return;
  }
  auto st = engine_->stats();
  out.gauge("clusterws_ssh_pool_connections", "Authenticated SSH connections pooled now",
            static_cast<double>(st.pooled));
  out.counter("clusterws_ssh_pool_hits_total", "Node commands run on a pooled connection",
              static_cast<double>(st.reuses));
  out.counter("clusterws_ssh_connects_total", "New SSH connections (logins)",
              static_cast<double>(st.connects));
  write_runs(out, "ssh", "SSH engine (nodeshell, nodecopy)", engine_->meter());
}

// -- ipmi --------------------------------------------------------------------------

ipmi_component::ipmi_component(const base::settings& s)
    : cfg_(api::ipmi_settings(s)), hardware_(api::hardware_settings(s)) {
  // nop
}

void ipmi_component::start() {
  engine_ = std::make_shared<ipmi::engine>(cfg_);
}

void ipmi_component::stop() {
  engine_.reset();
}

void ipmi_component::fill(api::drivers& d) const {
  d.ipmi = engine_;
  d.hardware = hardware_;
}

void ipmi_component::metrics(metric_writer& out) const {
  if (!engine_) {
    return;
  }
  auto st = engine_->stats();
  out.gauge("clusterws_ipmi_pool_sessions", "Established BMC sessions pooled now",
            static_cast<double>(st.pooled));
  out.counter("clusterws_ipmi_pool_hits_total", "BMC conversations run on a pooled session",
              static_cast<double>(st.reuses));
  out.counter("clusterws_ipmi_sessions_total", "BMC sessions established (RAKP exchanges)",
              static_cast<double>(st.sessions));
  write_runs(out, "ipmi", "IPMI engine (rpower, rsetboot, rvitals, rinv, reventlog, rbeacon)",
             engine_->meter());
}

// -- libvirt -----------------------------------------------------------------------

libvirt_component::libvirt_component(const base::settings& s) : cfg_(api::virt_settings(s)) {
  // nop
}

void libvirt_component::start() {
  engine_ = std::make_shared<virt::hypervisors>(cfg_);
}

void libvirt_component::stop() {
  engine_.reset(); // (waits up to kvm_stop_wait for calls in flight)
}

void libvirt_component::fill(api::drivers& d) const {
  d.virt = engine_;
}

void libvirt_component::metrics(metric_writer& out) const {
  if (!engine_) {
    return;
  }
  out.gauge("clusterws_libvirt_connections", "Hypervisor connections open now",
            static_cast<double>(engine_->connections()));
  write_runs(out, "libvirt", "libvirt engine (rpower, rinv of mgt=kvm)", engine_->meter());
}

// -- probe -------------------------------------------------------------------------

probe_component::probe_component(const base::settings& s) : nodestat_(api::nodestat_settings(s)) {
  // nop
}

void probe_component::start() {
  engine_ = std::make_shared<probe::prober>();
}

void probe_component::stop() {
  engine_.reset();
}

void probe_component::fill(api::drivers& d) const {
  d.probe = engine_;
  d.nodestat = nodestat_;
}

void probe_component::metrics(metric_writer& out) const {
  if (!engine_) {
    return;
  }
  write_runs(out, "probe", "port prober (nodestat)", engine_->meter());
}

std::shared_ptr<api::drivers> transports::drivers() const {
  auto d = std::make_shared<api::drivers>();
  ssh.fill(*d);
  ipmi.fill(*d);
  virt.fill(*d);
  probe.fill(*d);
  return d;
}

} // namespace cws::daemon
