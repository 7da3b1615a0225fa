#pragma once

#include <caf/detail/simple_actor_clock.hpp>

#include <memory>
#include <mutex>
#include <vector>

#include "http/beast.hpp"

namespace cws::http {

/// CAF's timer service (delayed messages, timeouts) on the io threads: each io thread has one
/// timer in its own event loop, armed no later than the earliest event set from that thread,
/// and ships what is due from there. A delayed message then costs its io thread a timer
/// update, where a clock thread of its own would be woken to take it and again to ship it.
/// An event set from any other thread is armed on the first io thread (one post).
class io_clock : public caf::detail::simple_actor_clock {
 public:
  /// One timer per context; `contexts[i]` must be run by the thread that calls
  /// `bind_thread(i)`.
  explicit io_clock(const std::vector<net::io_context*>& contexts);
  ~io_clock() override;

  /// Tells the clock that the calling thread runs `contexts[i]` (before it runs it).
  void bind_thread(size_t i);

  /// Forgets the thread's binding (after it ran its context).
  static void unbind_thread();

  /// Drops every scheduled event and the timers. Call once the io threads are gone, before
  /// their contexts end.
  void stop();

  void set_ordinary_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                            uint64_t id) override;
  void set_multi_timeout(time_point t, caf::abstract_actor* self, caf::atom_value type,
                         uint64_t id) override;
  void set_request_timeout(time_point t, caf::abstract_actor* self, caf::message_id id) override;
  void cancel_ordinary_timeout(caf::abstract_actor* self, caf::atom_value type) override;
  void cancel_request_timeout(caf::abstract_actor* self, caf::message_id id) override;
  void cancel_timeouts(caf::abstract_actor* self) override;
  void schedule_message(time_point t, caf::strong_actor_ptr receiver,
                        caf::mailbox_element_ptr content) override;
  void schedule_message(time_point t, caf::group target, caf::strong_actor_ptr sender,
                        caf::message content) override;
  void cancel_all() override;

 private:
  struct timer;

  /// Makes sure a timer fires at `t` or earlier: the calling io thread's, else the first's.
  void arm(time_point t);
  /// Arms `tm` (on its own thread) for `t` unless it already fires at or before it.
  static void arm(timer& tm, time_point t);
  /// `tm` fired: ships what is due, then arms `tm` for the earliest event left.
  void fire(timer& tm);

  /// The calling io thread's timer (null on every other thread).
  static thread_local timer* current_;

  std::vector<std::unique_ptr<timer>> timers_;
  /// Guards the schedule (simple_actor_clock's maps); a timer's own state is its thread's.
  std::mutex mu_;
};

} // namespace cws::http
