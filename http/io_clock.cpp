#include "http/io_clock.hpp"

#include <utility>

namespace cws::http {

/// One io thread's timer.
struct io_clock::timer {
  timer(io_clock& owner, net::io_context& ctx) : owner(owner), wait(ctx.get_executor()) {
  }

  io_clock& owner;
  steady_timer wait;
  /// When it fires next (max: not armed).
  time_point at = time_point::max();
};

thread_local io_clock::timer* io_clock::current_ = nullptr;

io_clock::io_clock(const std::vector<net::io_context*>& contexts) {
  for (auto* ctx : contexts) {
    timers_.push_back(std::make_unique<timer>(*this, *ctx));
  }
}

io_clock::~io_clock() {
  stop();
}

void io_clock::bind_thread(size_t i) {
  current_ = timers_.at(i).get();
}

void io_clock::unbind_thread() {
  current_ = nullptr;
}

void io_clock::stop() {
  cancel_all();
  std::lock_guard<std::mutex> guard{mu_};
  timers_.clear();
}

void io_clock::arm(time_point t) {
  if (current_ != nullptr && &current_->owner == this) {
    arm(*current_, t);
    return;
  }
  std::lock_guard<std::mutex> guard{mu_};
  if (!timers_.empty()) {
    auto* tm = timers_.front().get();
    net::post(tm->wait.get_executor(), [tm, t] { arm(*tm, t); });
  }
}

void io_clock::arm(timer& tm, time_point t) {
  if (t >= tm.at) {
    return;
  }
  tm.at = t;
  tm.wait.expires_at(t); // (a wait pending for later is cancelled)
  tm.wait.async_wait([&tm](const boost::system::error_code& ec) {
    if (!ec) {
      tm.owner.fire(tm);
    }
  });
}

void io_clock::fire(timer& tm) {
  tm.at = time_point::max();
  std::vector<std::unique_ptr<delayed_event>> due;
  auto next = time_point::max();
  {
    std::lock_guard<std::mutex> guard{mu_};
    auto now = this->now();
    for (auto i = schedule_.begin(); i != schedule_.end() && i->first <= now;) {
      if (i->second->backlink != actor_lookup_.end()) {
        actor_lookup_.erase(i->second->backlink);
      }
      due.push_back(std::move(i->second));
      i = schedule_.erase(i);
    }
    if (!schedule_.empty()) {
      next = schedule_.begin()->first;
    }
  }
  // shipped outside the lock: a receiver may set timeouts of its own meanwhile
  for (auto& e : due) {
    ship(*e);
  }
  if (next != time_point::max()) {
    arm(tm, next); // (the events set from other threads are armed there too)
  }
}

void io_clock::set_ordinary_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                                    uint64_t id) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    simple_actor_clock::set_ordinary_timeout(t, self, type, id);
  }
  arm(t);
}

void io_clock::set_multi_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                                 uint64_t id) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    simple_actor_clock::set_multi_timeout(t, self, type, id);
  }
  arm(t);
}

void io_clock::set_request_timeout(time_point t, caf::abstract_actor* self, caf::message_id id) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    simple_actor_clock::set_request_timeout(t, self, id);
  }
  arm(t);
}

void io_clock::cancel_ordinary_timeout(caf::abstract_actor* self, caf::atom_value type) {
  std::lock_guard<std::mutex> guard{mu_};
  simple_actor_clock::cancel_ordinary_timeout(self, type);
}

void io_clock::cancel_request_timeout(caf::abstract_actor* self, caf::message_id id) {
  std::lock_guard<std::mutex> guard{mu_};
  simple_actor_clock::cancel_request_timeout(self, id);
}

void io_clock::cancel_timeouts(caf::abstract_actor* self) {
  std::lock_guard<std::mutex> guard{mu_};
  simple_actor_clock::cancel_timeouts(self);
}

void io_clock::schedule_message(time_point t, caf::strong_actor_ptr receiver,
                                caf::mailbox_element_ptr content) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    simple_actor_clock::schedule_message(t, std::move(receiver), std::move(content));
  }
  arm(t);
}

void io_clock::schedule_message(time_point t, caf::group target, caf::strong_actor_ptr sender,
                                caf::message content) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    simple_actor_clock::schedule_message(t, std::move(target), std::move(sender),
                                         std::move(content));
  }
  arm(t);
}

void io_clock::cancel_all() {
  schedule_map dropped; // released outside the lock: the last reference to an actor may go
  std::lock_guard<std::mutex> guard{mu_};
  actor_lookup_.clear();
  dropped.swap(schedule_);
}

} // namespace cws::http
