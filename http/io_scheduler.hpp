#pragma once

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "http/beast.hpp"
#include "http/io_clock.hpp"

namespace cws::http {

/// The daemon's actor scheduler: the io threads are CAF's workers. Each io thread runs one
/// io_context, and an actor that becomes ready runs on the io thread that sent it the message
/// (a message from any other thread goes to the next io thread in turn). So a request read
/// by a session goes through dispatcher, policy and store and comes back to the session on
/// that one thread: no thread is woken per hop, as a separate pool of workers would need
/// twice per request (docs/architecture.md, "Threads").
///
/// Actors still never block (the rule for every scheduled actor); blocking work stays on
/// detached actors and the engines' own threads. An actor gives its thread back after
/// `max_throughput` messages so the sessions on it are served in between.
class io_scheduler : public caf::scheduler::abstract_coordinator {
 public:
  /// Makes `threads` io threads the scheduler of every actor system built from `cfg`.
  static void install(caf::actor_system_config& cfg, size_t threads);

  /// The io scheduler of `sys`, or nullptr when `sys` runs another scheduler.
  static io_scheduler* of(caf::actor_system& sys);

  io_scheduler(caf::actor_system& sys, size_t threads);
  ~io_scheduler() override;

  /// One io_context per io thread, each run by exactly that thread, from the system's start
  /// until its end (the HTTP server serves its connections on them).
  const std::vector<net::io_context*>& contexts() const {
    return contexts_;
  }

  void enqueue(caf::resumable* job) override;
  io_clock& clock() noexcept override {
    return *clock_;
  }

 protected:
  void init(caf::actor_system_config& cfg) override;
  void start() override;
  /// Runs after every actor ended: stops the io threads; what is still queued on them
  /// (connections the server left idle) is destroyed with the contexts.
  void stop() override;

 private:
  class unit;
  struct job_handler;

  /// Queues `job` on `u`'s io thread.
  void post(unit& u, caf::resumable* job);
  void resume(unit& u, caf::resumable* job);

  /// The io thread's own unit (null on every other thread): where messages sent from session
  /// code running on it go.
  static thread_local unit* current_unit_;

  std::vector<std::unique_ptr<unit>> units_;
  std::vector<net::io_context*> contexts_;
  std::vector<std::thread> threads_;
  /// Timers on the io threads (declared after the contexts: it ends first).
  std::unique_ptr<io_clock> clock_;
  /// Set once the io threads stopped: a job queued after that is cleaned up at once.
  std::atomic<bool> stopped_{false};
};

} // namespace cws::http
