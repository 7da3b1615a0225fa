// The console server (actors/console_actor.hpp) under CAF's deterministic test coordinator,
// over a fake console I/O: which consoles it holds, console_max, reconnects with backoff and
// the notes of a gap, the replay, the attach rules (one writer, read-only watchers, force),
// a slow watcher dropped, on-demand consoles, makeconservercf (and -d written to the
// definitions), attach and detach told.

#include <gtest/gtest.h>

#include <algorithm>

#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <functional>
#include <optional>

#include "actors/console_actor.hpp"
#include "coordinated_system.hpp"

namespace {

using namespace cws;
using namespace cws::actors;
using api::console_io_event;
using api::console_spec;

/// Records what the console server asks of its I/O; the test plays the BMCs.
struct fake_io : api::console_io {
  struct opened {
    uint64_t id;
    std::string node;
    bool force;
  };
  handlers h;
  std::vector<opened> opens;
  std::vector<uint64_t> closes;
  std::vector<std::pair<uint64_t, std::string>> writes;
  std::vector<std::pair<std::string, std::string>> notes;
  std::vector<std::string> forgotten;

  void start(handlers x) override {
    h = std::move(x);
  }
  void open(uint64_t id, const console_spec& spec, bool force) override {
    opens.push_back({id, spec.node, force});
  }
  void write(uint64_t id, std::string keys) override {
    writes.emplace_back(id, std::move(keys));
  }
  void send_break(uint64_t) override {
  }
  void close(uint64_t id) override {
    closes.push_back(id);
  }
  void note(const std::string& node, std::string text) override {
    notes.emplace_back(node, std::move(text));
  }
  void forget(const std::string& node) override {
    forgotten.push_back(node);
  }

  /// The last session opened for `node`.
  uint64_t id_of(const std::string& node) const {
    for (auto it = opens.rbegin(); it != opens.rend(); ++it) {
      if (it->node == node) {
        return it->id;
      }
    }
    return 0;
  }
  size_t opens_of(const std::string& node) const {
    return static_cast<size_t>(
      std::count_if(opens.begin(), opens.end(), [&](const opened& o) { return o.node == node; }));
  }
};

/// What a watcher received.
struct seen {
  std::string bytes;
  std::vector<console_notice> notices;
  std::vector<std::string> detached;
};

console_watcher::behavior_type watcher_impl(console_watcher::pointer, std::shared_ptr<seen> s) {
  return {
    [s](console_atom, const std::string&, const std::string& bytes) { s->bytes += bytes; },
    [s](notice_atom, const std::string&, const console_notice& n) { s->notices.push_back(n); },
    [s](detached_atom, const std::string&, const std::string& why) { s->detached.push_back(why); },
  };
}

console_spec spec(const std::string& node, std::string error = {}) {
  console_spec s;
  s.node = node;
  s.method = "ipmi";
  s.bmc.address = "127.0.0.1";
  s.bmc.port = 9000;
  s.bmc.user = "admin";
  s.bmc.password = "pw";
  s.error = std::move(error);
  return s;
}

struct console_fixture : ::testing::Test, test::coordinated_system {
  std::shared_ptr<fake_io> io = std::make_shared<fake_io>();
  std::shared_ptr<std::vector<console_spec>> specs = std::make_shared<std::vector<console_spec>>();
  std::vector<console_attach_event> told;
  console_config cfg;
  console_actor console;

  console_fixture() {
    cfg.io = io;
    cfg.read = [s = specs] {
      return *s;
    };
    cfg.replay_bytes = 16;
    cfg.watcher_queue_bytes = 10;
    cfg.backoff_min = std::chrono::milliseconds{100};
    cfg.backoff_max = std::chrono::milliseconds{400};
    cfg.on_attach = [this](const console_attach_event& e) {
      told.push_back(e);
    };
  }

  void start() {
    console = spawn_console(sys, cfg);
    sched.run();
  }

