#include "actors/events_actor.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <vector>

#include "base/log_burst.hpp"

namespace cws::actors {
namespace {

struct events_state {
  std::vector<change_subscriber> subscribers;
  /// A look for the tools' commits is due; only while someone listens, so that a feed
  /// nobody references is not kept alive by its own timer.
  bool tick_scheduled = false;
  /// The number of the last change set published (or skipped past: numbers have gaps).
  uint64_t published = 0;
  static inline const char* name = "events";
};

using self_ptr = events_actor::stateful_pointer<events_state>;

/// A damaged log record is read again at every look: logged once a burst, not each time.
void unreadable(const std::exception& e) {
  static base::log_burst burst{base::log_level::error, "events: the change log cannot be read"};
  burst.note(e.what());
}

/// Hands `to` the change sets after `after` up to `until`, oldest first; false when the log
/// no longer holds all of them.
template<class To>
bool send_backlog(const store::database& db, uint64_t after, uint64_t until, To to) {
  auto txn = db.read();
  if (after < txn.changes_dropped()) {
    return false;
  }
  while (after < until) {
    auto sets = txn.changes_after(after, 1024);
    for (auto& set : sets) {
      if (set.seq > until) {
        return true;
      }
      after = set.seq;
      to(std::make_shared<const store::change_set>(std::move(set)));
    }
    if (sets.empty()) {
      break;
    }
  }
  return true;
}

/// Sends the change sets after `after` that were published already through `to`, or says
/// through `reset` that the log no longer holds them.
template<class To, class Reset>
void catch_up(self_ptr self, const store::database& db, uint64_t after, To to, Reset reset) {
  auto& st = self->state;
  if (after == from_now || after >= st.published) {
    return;
  }
  bool whole = false;
  try {
    whole = send_backlog(db, after, st.published, to);
  } catch (const std::exception& e) {
    unreadable(e);
  }
  if (!whole) {
    reset(st.published);
  }
}

/// Adds `who` to the subscribers, once, and looks for the tools' commits while any listen.
void add_subscriber(self_ptr self, const events_config& cfg, const change_subscriber& who) {
  auto& st = self->state;
  if (std::find(st.subscribers.begin(), st.subscribers.end(), who) == st.subscribers.end()) {
    self->monitor(who);
    st.subscribers.push_back(who);
  }
  if (!st.tick_scheduled) {
    st.tick_scheduled = true;
    self->delayed_send(self, cfg.poll, tick_atom::value);
  }
}

/// Publishes the durable change sets the log holds past `published`, at most a turn's worth;
/// schedules the rest for the next message.
void publish(self_ptr self, const store::database& db, const events_config& cfg) {
  auto& st = self->state;
  try {
    auto txn = db.read();
    auto until = cfg.durable->bound(txn.generation());
    if (st.subscribers.empty()) {
      st.published = until; // nobody to tell: nothing is read
      return;
    }
    if (st.published < txn.changes_dropped()) {
      // fell behind the log (a burst of commits by the tools between two looks): say so
      st.published = txn.changes_dropped();
      for (const auto& who : st.subscribers) {
        self->send(who, reset_atom::value, st.published);
      }
    }
    auto sets = txn.changes_after(st.published, cfg.sets_per_turn);
    for (auto& set : sets) {
      if (set.seq > until) {
        return;
      }
      st.published = set.seq;
      auto shared = std::make_shared<const store::change_set>(std::move(set));
      for (const auto& who : st.subscribers) {
        self->send(who, shared);
      }
    }
    if (sets.size() == cfg.sets_per_turn) {
      self->send(self, durable_atom::value); // more: after what waits in the mailbox
    } else {
      st.published = std::max(st.published, until);
    }
  } catch (const std::exception& e) {
    unreadable(e);
  }
}

events_actor::behavior_type events_impl(self_ptr self, std::shared_ptr<store::database> db,
                                        events_config cfg) {
  {
    auto txn = db->read();
    self->state.published = cfg.durable->bound(txn.generation());
  }
  self->set_down_handler([self](const caf::down_msg& down) {
    auto& subs = self->state.subscribers;
    subs.erase(
      std::remove_if(subs.begin(), subs.end(),
                     [&](const change_subscriber& a) { return a.address() == down.source; }),
      subs.end());
  });
  return {
    [=](subscribe_atom, change_subscriber& who, uint64_t after) -> uint64_t {
      publish(self, *db, cfg); // what is durable now goes to the others first
      catch_up(
        self, *db, after, [&](change_set_ptr set) { self->send(who, std::move(set)); },
        [&](uint64_t seq) { self->send(who, reset_atom::value, seq); });
      add_subscriber(self, cfg, who);
      return self->state.published;
    },
    [=](subscribe_atom, const stream_subscriber& who, uint64_t after, uint64_t stream) {
      publish(self, *db, cfg);
      catch_up(
        self, *db, after, [&](change_set_ptr set) { self->send(who, std::move(set), stream); },
        [&](uint64_t seq) { self->send(who, reset_atom::value, seq, stream); });
      self->send(who, join_atom::value, stream);
      add_subscriber(self, cfg, caf::actor_cast<change_subscriber>(who));
    },
    [=](publish_atom, const activity_ptr& a) {
      for (const auto& who : self->state.subscribers) {
        self->send(who, a);
      }
    },
    [=](unsubscribe_atom, const change_subscriber& who) {
      auto& subs = self->state.subscribers;
      subs.erase(std::remove(subs.begin(), subs.end(), who), subs.end());
      self->demonitor(who.address());
    },
    [=](durable_atom) { publish(self, *db, cfg); },
    [=](tick_atom) {
      auto& st = self->state;
      publish(self, *db, cfg);
      st.tick_scheduled = !st.subscribers.empty();
      if (st.tick_scheduled) {
        self->delayed_send(self, cfg.poll, tick_atom::value);
      }
    },
  };
}

} // namespace

events_actor spawn_events(caf::actor_system& sys, std::shared_ptr<store::database> db,
                          events_config cfg) {
  return sys.spawn(events_impl, std::move(db), std::move(cfg));
}

} // namespace cws::actors
