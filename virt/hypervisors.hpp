#pragma once

// Power control of virtual machines (mgt=kvm) through libvirt on each node's vmhost.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/node_result.hpp"
#include "base/run_meter.hpp"

namespace cws::virt {

/// What rpower does to a virtual machine (`inventory`: rinv, virt/inventory.hpp).
enum class power_action { on, off, softoff, reset, boot, state, inventory };

/// Parses rpower's action words: on, off, softoff, reset, boot, stat, state.
std::optional<power_action> parse_power_action(std::string_view word);

/// The libvirt URI of a `vmhost` value: a value holding `://` is a URI already (`test:///...`,
/// `qemu+tls://...`); a host name becomes `qemu+ssh://root@<host>/system`, as xCAT's kvm
/// plugin builds it.
std::string vmhost_uri(std::string_view vmhost);

/// One node's request: its domain on its hypervisor.
struct vm_job {
  std::string node;
  /// The hypervisor's libvirt URI (vmhost_uri).
  std::string uri;
  /// The domain's name.
  std::string domain;
  power_action action = power_action::state;
};

/// Every limit is explicit (docs/hardware.md).
struct hypervisor_config {
  /// Workers making libvirt calls (they block): the most nodes worked on at once.
  size_t threads = 8;
  /// A node's deadline: connecting to its hypervisor and the call together.
  std::chrono::milliseconds timeout{30000};
  /// How long an unused hypervisor connection stays open.
  std::chrono::milliseconds idle{300000};
  /// How long stopping waits for calls in flight. A worker still blocked in libvirt after it
  /// (a hypervisor that stopped answering) is left to end with the process, so a stuck call
  /// never holds up the daemon's stop.
  std::chrono::milliseconds stop_wait{2000};
};

/// Runs power requests on many virtual machines through libvirt. Connections are kept per
/// hypervisor URI and shared by every request (libvirt connections are thread-safe; the test
/// driver keeps its state in the connection), closed after `idle` unused or when found dead.
/// libvirt's calls block, so a fixed set of worker threads makes them; a node whose deadline
/// passes gets error `timeout` at once, while its worker finishes the call and drops the
/// answer.
class hypervisors {
 public:
  explicit hypervisors(hypervisor_config cfg);

  /// Waits up to `stop_wait` for the workers' calls in flight; running jobs end with error
  /// `disconnected`.
  ~hypervisors();

  hypervisors(const hypervisors&) = delete;
  hypervisors& operator=(const hypervisors&) = delete;

  using result_fn = std::function<void(size_t index, base::node_result r)>;

  /// Runs `jobs`, at most `fanout` at once. Calls `on_result` once per job as it ends, with
  /// the state text in `out` ("on", "off", ...) or an error, then `on_done`; on a worker
  /// thread, so both must be quick.
  /// @returns the run's id for `cancel` (0 for no jobs: `on_done` was called already).
  uint64_t run(std::vector<vm_job> jobs, size_t fanout, result_fn on_result,
               std::function<void()> on_done);

  /// Ends run `id`: waiting jobs never start and get error `cancelled`; a call already made
  /// cannot be taken back and reports as it ends. Any thread.
  void cancel(uint64_t id);

  /// Hypervisor connections open now.
  size_t connections() const;

  /// Its runs counted (`clusterws_libvirt_runs_total` and the rest, docs/observability.md).
  const base::run_meter& meter() const noexcept {
    return *meter_;
  }

  struct impl;

 private:
  std::shared_ptr<impl> impl_;
  std::shared_ptr<base::run_meter> meter_ = std::make_shared<base::run_meter>();
};

} // namespace cws::virt
