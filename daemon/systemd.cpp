#include "daemon/systemd.hpp"

#include <systemd/sd-daemon.h>

namespace cws::daemon {

void systemd_notifier::ready(const std::string& status) {
  sd_notify(0, ("READY=1\nSTATUS=" + status).c_str());
}

void systemd_notifier::stopping() {
  sd_notify(0, "STOPPING=1");
  if (timer_) {
    timer_->cancel(); // (on the timer's io thread, which outlives the notifier)
  }
}

void systemd_notifier::reloading() {
  sd_notify(0, "RELOADING=1");
  if (timer_) {
    timer_->cancel();
  }
}

void systemd_notifier::start_watchdog(http::net::io_context& ioc) {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) {
    return;
  }
  interval_ = std::chrono::microseconds(usec / 2);
  timer_ = std::make_unique<http::steady_timer>(ioc.get_executor());
  ping();
}

void systemd_notifier::ping() {
  sd_notify(0, "WATCHDOG=1");
  timer_->expires_after(interval_);
  timer_->async_wait([this](http::beast::error_code ec) {
    if (!ec) {
      ping();
    }
  });
}

} // namespace cws::daemon
