#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace cws::http {

/// The connections a stop must end actively (WebSocket sessions: each sends its close
/// frame), as opposed to requests, which the stop's drain waits for. Any thread.
class stop_list {
 public:
  /// `on_stop` runs once when the stop begins (on the stopping thread: it posts its work);
  /// at once if it began already. The id is for remove().
  uint64_t add(std::function<void()> on_stop) {
    std::unique_lock<std::mutex> guard{mtx_};
    if (stopped_) {
      guard.unlock();
      on_stop();
      return 0;
    }
    entries_.emplace(++next_, std::move(on_stop));
    return next_;
  }

  void remove(uint64_t id) {
    std::lock_guard<std::mutex> guard{mtx_};
    entries_.erase(id);
  }

  /// Runs every `on_stop` added, and any added later at once.
  void stop_all() {
    std::map<uint64_t, std::function<void()>> all;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      stopped_ = true;
      all.swap(entries_);
    }
    for (auto& [id, fn] : all) {
      fn();
    }
  }

 private:
  std::mutex mtx_;
  std::map<uint64_t, std::function<void()>> entries_;
  uint64_t next_ = 0;
  bool stopped_ = false;
};

} // namespace cws::http
