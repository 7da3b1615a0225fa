#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "actors/atoms.hpp"
#include "actors/events_actor.hpp"
#include "actors/executor_actor.hpp"
#include "actors/jobs_actor.hpp"
#include "actors/policy_actor.hpp"
#include "actors/store_actor.hpp"

namespace cws::actors {

/// What a subscriber of the change feed is told, each on an actor thread (post it on).
struct event_handlers {
  std::function<void(change_set_ptr)> on_changes;
  /// It missed change sets; the stream goes on after number `seq`.
  std::function<void(uint64_t seq)> on_reset;
  /// A job or power event (none: not wanted).
  std::function<void(activity_ptr)> on_activity;
  /// Every `heartbeat` while nothing else comes: keeps proxies from closing an idle stream,
  /// and finds a client that is gone.
  std::function<void()> on_heartbeat;
  std::chrono::milliseconds heartbeat{15000};
};

/// A subscription to the change feed: it ends when this is destroyed, or when the feed ends.
class event_subscription {
 public:
  explicit event_subscription(caf::actor bridge) : bridge_(std::move(bridge)) {
    // nop
  }
  ~event_subscription();
  event_subscription(const event_subscription&) = delete;
  event_subscription& operator=(const event_subscription&) = delete;

 private:
  caf::actor bridge_;
};

/// The entry of the actor system, as the HTTP layer sees it: a pool of long-lived dispatcher
/// actors that carry each call through policy, then to the store or the fan-out executor.
class dispatcher {
 public:
  /// Spawns `count` dispatchers (no actor is spawned per request). `executor` may be null:
  /// fan-out calls are then refused as unavailable. With `jobs`, fan-out calls run as jobs
  /// (on the executor the jobs actor was given) and job calls are answered.
  /// Calls carry no actor-side timeouts (a timer per hop would cost a timer operation on
  /// every request): the caller bounds the whole call (the HTTP session's call_timeout).
  dispatcher(caf::actor_system& sys, store_actor store, policy_actor policy,
             executor_actor executor, size_t count = 2, events_actor events = {},
             jobs_actor jobs = {});

  /// Authorizes `call` with the policy actor, then runs it on the store, or on the fan-out
  /// executor. Calls `done` exactly once, on an actor thread: the caller posts it to its own
  /// executor. Never blocks the calling thread; the call is shared, never copied.
  void submit(api::api_call_ptr call, done_fn done) const;

  /// Reads the next page (up to `count` objects) of a large listing a call answered with
  /// `pages`, on the store's readers; `done` gets the page as the result's `objects` (none:
  /// the listing is over), on an actor thread.
  void next_page(api::object_pages_ptr pages, size_t count, done_fn done) const;

  /// Subscribes to the change feed after number `after` (`from_now`: new changes only);
  /// null when the service has no feed. Authorize first: the feed holds every change.
  std::unique_ptr<event_subscription> subscribe(uint64_t after, event_handlers h) const;

  /// Stops the dispatchers.
  void shutdown() const;

 private:
  caf::actor_system& sys_;
  std::vector<caf::actor> actors_;
  store_actor store_;
  events_actor events_;
  mutable std::atomic<size_t> next_{0};
};

} // namespace cws::actors
