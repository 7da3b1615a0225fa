#include "api/call.hpp"

namespace cws::api {

bool is_job_call(operation op) {
  return op == operation::job_list || op == operation::job_show || op == operation::job_cancel;
}

bool is_console_call(operation op) {
  return op == operation::console_log || op == operation::conserver;
}

void call_cancel::on_cancel(std::function<void()> hook) {
  std::unique_lock lock{mu_};
  if (!cancelled_) {
    hook_ = std::move(hook);
    return;
  }
  lock.unlock();
  if (hook) {
    hook(); // cancelled before the work started
  }
}

void call_cancel::cancel(std::string why) {
  std::function<void()> hook;
  {
    std::lock_guard lock{mu_};
    if (cancelled_) {
      return;
    }
    cancelled_ = true;
    why_ = std::move(why);
    hook = std::move(hook_);
  }
  if (hook) {
    hook(); // outside the lock: an engine's cancel takes locks of its own
  }
}

bool call_cancel::cancelled() const {
  std::lock_guard lock{mu_};
  return cancelled_;
}

std::string call_cancel::reason() const {
  std::lock_guard lock{mu_};
  return why_;
}

} // namespace cws::api