  ~console_fixture() override {
    caf::anon_send_exit(console, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// The BMC side: bytes or an event of console `node`'s current session.
  void output(const std::string& node, const std::string& bytes) {
    io->h.output(io->id_of(node), bytes);
    sched.run();
  }
  void event(const std::string& node, console_io_event::kind k, std::string message = {}) {
    io->h.event(io->id_of(node), {k, std::move(message), 0});
    sched.run();
  }

  std::pair<console_watcher, std::shared_ptr<seen>> watcher() {
    auto s = std::make_shared<seen>();
    return {sys.spawn(watcher_impl, s), s};
  }

  console_attach_reply attach(const console_watcher& w, const std::string& node,
                              console_mode mode = console_mode::rw, uint64_t replay = 0,
                              const std::string& user = "alice") {
    self->send(console, attach_atom::value, console_attach{node, mode, replay, user, "local"}, w);
    sched.run();
    console_attach_reply out;
    self->receive([&](const console_attach_reply& r) { out = r; });
    return out;
  }

  std::vector<console_status> status() {
    self->send(console, status_atom::value);
    sched.run();
    std::vector<console_status> out;
    self->receive([&](const std::vector<console_status>& s) { out = s; });
    return out;
  }

  console_status status_of(const std::string& node) {
    for (auto& s : status()) {
      if (s.node == node) {
        return s;
      }
    }
    return {};
  }
};

TEST_F(console_fixture, every_node_with_cons_is_held_and_one_that_cannot_be_says_why) {
  *specs = {spec("n1"), spec("n2"), spec("n3", "Unable to identify bmc for n3")};
  start();
  ASSERT_EQ(io->opens.size(), 2u);
  EXPECT_EQ(io->opens[0].node, "n1");
  EXPECT_EQ(io->opens[1].node, "n2");
  EXPECT_FALSE(io->opens[0].force);
  event("n1", console_io_event::kind::up);
  EXPECT_EQ(status_of("n1").state, "up");
  EXPECT_EQ(status_of("n2").state, "connecting");
  EXPECT_EQ(status_of("n3").state, "failed");
  EXPECT_EQ(status_of("n3").error, "Unable to identify bmc for n3");
  ASSERT_EQ(io->notes.size(), 1u);
  EXPECT_NE(io->notes[0].second.find("[-- clusterws: console up -- "), std::string::npos);
  auto [w, s] = watcher();
  auto r = attach(w, "n3");
  EXPECT_EQ(r.error, api::errc::failed);
  EXPECT_EQ(r.message, "n3: Unable to identify bmc for n3");
  r = attach(w, "n9");
  EXPECT_EQ(r.error, api::errc::failed);
  EXPECT_NE(r.message.find("cons attribute is not set"), std::string::npos);
}

TEST_F(console_fixture, past_console_max_a_console_waits_with_a_clear_error_until_a_slot_frees) {
  cfg.max = 1;
  *specs = {spec("n1"), spec("n2")};
  start();
  ASSERT_EQ(io->opens.size(), 1u);
  EXPECT_EQ(status_of("n2").state, "waiting");
  auto [w, s] = watcher();
  auto r = attach(w, "n2");
  EXPECT_EQ(r.error, api::errc::failed);
  EXPECT_EQ(r.message, "n2: console_max (1) consoles are open; this one is not");
  // n1 loses its cons: its slot goes to n2
  *specs = {spec("n2")};
  self->send(console, refresh_atom::value);
  sched.run();
  ASSERT_EQ(io->opens.size(), 2u);
  EXPECT_EQ(io->opens[1].node, "n2");
  EXPECT_EQ(io->closes.size(), 1u);
  EXPECT_EQ(io->forgotten, std::vector<std::string>{"n1"});
}

TEST_F(console_fixture, a_lost_console_reconnects_with_growing_backoff_and_the_log_notes_the_gap) {
  *specs = {spec("n1")};
  start();
  event("n1", console_io_event::kind::up);
  event("n1", console_io_event::kind::lost, "The BMC did not answer");
  EXPECT_EQ(status_of("n1").state, "backoff");
  EXPECT_EQ(status_of("n1").error, "The BMC did not answer");
  ASSERT_EQ(io->notes.size(), 2u);
  EXPECT_NE(io->notes[1].second.find("console lost: The BMC did not answer -- "),
            std::string::npos);
  // the first retry after backoff_min (100 ms), not before
  EXPECT_EQ(sched.advance_time(std::chrono::milliseconds{99}), 0u);
  EXPECT_EQ(sched.advance_time(std::chrono::milliseconds{1}), 1u);
  sched.run();
  EXPECT_EQ(io->opens_of("n1"), 2u);
  // it fails again: the same reason is not noted twice, the next wait is 200 ms
  event("n1", console_io_event::kind::lost, "The BMC did not answer");
  EXPECT_EQ(io->notes.size(), 2u);
  EXPECT_EQ(sched.advance_time(std::chrono::milliseconds{199}), 0u);
  EXPECT_EQ(sched.advance_time(std::chrono::milliseconds{1}), 1u);
  sched.run();
  EXPECT_EQ(io->opens_of("n1"), 3u);
  event("n1", console_io_event::kind::up);
  ASSERT_EQ(io->notes.size(), 3u);
  EXPECT_NE(io->notes[2].second.find("[-- clusterws: console back -- "), std::string::npos);
  EXPECT_EQ(status_of("n1").reconnects, 2u);
  EXPECT_EQ(status_of("n1").error, "");
}

TEST_F(console_fixture, a_wrong_password_is_the_nodes_error_and_is_retried_at_backoff) {
  *specs = {spec("n1")};
  start();
  event("n1", console_io_event::kind::error, "RAKP 2: the user name or password was refused");
  auto st = status_of("n1");
  EXPECT_EQ(st.state, "backoff");
  EXPECT_EQ(st.error, "RAKP 2: the user name or password was refused");
  sched.advance_time(std::chrono::milliseconds{100});
  sched.run();
  EXPECT_EQ(io->opens_of("n1"), 2u);
}

TEST_F(console_fixture, a_console_active_elsewhere_is_taken_over_with_force_on_the_retry) {
  *specs = {spec("n1")};
  start();
  event("n1", console_io_event::kind::already_active);
  sched.advance_time(std::chrono::milliseconds{100});
  sched.run();
  ASSERT_EQ(io->opens.size(), 2u);
  EXPECT_TRUE(io->opens[1].force);
}

TEST_F(console_fixture, an_attach_gets_the_replay_first_then_the_stream) {
  *specs = {spec("n1")};
  start();
  event("n1", console_io_event::kind::up);
  output("n1", "0123456789abcdefXYZ"); // the ring keeps the last 16 bytes
  auto [w, s] = watcher();
  auto r = attach(w, "n1", console_mode::rw, 5);
  EXPECT_EQ(r.error, api::errc::none);
  EXPECT_TRUE(r.writer);
  sched.run();
  EXPECT_EQ(s->bytes, "efXYZ");
  self->send(console, ack_atom::value, std::string{"n1"}, w, uint64_t{5});
  output("n1", "more");
  sched.run();
  EXPECT_EQ(s->bytes, "efXYZmore");
}

TEST_F(console_fixture, a_second_writer_reads_only_and_is_told_who_writes) {
  *specs = {spec("n1")};
  start();
  event("n1", console_io_event::kind::up);
  auto [w1, s1] = watcher();
  auto [w2, s2] = watcher();
  EXPECT_TRUE(attach(w1, "n1", console_mode::rw, 0, "alice").writer);
  auto r = attach(w2, "n1", console_mode::rw, 0, "bob");
  EXPECT_FALSE(r.writer);
  EXPECT_EQ(r.holder, "alice");
  sched.run();
  ASSERT_EQ(s2->notices.size(), 1u);
  EXPECT_EQ(s2->notices[0].kind, "readonly");
  EXPECT_EQ(s2->notices[0].holder, "alice");
  // keystrokes: the writer's reach the console, the reader's are refused
  self->send(console, input_atom::value, std::string{"n1"}, w2, std::string{"nope"});
  self->send(console, input_atom::value, std::string{"n1"}, w1, std::string{"ls\r"});
  sched.run();
  ASSERT_EQ(io->writes.size(), 1u);
  EXPECT_EQ(io->writes[0].second, "ls\r");
  EXPECT_EQ(s2->notices.size(), 2u);
  // any number of read-only watchers
  auto [w3, s3] = watcher();
  EXPECT_FALSE(attach(w3, "n1", console_mode::ro, 0, "carol").writer);
  EXPECT_EQ(status_of("n1").watchers, 3u);
  EXPECT_EQ(status_of("n1").writer, "alice");
}

TEST_F(console_fixture, force_takes_the_console_over_and_the_first_writer_is_told) {
  *specs = {spec("n1")};
  start();
  event("n1", console_io_event::kind::up);
  auto [w1, s1] = watcher();
  auto [w2, s2] = watcher();
  attach(w1, "n1", console_mode::rw, 0, "alice");
  auto r = attach(w2, "n1", console_mode::force, 0, "bob");
  EXPECT_TRUE(r.writer);
  sched.run();
  ASSERT_EQ(s1->notices.size(), 1u);
  EXPECT_EQ(s1->notices[0].kind, "takenover");
  EXPECT_EQ(s1->notices[0].holder, "bob");
  EXPECT_EQ(status_of("n1").writer, "bob");
  self->send(console, input_atom::value, std::string{"n1"}, w1, std::string{"x"});
  self->send(console, input_atom::value, std::string{"n1"}, w2, std::string{"y"});
  sched.run();
  ASSERT_EQ(io->writes.size(), 1u);
  EXPECT_EQ(io->writes[0].second, "y");
  // alice still reads
  output("n1", "ok");
  sched.run();
  EXPECT_EQ(s1->bytes, "ok");
}

TEST_F(console_fixture, a_watcher_that_does_not_keep_up_is_dropped_and_the_others_go_on) {
  *specs = {spec("n1")};
  start();
  event("n1", console_io_event::kind::up);
  auto [slow, s1] = watcher();
  auto [fast, s2] = watcher();
  attach(slow, "n1", console_mode::ro);
  attach(fast, "n1", console_mode::ro);
  output("n1", "123456");
  self->send(console, ack_atom::value, std::string{"n1"}, fast, uint64_t{6});
  sched.run();
  output("n1", "abcdef"); // slow would hold 12 > 10 unacknowledged
  sched.run();
  EXPECT_EQ(s1->bytes, "123456");
  EXPECT_EQ(s1->detached, std::vector<std::string>{"too slow"});
  EXPECT_EQ(s2->bytes, "123456abcdef");
  EXPECT_EQ(status_of("n1").watchers, 1u);
  ASSERT_FALSE(told.empty());
  EXPECT_EQ(told.back().what, "detached");
  EXPECT_EQ(told.back().why, "too slow");
}

TEST_F(console_fixture, attach_and_detach_are_told_and_a_watcher_that_ends_is_detached) {
  *specs = {spec("n1")};
  start();
  auto [w1, s1] = watcher();
  attach(w1, "n1", console_mode::rw, 0, "alice");
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0].what, "attached");
  EXPECT_EQ(told[0].user, "alice");
  EXPECT_EQ(told[0].mode, "rw");
  EXPECT_EQ(told[0].client, "local");
  self->send(console, detach_atom::value, std::string{"n1"}, w1);
  sched.run();
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[1].what, "detached");
  EXPECT_EQ(told[1].why, "left");
  auto [w2, s2] = watcher();
  attach(w2, "n1", console_mode::ro, 0, "bob");
  caf::anon_send_exit(w2, caf::exit_reason::user_shutdown);
  sched.run();
  ASSERT_EQ(told.size(), 4u);
  EXPECT_EQ(told[3].why, "watcher ended");
  EXPECT_EQ(status_of("n1").watchers, 0u);
}

