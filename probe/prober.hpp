#pragma once

// TCP port probes of many nodes at once (nodestat): non-blocking connects multiplexed on one
// epoll thread, every node bounded by its deadline, at most `fanout` nodes at once. No raw
// sockets, no thread or process per node: a node that never answers costs its deadline and
// nothing else.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/run_meter.hpp"

namespace cws::probe {

/// What a TCP connect to one port of a node found.
enum class port_state : uint8_t {
  silent,      ///< no answer before the node's deadline (SYNs dropped, or cancelled)
  open,        ///< the connection was accepted
  closed,      ///< refused (RST): the host is up, nothing listens there
  unreachable, ///< the network says the host cannot be reached (ICMP error, no ARP answer)
};

/// One node to probe.
struct target {
  /// The node's name: looked up with the system resolver when `address` is empty.
  std::string node;
  /// IPv4 or IPv6 address (or a host name) to connect to.
  std::string address;
  /// Ports probed, all at once; results come back in this order. At most `max_ports`.
  std::vector<uint16_t> ports;
  /// Index in `ports` of a port that, once connected, is sent `query`; its answer (until the
  /// peer closes, at most `answer_max` bytes, or the deadline) is kept. npos: none.
  size_t query_index = static_cast<size_t>(-1);
  std::string query;
};

/// The most ports one target may list.
constexpr size_t max_ports = 64;

/// How one node's probe ended.
struct outcome {
  /// One state per port of the target, in its order.
  std::vector<port_state> ports;
  /// What the query port answered (empty if nothing).
  std::string answer;
  /// Empty when the ports were probed; else a base::node_errc spelling: `resolve` (the name
  /// did not resolve), `resources` (no socket could be made: file or port limit) or
  /// `cancelled` (the run was cancelled, or the prober stopped).
  std::string error;
  /// The error in words.
  std::string message;

  /// True if any port answered (open or closed): the host is up.
  bool alive() const;
};

/// Prober settings. Every limit is explicit.
struct prober_config {
  /// Most bytes kept of a query port's answer.
  size_t answer_max = 4096;
};

/// Probes nodes' TCP ports on one event-loop thread (base::event_loop); names are looked up
/// on a resolver thread of its own, so that a slow name server never stalls the loop. Every
/// target gets one outcome, then the run its `on_done`, however it ends (base::fanout_run).
class prober {
 public:
  explicit prober(prober_config cfg = {});

  /// Stops the threads; nodes still probing end with error `cancelled`.
  ~prober();

  prober(const prober&) = delete;
  prober& operator=(const prober&) = delete;

  using result_fn = std::function<void(size_t index, outcome r)>;

  /// Probes `targets`, at most `fanout` nodes at once, each for at most `timeout` from its
  /// start. Calls `on_result` for each target as it ends (every port answered, or the
  /// deadline passed), then `on_done`; both on the prober's threads, so they must be quick.
  /// @returns the run's id for `cancel` (0 for no targets: `on_done` was called already).
  uint64_t run(std::vector<target> targets, size_t fanout, std::chrono::milliseconds timeout,
               result_fn on_result, std::function<void()> on_done);

  /// Ends run `id`: nodes still probing or waiting end with error `cancelled`. Any thread; a
  /// run that has ended is left alone.
  void cancel(uint64_t id);

  /// Its runs counted (`clusterws_probe_runs_total` and the rest, docs/observability.md).
  const base::run_meter& meter() const noexcept {
    return *meter_;
  }

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
  std::shared_ptr<base::run_meter> meter_ = std::make_shared<base::run_meter>();
};

} // namespace cws::probe
