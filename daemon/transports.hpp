#pragma once

// The per-node engines as daemon components: each built from its settings, started before
// the actor system (libssh2's global init is not thread-safe), stopped after it, and measured
// (its engine's counters and its runs: base/run_meter).

#include <filesystem>
#include <memory>

#include "api/copy.hpp"
#include "api/hardware.hpp"
#include "api/nodestat.hpp"
#include "api/planner.hpp"
#include "api/shell.hpp"
#include "daemon/component.hpp"
#include "ipmi/engine.hpp"
#include "probe/prober.hpp"
#include "ssh/engine.hpp"
#include "virt/hypervisors.hpp"

namespace cws::daemon {

/// nodeshell and nodecopy: the libssh2 engine (`ssh_*`, `copy_*`).
class ssh_component : public component {
 public:
  ssh_component(const base::settings& s, const std::filesystem::path& home);
  std::string_view name() const override {
    return "ssh";
  }
  void start() override;
  void stop() override;
  void metrics(base::metric_writer& out) const override;

  /// Its part of the drivers (null before start and after stop).
  void fill(api::drivers& d) const;

 private:
  ssh::engine_config cfg_;
  api::shell_config shell_;
  api::copy_config copy_;
  std::shared_ptr<ssh::engine> engine_;
};

/// Hardware control of mgt=ipmi nodes: the RMCP+ engine (`ipmi_*`).
class ipmi_component : public component {
 public:
  explicit ipmi_component(const base::settings& s);
  std::string_view name() const override {
    return "ipmi";
  }
  void start() override;
  void stop() override;
  void metrics(base::metric_writer& out) const override;
  void fill(api::drivers& d) const;

 private:
  ipmi::engine_config cfg_;
  api::hardware_config hardware_;
  std::shared_ptr<ipmi::engine> engine_;
};

/// Power control of mgt=kvm nodes: libvirt's workers and connections (`kvm_*`).
class libvirt_component : public component {
 public:
  explicit libvirt_component(const base::settings& s);
  std::string_view name() const override {
    return "libvirt";
  }
  void start() override;
  void stop() override;
  void metrics(base::metric_writer& out) const override;
  void fill(api::drivers& d) const;

 private:
  virt::hypervisor_config cfg_;
  std::shared_ptr<virt::hypervisors> engine_;
};

/// nodestat: the TCP port prober (`nodestat_*`).
class probe_component : public component {
 public:
  explicit probe_component(const base::settings& s);
  std::string_view name() const override {
    return "probe";
  }
  void start() override;
  void stop() override;
  void metrics(base::metric_writer& out) const override;
  void fill(api::drivers& d) const;

 private:
  api::nodestat_config nodestat_;
  std::shared_ptr<probe::prober> engine_;
};

/// The four engines, for the components that bind operations to them.
struct transports {
  const ssh_component& ssh;
  const ipmi_component& ipmi;
  const libvirt_component& virt;
  const probe_component& probe;

  /// The drivers of the running engines.
  std::shared_ptr<api::drivers> drivers() const;
};

} // namespace cws::daemon