TEST_F(console_fixture, on_demand_opens_a_console_only_while_someone_watches) {
  cfg.hold = false;
  *specs = {spec("n1")};
  start();
  EXPECT_TRUE(io->opens.empty());
  EXPECT_EQ(status_of("n1").state, "idle");
  auto [w, s] = watcher();
  attach(w, "n1");
  ASSERT_EQ(io->opens.size(), 1u);
  self->send(console, detach_atom::value, std::string{"n1"}, w);
  sched.run();
  EXPECT_EQ(io->closes.size(), 1u);
  EXPECT_EQ(status_of("n1").state, "idle");
}

TEST_F(console_fixture, a_changed_bmc_reopens_the_console_taking_over_the_old_session) {
  *specs = {spec("n1")};
  start();
  event("n1", console_io_event::kind::up);
  auto changed = spec("n1");
  changed.bmc.password = "new";
  *specs = {changed};
  auto set = std::make_shared<store::change_set>();
  set->seq = 7;
  set->changes.push_back(
    {store::object_type::node, "n1", store::change_kind::changed, {"bmcpassword"}});
  self->send(console, change_set_ptr{set});
  sched.run();
  ASSERT_EQ(io->opens.size(), 2u);
  EXPECT_TRUE(io->opens[1].force);
  EXPECT_EQ(io->closes.size(), 1u);
  // a change that does not matter reads nothing again
  auto other = std::make_shared<store::change_set>();
  other->changes.push_back({store::object_type::node, "n1", store::change_kind::changed, {"os"}});
  *specs = {};
  self->send(console, change_set_ptr{other});
  sched.run();
  EXPECT_EQ(status_of("n1").state, "connecting");
}

