#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "actors/atoms.hpp"
#include "actors/console_actor.hpp"
#include "actors/console_bridge.hpp"
#include "actors/events_actor.hpp"
#include "actors/executor_actor.hpp"
#include "actors/jobs_actor.hpp"
#include "actors/policy_actor.hpp"
#include "actors/store_actor.hpp"

namespace cws::actors {

/// What the change feed tells a group of streams (the event streams of one io thread): one
/// subscriber of the feed for all of them, so that each change set is one message for the
/// group. Each is called on an actor thread, in the order the feed sent them (post them on
/// in that order).
struct event_handlers {
  /// A change set of stream `stream`'s backlog, or (stream 0) for every stream that joined.
  std::function<void(change_set_ptr, uint64_t stream)> on_changes;
  /// Stream `stream` (0: every stream that joined) missed change sets; it goes on after
  /// number `seq`.
  std::function<void(uint64_t seq, uint64_t stream)> on_reset;
  /// Stream `stream` has its backlog: what comes for every stream is its too from now on.
  std::function<void(uint64_t stream)> on_joined;
  /// A job or power event, for every stream that joined.
  std::function<void(activity_ptr)> on_activity;
};

/// A group's subscription to the change feed: it ends when this is destroyed, or when the
/// feed ends.
class event_subscription {
 public:
  event_subscription(caf::actor bridge, events_actor events)
      : bridge_(std::move(bridge)), events_(std::move(events)) {
    // nop
  }
  ~event_subscription();
  event_subscription(const event_subscription&) = delete;
  event_subscription& operator=(const event_subscription&) = delete;

  /// Stream `stream` (not 0, unique in the group) joins after number `after` (`from_now`:
  /// new changes only): its backlog, or a reset when the log no longer holds it, then
  /// `on_joined`. A stream leaves on the group's side (nothing more is sent for it).
  void join(uint64_t stream, uint64_t after) const;

 private:
  caf::actor bridge_;
  events_actor events_;
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
  /// With `console`, the console calls (api::is_console_call) go to the console server.
  dispatcher(caf::actor_system& sys, store_actor store, policy_actor policy,
             executor_actor executor, size_t count = 2, events_actor events = {},
             jobs_actor jobs = {}, console_actor console = {});

  /// Authorizes `call` with the policy actor, then runs it on the store, or on the fan-out
  /// executor. Calls `done` exactly once, on an actor thread: the caller posts it to its own
  /// executor. Never blocks the calling thread; the call is shared, never copied.
  void submit(api::api_call_ptr call, done_fn done) const;

  /// Reads the next page (up to `count` objects) of a large listing a call answered with
  /// `pages`, on the store's readers; `done` gets the page as the result's `objects` (none:
  /// the listing is over), on an actor thread.
  void next_page(api::object_pages_ptr pages, size_t count, done_fn done) const;

  /// Subscribes a group of streams to the change feed (each joins with `join`); null when
  /// the service has no feed. Authorize first: the feed holds every change.
  std::unique_ptr<event_subscription> subscribe(event_handlers h) const;

  /// Attaches to a node's console (actors/console_bridge.hpp); null when the service has no
  /// console server. Authorize first (policy command `rcons`).
  std::unique_ptr<console_attachment> attach_console(console_attach req, console_handlers h) const;
  /// Stops the dispatchers.
  void shutdown() const;

 private:
  caf::actor_system& sys_;
  std::vector<caf::actor> actors_;
  store_actor store_;
  events_actor events_;
  console_actor console_;
  mutable std::atomic<size_t> next_{0};
};

} // namespace cws::actors
