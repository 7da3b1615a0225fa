#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/node_errc.hpp"
#include "base/node_result.hpp"
#include "base/run_meter.hpp"
#include "ipmi/rmcp.hpp"

namespace cws::ipmi {

/// What one step of a conversation with a BMC decided: the next request, or the end with
/// the node's answer (`out`, e.g. "on") or its error.
struct step {
  std::optional<request> next;
  std::string out;
  /// `none` on success; else the node's error (`ipmi`: the BMC refused the command).
  base::node_errc error = base::node_errc::none;
  std::string message;
};

/// The work on one BMC once its session is up: a short conversation of IPMI requests
/// (ipmi/chassis.hpp has power and boot device). Engine thread only.
class action {
 public:
  virtual ~action() = default;
  /// The first request.
  virtual request first() = 0;
  /// The answer to the last request: what comes next.
  virtual step next(const response& r) = 0;
};

/// Engine settings. Every limit is explicit (docs/hardware.md).
struct engine_config {
  /// How long an established BMC session stays pooled without use (BMCs end idle sessions
  /// after about 60 s).
  std::chrono::milliseconds pool_idle{20000};
  /// Most pooled sessions; the oldest are closed beyond it.
  size_t max_pooled = 4096;
  /// The most one job's whole conversation may take, from its session's set-up to its last
  /// answer (a BMC answering each request just in time cannot hold a job for an hour); the
  /// node then fails with `timeout` (ipmi_node_timeout).
  std::chrono::milliseconds node_timeout{300000};
};

/// One node's work on its BMC.
struct job {
  std::string node;
  /// The BMC's address: a numeric IPv4 or IPv6 address, or a name resolved by `run`.
  std::string address;
  uint16_t port = 623;
  std::string user;
  std::string password;
  /// Time to wait for each answer before sending again (xCAT's site.ipmitimeout).
  std::chrono::milliseconds timeout{2000};
  /// Sends of one request before the node fails with `timeout` (xCAT's site.ipmiretries).
  int retries = 3;
  /// Time after the run's start before this job begins (staged power-on: xCAT's
  /// site.syspowerinterval per site.syspowermaxnodes nodes). Its fanout slot is held meanwhile.
  std::chrono::milliseconds delay{0};
  std::shared_ptr<action> work;
};

/// Counters.
struct engine_stats {
  uint64_t sessions = 0; ///< sessions set up (RAKP exchange and privilege level)
  uint64_t reuses = 0;   ///< jobs that ran on a pooled session
  uint64_t pooled = 0;   ///< sessions in the pool now
};

/// Runs IPMI conversations with many BMCs at once over RMCP+ (UDP): every session is
/// multiplexed on one event-loop thread (base::event_loop), none has a thread or a process
/// of its own. Sessions are set up by ipmi::session_setup; established ones are pooled per
/// (address, port, user, password) and reused. Every job gets one result, then the run its
/// `on_done`, however it ends (base::fanout_run).
class engine {
 public:
  explicit engine(engine_config cfg);

  /// Closes pooled sessions and stops the loop; running and waiting jobs end with error
  /// `disconnected`.
  ~engine();

  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  using result_fn = std::function<void(size_t index, base::node_result r)>;

  /// Runs `jobs`, at most `fanout` at once. Calls `on_result` for each job as it ends, then
  /// `on_done`; both on the engine's thread, so they must be quick.
  /// @returns the run's id for `cancel` (0 for no jobs: `on_done` was called already).
  uint64_t run(std::vector<job> jobs, size_t fanout, result_fn on_result,
               std::function<void()> on_done);

  /// Ends run `id`: running and waiting jobs end with error `cancelled` (a command already
  /// sent may still take effect on the BMC). Any thread.
  void cancel(uint64_t id);

  /// The counters so far.
  engine_stats stats() const;

  /// Its runs counted (`clusterws_ipmi_runs_total` and the rest, docs/observability.md).
  const base::run_meter& meter() const noexcept {
    return *meter_;
  }

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
  std::shared_ptr<base::run_meter> meter_ = std::make_shared<base::run_meter>();
};

} // namespace cws::ipmi