TEST_F(console_fixture, a_change_to_some_nodes_reads_those_nodes_only_and_a_group_change_all) {
  // a node create must not cost a read of every node (100,000 of them, per commit)
  size_t full_reads = 0;
  std::vector<std::vector<std::string>> asked;
  cfg.read = [this, &full_reads] {
    ++full_reads;
    return *specs;
  };
  cfg.read_nodes = [this, &asked](const std::vector<std::string>& nodes) {
    asked.push_back(nodes);
    std::vector<console_spec> out;
    for (const auto& s : *specs) {
      if (std::find(nodes.begin(), nodes.end(), s.node) != nodes.end()) {
        out.push_back(s);
      }
    }
    return out;
  };
  *specs = {spec("n1"), spec("n2")};
  start();
  ASSERT_EQ(full_reads, 1u);
  auto send = [&](std::vector<store::logged_change> changes) {
    auto set = std::make_shared<store::change_set>();
    set->changes = std::move(changes);
    self->send(console, change_set_ptr{set});
    sched.run();
  };
  // n3 created with cons, n4 created without, in one commit: one read of those two
  *specs = {spec("n1"), spec("n2"), spec("n3")};
  send({{store::object_type::node, "n4", store::change_kind::created, {"groups"}},
        {store::object_type::node, "n3", store::change_kind::created, {"cons", "groups"}}});
  EXPECT_EQ(full_reads, 1u);
  ASSERT_EQ(asked.size(), 1u);
  EXPECT_EQ(asked[0], (std::vector<std::string>{"n3", "n4"}));
  EXPECT_EQ(status_of("n3").state, "connecting");
  EXPECT_EQ(io->opens_of("n3"), 1u);
  EXPECT_EQ(status().size(), 3u);
  // n1 removed: its console is let go, the others are not touched
  *specs = {spec("n2"), spec("n3")};
  send({{store::object_type::node, "n1", store::change_kind::removed, {"cons", "groups"}}});
  EXPECT_EQ(full_reads, 1u);
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[1], std::vector<std::string>{"n1"});
  EXPECT_EQ(io->forgotten, std::vector<std::string>{"n1"});
  EXPECT_EQ(io->opens.size(), 3u);
  EXPECT_EQ(status().size(), 2u);
  // a group's bmcusername: its members inherit it, so every console is read again
  auto changed = spec("n2");
  changed.bmc.user = "other";
  *specs = {changed, spec("n3")};
  send({{store::object_type::group, "compute", store::change_kind::changed, {"bmcusername"}}});
  EXPECT_EQ(full_reads, 2u);
  EXPECT_EQ(asked.size(), 2u);
  EXPECT_EQ(io->opens_of("n2"), 2u);
}

