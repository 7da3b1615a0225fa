#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "http/beast.hpp"

namespace cws::daemon {

/// The daemon's side of a `Type=notify` unit (sd_notify(3)): READY=1 once it listens,
/// STOPPING=1 when a stop begins, WATCHDOG=1 while its io loop runs. Without $NOTIFY_SOCKET
/// (not started by systemd) every call does nothing.
class systemd_notifier {
 public:
  /// Sends READY=1 with a STATUS= line.
  void ready(const std::string& status);

  /// Sends STOPPING=1.
  void stopping();

  /// Sends RELOADING=1: the daemon stops and starts again in the same process (its home was
  /// replaced); the next notifier's READY=1 ends the reload.
  void reloading();

  /// When the unit sets WatchdogSec= ($WATCHDOG_USEC, sd_watchdog_enabled(3)), sends
  /// WATCHDOG=1 at half that interval from a timer on `ioc`: a stuck io loop misses its
  /// pings and systemd restarts the service.
  void start_watchdog(http::net::io_context& ioc);

 private:
  void ping();

  std::unique_ptr<http::steady_timer> timer_;
  std::chrono::microseconds interval_{0};
};

} // namespace cws::daemon
