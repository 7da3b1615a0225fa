#pragma once

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <atomic>
#include <chrono>
#include <limits>
#include <memory>

#include "actors/atoms.hpp"
#include "api/job.hpp"
#include "store/database.hpp"

namespace cws::actors {

/// What the store's writer tells the change feed about durability without a message per
/// commit: the first generation of its commits that may not be durable yet (0: all are).
/// The feed publishes nothing past it, so a change is never announced before it would
/// survive a crash (the writer may defer the flush of a commit's meta page).
class durable_mark {
 public:
  /// The writer is about to commit generation `first` or later (it read the generation
  /// before its transaction began: another process may commit in between, so this is a
  /// lower bound, and holding back from it is safe).
  void hold(uint64_t first) {
    auto held = from_.load();
    if (held == 0 || first < held) {
      from_.store(first);
    }
  }

  /// Only generation `first` and later may still be unflushed (what came before was
  /// flushed by the commit of `first`).
  void hold_exactly(uint64_t first) {
    from_.store(first);
  }

  /// Every commit made so far is durable.
  void release() {
    from_.store(0);
  }

  /// The newest generation that may be published when the database is at `generation`.
  uint64_t bound(uint64_t generation) const {
    auto held = from_.load();
    return held == 0 ? generation : std::min(generation, held - 1);
  }

 private:
  std::atomic<uint64_t> from_{0};
};

/// One change set as subscribers receive it: shared, never copied per subscriber.
using change_set_ptr = std::shared_ptr<const store::change_set>;

/// Something that happened outside the store, published live beside the change sets: a job
/// was created, made progress or ended (`job`), a node's power state changed (`power`), or
/// someone attached to or detached from a node's console (`console`).
/// Not in the change log: such events have no sequence number and are not replayed.
struct activity {
  enum class kind : uint8_t { job, power, servicenode, console };
  kind type = kind::job;
  /// job: created, progress, ended.
  std::string what;
  /// job: the job (no nodes).
  api::job_info job;
  /// power: the node and its state (on, off). servicenode: the service node's name and, when
  /// it left, why (`what`: joined, left). console: the node, `what` (attached, detached),
  /// `state` the mode (rw, ro), `user` who.
  std::string node;
  std::string state;
  std::string user;
};
using activity_ptr = std::shared_ptr<const activity>;

/// What a subscriber of the change feed receives: each change set, and (reset_atom, n) when
/// it missed some (n: the last number published; read the state again, go on from there),
/// and each activity as it is published.
using change_subscriber
  = caf::typed_actor<caf::reacts_to<change_set_ptr>, caf::reacts_to<reset_atom, uint64_t>,
                     caf::reacts_to<activity_ptr>>;

/// A subscriber that carries many streams (the event streams of one io thread, http/
/// event_hub.hpp), so that each change set is one message for all of them. Besides what
/// every subscriber receives (meant for each stream that joined), the number `stream` of one
/// stream: a set of its backlog, (reset_atom, n, stream) when its log is gone, and
/// (join_atom, stream) once its backlog is sent: what follows for every stream is its too
/// (what came before was its backlog's, or older than what it asked for).
using stream_subscriber = change_subscriber::extend<caf::reacts_to<change_set_ptr, uint64_t>,
                                                    caf::reacts_to<reset_atom, uint64_t, uint64_t>,
                                                    caf::reacts_to<join_atom, uint64_t>>;

/// `subscribe_atom`'s `after` for "from the next change on".
constexpr uint64_t from_now = std::numeric_limits<uint64_t>::max();

/// The change feed: publishes each change set of the store's log (store::read_txn::
/// changes_after) once it is durable, in commit order, to every subscriber, whichever
/// process committed it (the tools write the same database).
using events_actor = caf::typed_actor<
  // Subscribes `who` to the change sets after number `after` (`from_now`: the next one on):
  // the ones already published first, then each new one; when the log no longer holds every
  // set after `after`, a reset first. Replies the last published number. `who` is dropped
  // when it ends.
  caf::replies_to<subscribe_atom, change_subscriber, uint64_t>::with<uint64_t>,
  // Stream `stream` of `who` joins after number `after` (`from_now`: the next one on): its
  // backlog (or a reset) to that stream, then (join_atom, stream). `who` is subscribed once,
  // whatever the number of its streams; a stream leaves on the subscriber's side.
  caf::reacts_to<subscribe_atom, stream_subscriber, uint64_t, uint64_t>,
  // Stops sending to `who`.
  caf::reacts_to<unsubscribe_atom, change_subscriber>,
  // The store's writer made commits durable: publish what the log holds now.
  caf::reacts_to<durable_atom>,
  // Internal: look for commits of other processes every poll interval.
  caf::reacts_to<tick_atom>,
  // Sends an activity (jobs, power) to every subscriber now.
  caf::reacts_to<publish_atom, activity_ptr>>;

/// How the change feed runs.
struct events_config {
  /// How often the log is read for commits of other processes (the CLI tools); the
  /// daemon's own commits are published as soon as they are durable.
  std::chrono::milliseconds poll{500};
  /// Change sets read from the log in one turn; more wait for the next message, so one
  /// large burst does not hold an io thread.
  size_t sets_per_turn = 256;
  /// Shared with the store's writer (store_config::durable).
  std::shared_ptr<durable_mark> durable = std::make_shared<durable_mark>();
};

/// Spawns the change feed over `db`, publishing from the log's current end.
events_actor spawn_events(caf::actor_system& sys, std::shared_ptr<store::database> db,
                          events_config cfg);

} // namespace cws::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::change_set_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::activity_ptr)