TEST(console_scope, names_the_nodes_a_change_set_touches_and_all_for_a_group_site_or_passwd) {
  using store::change_kind;
  using store::object_type;
  store::change_set set;
  set.changes = {{object_type::node, "b", change_kind::created, {"groups"}},
                 {object_type::node, "a", change_kind::changed, {"bmc"}},
                 {object_type::node, "c", change_kind::changed, {"os", "mac"}},
                 {object_type::node, "b", change_kind::changed, {"cons"}},
                 {object_type::node, "d", change_kind::removed, {"groups"}},
                 {object_type::group, "g", change_kind::changed, {"os"}},
                 {object_type::network, "n", change_kind::created, {"net"}}};
  auto scope = api::consoles_affected(set);
  EXPECT_FALSE(scope.all);
  EXPECT_EQ(scope.nodes, (std::vector<std::string>{"a", "b", "d"}));
  set.changes.push_back({object_type::group, "g", change_kind::changed, {"cons"}});
  scope = api::consoles_affected(set);
  EXPECT_TRUE(scope.all);
  EXPECT_TRUE(scope.nodes.empty());
  for (auto t : {object_type::site, object_type::passwd}) {
    set.changes = {{t, "x", change_kind::changed, {"key"}}};
    EXPECT_TRUE(api::consoles_affected(set).all);
  }
  set.changes = {{object_type::node, "c", change_kind::changed, {"os"}}};
  EXPECT_TRUE(api::consoles_affected(set).empty());
}

