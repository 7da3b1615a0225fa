#include "api/call.hpp"

namespace cws::api {

bool is_write(operation op) {
  switch (op) {
    case operation::make:
    case operation::change:
    case operation::remove:
    case operation::rename:
    case operation::table_set_nodes:
    case operation::table_set_rows:
    case operation::table_delete_rows:
    case operation::make_networks:
    case operation::token_create:
    case operation::token_revoke: return true;
    default: return false;
  }
}

bool is_fan_out(operation op) {
  return op == operation::nodeshell || op == operation::nodecopy || op == operation::power
         || op == operation::nextboot || op == operation::nodestat || op == operation::eventlog
         || op == operation::beacon || op == operation::vitals || op == operation::inventory;
}

bool is_job_call(operation op) {
  return op == operation::job_list || op == operation::job_show || op == operation::job_cancel;
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
