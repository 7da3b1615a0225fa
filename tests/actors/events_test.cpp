// The change feed under CAF's deterministic test coordinator: what the store commits reaches
// every subscriber in commit order once it is durable; the tools' commits in another
// environment at the next look; a subscriber resumes after a number it saw, or is told
// it missed changes.

#include <gtest/gtest.h>

#include <caf/typed_event_based_actor.hpp>

#include "../store/temp_home.hpp"
#include "actors/events_actor.hpp"
#include "actors/store_actor.hpp"
#include "coordinated_system.hpp"

namespace {

using namespace cws;
using namespace cws::actors;
using store::object_type;

/// What one subscriber received.
struct received {
  std::vector<store::change_set> sets;
  std::vector<uint64_t> resets;
  std::vector<activity> activities;

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& s : sets) {
      for (const auto& c : s.changes) {
        out.push_back(c.name);
      }
    }
    return out;
  }
};

struct events_fixture : ::testing::Test, test::coordinated_system {
  /// Opens the store and the feed over a database in `o`'s mode.
  void start(store::lmdb_options o = {}) {
    db = std::make_shared<store::database>(dir.path, o);
    events_config ec;
    ec.durable = mark;
    ev = spawn_events(sys, db, ec);
    store_config sc;
    sc.detached_writer = false;
    sc.commit_wait = {};
    sc.max_batch = 1;
    sc.durable = mark;
    sc.events = ev;
    st = spawn_store(sys, db, sc);
    sched.run();
  }