TEST_F(console_fixture, makeconservercf_d_stops_holding_a_node_and_makeconservercf_holds_it_again) {
  *specs = {spec("n1"),
            spec("n2", "Console method 'hmc' is not supported (cons=ipmi and cons=kvm are)")};
  start();
  auto run = [&](const std::string& target, const std::string& command) {
    auto call = std::make_shared<api::api_call>();
    call->op = api::operation::conserver;
    call->target = target;
    call->command = command;
    auto out = std::make_shared<api::api_result>();
    self->send(console, run_atom::value, api::api_call_ptr{call}, api::authorization{},
               std::make_shared<done_fn>([out](api::api_result r) { *out = std::move(r); }));
    sched.run();
    return *out;
  };
  auto r = run("n1", "-d");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(status_of("n1").state, "stopped");
  EXPECT_EQ(io->closes.size(), 1u);
  auto [w, s] = watcher();
  EXPECT_NE(attach(w, "n1").message.find("makeconservercf -d"), std::string::npos);
  r = run("", "");
  ASSERT_FALSE(r.ok()); // n2 cannot be held: xCAT's message, with why
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0],
            "n2: Error: Bad configuration, check attributes under the nodehm "
            "category (Console method 'hmc' is not supported (cons=ipmi and cons=kvm are))");
  EXPECT_EQ(status_of("n1").state, "connecting");
  EXPECT_EQ(io->opens_of("n1"), 2u);
  r = run("n1", "-V");
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.names, std::vector<std::string>{"n1: connecting"});
}

