#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ssh/engine.hpp"

namespace cws::ssh {

/// Fills in the address of every job that has none, looking each node name up once with
/// the system resolver. A name that does not resolve keeps its empty address (the job then
/// fails with error `resolve`). Blocks: getaddrinfo may wait for a name server.
void resolve_addresses(std::vector<job>& jobs);

/// A thread of its own for `resolve_addresses`, so that a slow name server never stalls the
/// engine's event loop. Runs are resolved one at a time, in the order they were added.
class resolver {
 public:
  using done_fn = std::function<void()>;

  resolver();

  /// Stops (see `stop`).
  ~resolver();

  resolver(const resolver&) = delete;
  resolver& operator=(const resolver&) = delete;

  /// Resolves `jobs` on the resolver's thread, then calls `done` there. `jobs` must live
  /// until then: let `done` own what holds them.
  void add(std::vector<job>& jobs, done_fn done);

  /// Ends the thread after the run it is resolving (whose `done` is still called); runs still
  /// queued are dropped without a call. Idempotent.
  void stop();

 private:
  struct work {
    std::vector<job>* jobs;
    done_fn done;
  };

  void loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<work> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

} // namespace cws::ssh
