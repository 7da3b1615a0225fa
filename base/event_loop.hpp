#pragma once

// One epoll thread for an engine's non-blocking work (Envoy's Event::Dispatcher, cut down):
// tasks posted from any thread, file descriptors watched under a key, deadlines under a key.
// Every handler runs on the loop's thread, so an engine's state needs no lock there.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/deadlines.hpp"

namespace cws::base {

class event_loop {
 public:
  using clock = std::chrono::steady_clock;
  using task = std::function<void()>;

  /// What the loop calls, all on its thread. Any of them may be empty.
  struct handlers {
    /// The fd watched under `key` is ready (`events`: EPOLLIN, EPOLLOUT, EPOLLERR, ...).
    std::function<void(uint64_t key, uint32_t events)> ready;
    /// The deadline set under `key` has passed (it is cleared).
    std::function<void(uint64_t key)> deadline;
    /// After each turn (events, posted tasks, deadlines): housekeeping. @returns the latest
    /// time the loop may sleep until besides the deadlines (e.g. an idle pool's next expiry).
    std::function<std::optional<clock::time_point>()> turn;
    /// Once, when the loop stops, after every task posted before: the engine ends what runs.
    std::function<void()> stopped;
  };

  /// Starts the thread. @throws std::runtime_error if epoll or the eventfd cannot be made.
  explicit event_loop(handlers h);

  /// Stops (see `stop`).
  ~event_loop();

  event_loop(const event_loop&) = delete;
  event_loop& operator=(const event_loop&) = delete;

  /// Runs `t` on the loop's thread, after the tasks posted before it. Any thread; from the
  /// loop's own thread it costs no system call. @returns false once the loop has ended:
  /// `t` is dropped, not run.
  bool post(task t);

  /// Runs the tasks posted so far, then `handlers::stopped`, then ends the thread; posts
  /// made meanwhile (from the loop) run before `stopped`. Idempotent; not from the loop.
  void stop();

  /// True on the loop's thread.
  bool in_loop() const noexcept {
    return std::this_thread::get_id() == loop_id_.load();
  }

  // -- the loop's thread only -----------------------------------------------------------

  /// Watches `fd` for `events` (EPOLLIN, EPOLLOUT), reported under `key`; a second call
  /// changes what is watched. `key` may be any value but `~0`.
  void watch(int fd, uint32_t events, uint64_t key);

  /// Stops watching `fd` (closing it does too).
  void unwatch(int fd);

  /// Sets the deadline of `key`, replacing the one it had.
  void set_deadline(uint64_t key, clock::time_point when) {
    timers_.set(key, when);
  }

  /// Removes the deadline of `key`, if it has one.
  void clear_deadline(uint64_t key) {
    timers_.clear(key);
  }

  /// Deadlines set.
  size_t deadlines_set() const noexcept {
    return timers_.size();
  }

 private:
  void loop();
  /// Runs the posted tasks until none is left. @returns true if the loop is stopping.
  bool run_posted();
  void wake();

  handlers h_;
  int epfd_ = -1;
  int evfd_ = -1;
  deadlines timers_;

  std::mutex mu_;
  std::vector<task> posted_; // under mu_
  bool stopping_ = false;    // under mu_
  bool ended_ = false;       // under mu_
  std::atomic<std::thread::id> loop_id_{};
  std::thread thread_;
};

} // namespace cws::base