TEST_F(console_fixture, makeconservercf_d_is_written_to_the_definitions_before_the_answer) {
  *specs = {spec("n1"), spec("n2")};
  // the definitions: persist writes `held` into the specs, as the store would
  std::vector<std::pair<std::vector<std::string>, bool>> writes;
  std::function<void(api::api_result)> pending;
  cfg.persist
    = [&](std::vector<std::string> nodes, bool held, std::function<void(api::api_result)> done) {
        for (auto& s : *specs) {
          if (std::find(nodes.begin(), nodes.end(), s.node) != nodes.end()) {
            s.held = held;
          }
        }
        writes.emplace_back(std::move(nodes), held);
        pending = std::move(done); // durable later
      };
  start();
  auto out = std::make_shared<std::optional<api::api_result>>();
  auto run = [&](const std::string& target, const std::string& command) {
    auto call = std::make_shared<api::api_call>();
    call->op = api::operation::conserver;
    call->target = target;
    call->command = command;
    out->reset();
    self->send(console, run_atom::value, api::api_call_ptr{call}, api::authorization{},
               std::make_shared<done_fn>([out](api::api_result r) { *out = std::move(r); }));
    sched.run();
  };
  run("n1", "-d");
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].first, std::vector<std::string>{"n1"});
  EXPECT_FALSE(writes[0].second);
  EXPECT_FALSE(out->has_value()); // not before the write is durable
  pending(api::api_result{});
  sched.run();
  ASSERT_TRUE(out->has_value());
  EXPECT_TRUE((*out)->ok());
  EXPECT_EQ(status_of("n1").state, "stopped");
  // -d again writes nothing (the definitions say so already) and answers at once
  run("n1", "-d");
  EXPECT_EQ(writes.size(), 1u);
  EXPECT_TRUE(out->has_value());
  // holding every node writes 1 where it was 0 only
  run("", "");
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[1].first, std::vector<std::string>{"n1"});
  EXPECT_TRUE(writes[1].second);
  pending(api::api_result{});
  sched.run();
  EXPECT_EQ(status_of("n1").state, "connecting");
  // a failed write is the answer, and changes nothing
  run("n2", "-d");
  pending(api::api_result::failure(api::errc::failed, "disk full"));
  sched.run();
  ASSERT_TRUE(out->has_value());
  EXPECT_FALSE((*out)->ok());
  EXPECT_EQ(status_of("n2").state, "connecting");
}

TEST_F(console_fixture, a_definition_saying_consoleenabled_0_is_stopped_from_the_start) {
  auto off = spec("n1");
  off.held = false;
  *specs = {off, spec("n2")};
  start();
  EXPECT_EQ(status_of("n1").state, "stopped");
  EXPECT_EQ(status_of("n2").state, "connecting");
  EXPECT_EQ(io->opens_of("n1"), 0u);
  // chdef consoleenabled=1: the change feed's refresh holds it
  (*specs)[0].held = true;
  self->send(console, refresh_atom::value);
  sched.run();
  EXPECT_EQ(status_of("n1").state, "connecting");
}

TEST_F(console_fixture, a_force_names_the_writer_it_took_the_console_from) {
  *specs = {spec("n1")};
  start();
  event("n1", console_io_event::kind::up);
  auto [w1, s1] = watcher();
  auto [w2, s2] = watcher();
  EXPECT_TRUE(attach(w2, "n1", console_mode::force, 0, "bob").bumped.empty()); // nobody wrote
  attach(w1, "n1", console_mode::force, 0, "alice");
  // bob attaches again (rcons's ^Ecf on its open socket): alice is named, and told
  auto r = attach(w2, "n1", console_mode::force, 0, "bob");
  EXPECT_TRUE(r.writer);
  EXPECT_EQ(r.bumped, "alice");
  EXPECT_EQ(status_of("n1").watchers, 2u);
  sched.run();
  ASSERT_FALSE(s1->notices.empty());
  EXPECT_EQ(s1->notices.back().kind, "takenover");
}

} // namespace
