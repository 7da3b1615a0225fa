#include "base/task_thread.hpp"

namespace cws::base {

task_thread::task_thread() : thread_([this] { loop(); }) {
  // nop
}

task_thread::~task_thread() {
  stop();
}

void task_thread::post(task t) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    if (stopping_) {
      return;
    }
    queue_.push_back(std::move(t));
  }
  cv_.notify_one();
}

void task_thread::stop() {
  {
    std::lock_guard<std::mutex> guard{mu_};
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
}

void task_thread::loop() {
  for (;;) {
    task t;
    {
      std::unique_lock<std::mutex> lock{mu_};
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) {
        return; // stopping, and everything posted has run
      }
      t = std::move(queue_.front());
      queue_.pop_front();
    }
    t();
  }
}

} // namespace cws::base