  ~events_fixture() override {
    for (auto& a : subscribers) {
      self->send_exit(a, caf::exit_reason::user_shutdown);
    }
    self->send_exit(st, caf::exit_reason::user_shutdown);
    self->send_exit(ev, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// A subscriber from number `after`; what it receives lands in the result.
  std::shared_ptr<received> subscribe(uint64_t after = from_now) {
    auto r = std::make_shared<received>();
    auto sub = sys.spawn([r](change_subscriber::pointer) -> change_subscriber::behavior_type {
      return {
        [r](const change_set_ptr& s) { r->sets.push_back(*s); },
        [r](reset_atom, uint64_t n) { r->resets.push_back(n); },
        [r](const activity_ptr& a) { r->activities.push_back(*a); },
      };
    });
    subscribers.push_back(sub);
    self->send(ev, subscribe_atom::value, sub, after);
    sched.run();
    self->receive([&](uint64_t last) { last_reply = last; });
    return r;
  }

  /// Creates node `name` through the store actor, as a REST PUT does.
  void write(const std::string& name) {
    auto c = std::make_shared<api::api_call>();
    c->op = api::operation::change;
    c->type = object_type::node;
    c->target = name;
    c->changes = {{"groups", "all"}};
    api::authorization auth;
    auth.user = "root";
    api::api_call_ptr call = std::move(c);
    self->send(st, run_atom::value, call, auth, std::make_shared<done_fn>([](api::api_result) {}));
  }

  bool committed(const std::string& name) {
    return db->read().exists(object_type::node, name);
  }

  test::temp_dir dir;
  std::shared_ptr<store::database> db;
  std::shared_ptr<durable_mark> mark = std::make_shared<durable_mark>();
  events_actor ev;
  store_actor st;
  std::vector<change_subscriber> subscribers;
  uint64_t last_reply = 0;
};

TEST_F(events_fixture, every_subscriber_gets_every_commit_in_order) {
  start();
  auto a = subscribe();
  auto b = subscribe();
  for (auto name : {"n1", "n2", "n3"}) {
    write(name);
  }
  sched.run();
  EXPECT_EQ(a->names(), (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(b->names(), a->names());
  ASSERT_EQ(a->sets.size(), 3u);
  EXPECT_LT(a->sets[0].seq, a->sets[1].seq);
  EXPECT_EQ(a->sets[2].seq, db->read().generation());
  EXPECT_EQ(a->sets[0].changes[0].kind, store::change_kind::created);
  EXPECT_TRUE(a->resets.empty());
}

TEST_F(events_fixture, a_commit_is_published_only_once_it_is_durable) {
  store::lmdb_options o;
  o.defer_meta_sync = true; // the daemon's mode: the meta page is flushed later
  start(o);
  auto a = subscribe();
  write("d1");
  while (!committed("d1") && sched.try_run_once()) {
  }
  ASSERT_TRUE(committed("d1"));
  // visible in the database, not durable: the mark holds it back, and a look now (the
  // feed run before the writer's flush message) publishes nothing
  auto gen = db->read().generation();
  EXPECT_LT(mark->bound(gen), gen);
  self->send(ev, tick_atom::value);
  while (sched.prioritize(ev)) {
    sched.run_once();
  }
  EXPECT_TRUE(a->sets.empty()) << "published before it was durable";
  // the flush message comes after the commit; only then is the set published
  sched.run();
  EXPECT_EQ(a->names(), (std::vector<std::string>{"d1"}));
  EXPECT_EQ(mark->bound(db->read().generation()), db->read().generation());
}

TEST_F(events_fixture, the_mark_holds_back_what_the_writer_has_not_flushed) {
  durable_mark m;
  EXPECT_EQ(m.bound(7), 7u);
  m.hold(5);
  m.hold(6); // a later commit does not move the first unflushed one
  EXPECT_EQ(m.bound(7), 4u);
  m.hold_exactly(7);
  EXPECT_EQ(m.bound(7), 6u);
  m.release();
  EXPECT_EQ(m.bound(9), 9u);
}

TEST_F(events_fixture, commits_of_the_tools_are_published_at_the_next_look) {
  start();
  auto a = subscribe();
  {
    store::database tool{dir.path}; // clusterctl's own environment on the same files
    tool.write([](store::write_txn& t) {
      t.put(object_type::network, "net1", {{"net", "10.0.0.0"}});
    });
  }
  sched.run();
  EXPECT_TRUE(a->sets.empty()); // nobody told the feed
  sched.trigger_timeouts();
  sched.run();
  ASSERT_EQ(a->sets.size(), 1u);
  EXPECT_EQ(a->sets[0].changes[0].type, object_type::network);
  EXPECT_EQ(a->sets[0].changes[0].name, "net1");
}

TEST_F(events_fixture, a_subscriber_resumes_after_what_it_saw_or_is_told_it_missed_some) {
  start();
  auto first = subscribe();
  write("n1");
  write("n2");
  write("n3");
  sched.run();
  ASSERT_EQ(first->sets.size(), 3u);
  auto resumed = subscribe(first->sets[0].seq);
  EXPECT_EQ(last_reply, first->sets[2].seq);
  EXPECT_EQ(resumed->names(), (std::vector<std::string>{"n2", "n3"}));
  write("n4");
  sched.run();
  EXPECT_EQ(resumed->names(), (std::vector<std::string>{"n2", "n3", "n4"}));
  // the log keeps the last two commits: a resume from the first one is too old
  db->write([](store::write_txn& t) { t.set_meta(store::write_txn::changes_kept_key, "2"); });
  write("n5");
  sched.run();
  auto late = subscribe(first->sets[0].seq);
  EXPECT_TRUE(late->sets.empty());
  ASSERT_EQ(late->resets.size(), 1u);
  EXPECT_EQ(late->resets[0], last_reply);
  write("n6");
  sched.run();
  EXPECT_EQ(late->names(), (std::vector<std::string>{"n6"})); // live from then on
}

TEST_F(events_fixture, it_looks_for_the_tools_commits_only_while_someone_listens) {
  // a timer of its own would keep a feed nobody references alive: a daemon that failed to
  // start hung in the actor system's end
  start();
  EXPECT_FALSE(sched.has_pending_timeout());
  subscribe();
  EXPECT_TRUE(sched.has_pending_timeout());
  self->send_exit(subscribers.back(), caf::exit_reason::user_shutdown);
  sched.run();
  sched.trigger_timeouts(); // the last look finds nobody and sets no other
  sched.run();
  EXPECT_FALSE(sched.has_pending_timeout());
}

TEST_F(events_fixture, a_subscriber_that_ends_is_dropped_and_the_others_go_on) {
  start();
  auto a = subscribe();
  auto gone = subscribe();
  self->send_exit(subscribers.back(), caf::exit_reason::user_shutdown);
  sched.run();
  self->send(ev, unsubscribe_atom::value, subscribers.front());
  auto b = subscribe();
  write("n1");
  sched.run();
  EXPECT_TRUE(a->sets.empty()); // unsubscribed
  EXPECT_TRUE(gone->sets.empty());
  EXPECT_EQ(b->names(), (std::vector<std::string>{"n1"}));
}

TEST_F(events_fixture, a_published_activity_reaches_every_subscriber_without_a_number) {
  start();
  auto a = subscribe();
  auto b = subscribe();
  auto act = std::make_shared<activity>();
  act->type = activity::kind::power;
  act->node = "n1";
  act->state = "on";
  self->send(ev, publish_atom::value, activity_ptr{act});
  sched.run();
  ASSERT_EQ(a->activities.size(), 1u);
  ASSERT_EQ(b->activities.size(), 1u);
  EXPECT_EQ(b->activities[0].node, "n1");
  EXPECT_TRUE(a->sets.empty()) << "not a change set: no number, not in the log";
}

TEST_F(events_fixture, streams_of_one_subscriber_share_each_set_and_get_their_backlog_before_it) {
  // an io thread's hub: one subscriber of the feed for its streams
  start();
  write("n1");
  write("n2");
  sched.run();
  auto seq1 = db->read().generation() - 1;
  auto got = std::make_shared<std::vector<std::string>>(); // what the hub was sent, in order
  auto hub = sys.spawn([got](stream_subscriber::pointer) -> stream_subscriber::behavior_type {
    auto names = [](const change_set_ptr& s) {
      std::string out;
      for (const auto& c : s->changes) {
        out += c.name;
      }
      return out;
    };
    return {
      [got, names](const change_set_ptr& s) { got->push_back("all " + names(s)); },
      [got](reset_atom, uint64_t) { got->push_back("all reset"); },
      [got](const activity_ptr&) { got->push_back("all activity"); },
      [got, names](const change_set_ptr& s, uint64_t stream) {
        got->push_back(std::to_string(stream) + " " + names(s));
      },
      [got](reset_atom, uint64_t, uint64_t stream) {
        got->push_back(std::to_string(stream) + " reset");
      },
      [got](join_atom, uint64_t stream) { got->push_back(std::to_string(stream) + " joined"); },
    };
  });
  subscribers.push_back(caf::actor_cast<change_subscriber>(hub));
  self->send(ev, subscribe_atom::value, hub, from_now, uint64_t{1});
  sched.run();
  write("n3");
  sched.run();
  // stream 2 resumes after n1: its backlog (n2, n3) for it alone, then it joins
  self->send(ev, subscribe_atom::value, hub, seq1, uint64_t{2});
  sched.run();
  write("n4");
  sched.run();
  // stream 3 asks for what the log no longer holds: a reset for it alone
  db->write([](store::write_txn& t) { t.set_meta(store::write_txn::changes_kept_key, "1"); });
  write("n5");
  sched.run();
  self->send(ev, subscribe_atom::value, hub, seq1, uint64_t{3});
  sched.run();
  write("n6");
  sched.run();
  EXPECT_EQ(*got, (std::vector<std::string>{"1 joined", "all n3", "2 n2", "2 n3", "2 joined",
                                            "all n4", "all n5", "3 reset", "3 joined", "all n6"}));
}

} // namespace
