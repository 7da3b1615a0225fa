#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace cws::base {

/// A thread of its own that runs posted tasks one at a time, in the order they came: for
/// work that may block (name lookups through getaddrinfo wait for name servers) and so must
/// never run on an event loop or an actor's thread.
class task_thread {
 public:
  using task = std::function<void()>;

  task_thread();

  /// Stops (see `stop`).
  ~task_thread();

  task_thread(const task_thread&) = delete;
  task_thread& operator=(const task_thread&) = delete;

  /// Runs `t` on the thread after the tasks posted before it. Any thread. A task posted after
  /// `stop` began is not run.
  void post(task t);

  /// Runs every task posted so far, then ends the thread. Idempotent; not from a task.
  void stop();

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<task> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace cws::base
