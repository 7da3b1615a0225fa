// The store and policy actors under CAF's deterministic test coordinator: no sleeps, timers
// fired by hand.

#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>

#include "../store/temp_home.hpp"
#include "actors/dispatcher.hpp"
#include "actors/policy_actor.hpp"
#include "actors/store_actor.hpp"
#include "coordinated_system.hpp"
#include "store/credentials.hpp"

namespace {

using namespace cws;
using namespace cws::actors;
using namespace cws::api;
using store::object_type;

struct caf_fixture : ::testing::Test, test::coordinated_system {
  caf_fixture() {
    db->write([](store::write_txn& t) {
      t.put(object_type::passwd, "root", {{"password", store::hash_password("rootpw")}});
      t.put(object_type::passwd, "alice", {{"password", store::hash_password("alicepw")}});
      t.put(object_type::policy, "1", {{"name", "root"}, {"rule", "allow"}});
      t.put(object_type::site, "clustersite", {{"tftpdir", "/tftpboot"}});
      t.put(object_type::node, "n1", {{"groups", "all"}, {"mgt", "kvm"}});
    });
    store_config sc;
    sc.detached_writer = false;
    sc.commit_wait = {};
    st = spawn_store(sys, db, sc);
    policy_config pc;
    pc.detached_hasher = false;
    pol = spawn_policy(sys, st, pc);
    sched.run();
  }

  ~caf_fixture() override {
    self->send_exit(st, caf::exit_reason::user_shutdown);
    self->send_exit(pol, caf::exit_reason::user_shutdown);
    sched.run();
  }

  api_call_ptr call(operation op, std::string target = {}, std::string user = "root",
                    std::string pw = "rootpw") {
    auto c = std::make_shared<api_call>();
    c->op = op;
    c->target = std::move(target);
    c->creds.user = std::move(user);
    c->creds.password = std::move(pw);
    c->client = "127.0.0.1";
    c->policy_command = "lsdef";
    return c;
  }

  /// Sends `c` to `to` as run by its caller (`c`'s claimed user); the result lands in
  /// `results` when the store hands it on.
  void send_run(const store_actor& to, api_call_ptr c) {
    authorization auth;
    auth.user = c->creds.user;
    self->send(
      to, run_atom::value, std::move(c), auth,
      std::make_shared<done_fn>([this](api_result r) { results.push_back(std::move(r)); }));
  }

  /// Runs `c` on the store and gives its result.
  api_result exec(api_call_ptr c) {
    results.clear();
    send_run(st, std::move(c));
    sched.run();
    EXPECT_EQ(results.size(), 1u);
    return results.empty() ? api_result{} : std::move(results.front());
  }

  /// Asks policy about `c`; its decisions land in `verdicts`, in the order given.
  void send_authz(api_call_ptr c) {
    self->send(
      pol, authz_atom::value, std::move(c), false,
      std::make_shared<verdict_fn>([this](auth_result r) { verdicts.push_back(std::move(r)); }));
  }

  auth_result authz(api_call_ptr c) {
    verdicts.clear();
    send_authz(std::move(c));
    sched.run();
    EXPECT_EQ(verdicts.size(), 1u);
    return verdicts.empty() ? auth_result{} : std::move(verdicts.front());
  }

  /// Submits `c` through `svc` and runs the actors; empty if the result never came.
  std::optional<api_result> submit(const dispatcher& svc, api_call_ptr c) {
    std::optional<api_result> got;
    svc.submit(std::move(c), [&](api_result r) { got = std::move(r); });
    sched.run();
    return got;
  }

  auth_stats stats() {
    auth_stats out;
    self->send(pol, stats_atom::value);
    sched.run();
    self->receive([&](auth_stats& s) { out = s; });
    return out;
  }

  test::temp_dir dir;
  std::shared_ptr<store::database> db = std::make_shared<store::database>(dir.path);
  store_actor st;
  policy_actor pol;
  std::vector<api_result> results;
  std::vector<auth_result> verdicts;
};

TEST_F(caf_fixture, store_reads_lists_and_details) {
  auto c = call(operation::list);
  auto r = exec(c);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.names, (std::vector<std::string>{"n1"}));
  auto show = std::make_shared<api_call>(*call(operation::show, "n1"));
  r = exec(show);
  ASSERT_EQ(r.objects.size(), 1u);
  EXPECT_EQ(r.objects[0].attrs().at("mgt"), "kvm");
  r = exec(call(operation::nodels, "n1,nosuch"));
  EXPECT_EQ(r.error, errc::failed);
  EXPECT_EQ(r.messages.front(), "Invalid nodes and/or groups in noderange: nosuch");
}

TEST_F(caf_fixture, writes_are_group_committed_and_replied_after_commit) {
  auto gen = db->read().generation();
  std::vector<api_call_ptr> calls;
  for (int i = 0; i < 3; ++i) {
    auto c = std::make_shared<api_call>(*call(operation::change, "w" + std::to_string(i)));
    c->changes = {{"groups", "all"}};
    send_run(st, c);
  }
  // a bad write in the same batch fails alone
  auto bad = std::make_shared<api_call>(*call(operation::change, "bad"));
  bad->changes = {{"nosuchattr", "1"}};
  send_run(st, bad);
  sched.run();
  int ok = 0;
  int failed = 0;
  ASSERT_EQ(results.size(), 4u); // every write answered, after the commit
  for (const auto& r : results) {
    r.ok() ? ++ok : ++failed;
  }
  EXPECT_EQ(ok, 3);
  EXPECT_EQ(failed, 1);
  auto txn = db->read();
  EXPECT_EQ(txn.generation(), gen + 1); // four writes, one commit
  EXPECT_TRUE(txn.exists(object_type::node, "w2"));
  EXPECT_FALSE(txn.exists(object_type::node, "bad"));
}

TEST_F(caf_fixture, a_batch_over_max_batch_is_committed_in_parts_and_every_write_answered) {
  store_config sc;
  sc.detached_writer = false;
  sc.commit_wait = {};
  sc.max_batch = 2;
  auto small = spawn_store(sys, db, sc);
  sched.run();
  auto gen = db->read().generation();
  for (int i = 0; i < 5; ++i) {
    auto c = std::make_shared<api_call>(*call(operation::change, "m" + std::to_string(i)));
    c->changes = {{"groups", "all"}};
    send_run(small, c);
  }
  sched.run();
  ASSERT_EQ(results.size(), 5u);
  for (const auto& r : results) {
    EXPECT_TRUE(r.ok());
  }
  EXPECT_EQ(db->read().generation(), gen + 3); // 2 + 2 + 1
  EXPECT_TRUE(db->read().exists(object_type::node, "m4"));
  self->send_exit(small, caf::exit_reason::user_shutdown);
  sched.run();
}

TEST_F(caf_fixture, a_deferred_flush_commit_is_answered_by_the_next_commit_or_a_flush) {
  // the daemon's database: a commit leaves its meta page to a later flush, so its writes wait
  test::temp_dir deferred_dir;
  store::lmdb_options o;
  o.defer_meta_sync = true;
  auto deferred = std::make_shared<store::database>(deferred_dir.path, o);
  store_config sc;
  sc.detached_writer = false;
  sc.commit_wait = {};
  sc.max_batch = 1; // two writes: two commits, the second queued before the first's flush
  auto s = spawn_store(sys, deferred, sc);
  sched.run();
  auto write = [&](const std::string& name) {
    auto c = std::make_shared<api_call>(*call(operation::change, name));
    c->changes = {{"groups", "all"}};
    send_run(s, c);
  };
  auto committed = [&](const std::string& name) {
    return deferred->read().exists(object_type::node, name);
  };
  write("d1");
  write("d2");
  while (!committed("d1") && sched.try_run_once()) {
  }
  ASSERT_TRUE(committed("d1"));
  EXPECT_TRUE(results.empty()) << "answered before it was durable";
  while (!committed("d2") && sched.try_run_once()) {
  }
  ASSERT_TRUE(committed("d2"));
  ASSERT_EQ(results.size(), 1u) << "the second commit's flush made the first durable";
  EXPECT_TRUE(results[0].ok());
  sched.run(); // no commit follows: the flush message answers the second
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[1].ok());
  // a commit that changed nothing (a failed write) is answered at once when nothing is
  // left unflushed; else after the flush of what is, in order
  auto bad = [&](const std::string& name) {
    auto c = std::make_shared<api_call>(*call(operation::change, name));
    c->changes = {{"nosuchattr", "1"}};
    send_run(s, c);
  };
  bad("d3");
  write("d4");
  while (!committed("d4") && sched.try_run_once()) {
  }
  ASSERT_EQ(results.size(), 3u);
  EXPECT_FALSE(results[2].ok());
  bad("d5");
  sched.run();
  ASSERT_EQ(results.size(), 5u);
  EXPECT_TRUE(results[3].ok()); // d4
  EXPECT_FALSE(results[4].ok());
  // one left unflushed at the actor's end is flushed and answered then
  write("d6");
  while (!committed("d6") && sched.try_run_once()) {
  }
  ASSERT_EQ(results.size(), 5u);
  self->send_exit(s, caf::exit_reason::user_shutdown);
  sched.run();
  ASSERT_EQ(results.size(), 6u);
  EXPECT_TRUE(results[5].ok());
}

TEST_F(caf_fixture, a_commit_waits_for_the_writers_the_last_one_answered) {
  store_config sc;
  sc.detached_writer = false;
  sc.commit_wait = std::chrono::milliseconds(1);
  auto waiting = spawn_store(sys, db, sc);
  sched.run();
  auto write = [&](const std::string& name) {
    auto c = std::make_shared<api_call>(*call(operation::change, name));
    c->changes = {{"groups", "all"}};
    send_run(waiting, c);
    sched.run();
  };
  auto replies = [&](size_t n) {
    ASSERT_EQ(results.size(), n);
    for (const auto& r : results) {
      EXPECT_TRUE(r.ok());
    }
    results.clear();
  };
  auto gen = db->read().generation();
  write("a1"); // nobody answered before: committed at once
  replies(1);
  EXPECT_EQ(db->read().generation(), gen + 1);
  // two concurrent writers, answered together; then the first of them is back alone
  send_run(waiting, call(operation::change, "a1"));
  send_run(waiting, call(operation::change, "a1"));
  sched.run();
  replies(2);
  EXPECT_EQ(db->read().generation(), gen + 2);
  write("b1");
  EXPECT_EQ(db->read().generation(), gen + 2) << "committed without waiting for the other";
  write("b2"); // the other writer is back: both in one commit, without waiting longer
  replies(2);
  EXPECT_EQ(db->read().generation(), gen + 3);
  EXPECT_TRUE(db->read().exists(object_type::node, "b2"));
  // a writer that does not come back costs one wait, bounded by commit_wait
  write("c1");
  EXPECT_FALSE(db->read().exists(object_type::node, "c1"));
  EXPECT_GE(sched.trigger_timeouts(), 1u); // (also the wait that ended early: ignored)
  sched.run();
  replies(1);
  EXPECT_TRUE(db->read().exists(object_type::node, "c1"));
  EXPECT_EQ(db->read().generation(), gen + 4);
  self->send_exit(waiting, caf::exit_reason::user_shutdown);
  sched.run();
}

TEST_F(caf_fixture, policy_allows_root_and_denies_others_until_a_row_allows_them) {
  EXPECT_TRUE(authz(call(operation::list)).allowed);
  auto a = authz(call(operation::list, {}, "alice", "alicepw"));
  EXPECT_FALSE(a.allowed);
  EXPECT_EQ(a.auth.user, "alice"); // authenticated, not authorized
  // the CLI adds a row: it counts on the very next request
  db->write([](store::write_txn& t) {
    t.put(object_type::policy, "6", {{"name", "alice"}, {"rule", "allow"}});
  });
  EXPECT_TRUE(authz(call(operation::list, {}, "alice", "alicepw")).allowed);
}

TEST_F(caf_fixture, a_peer_user_from_the_local_socket_is_authorized_by_policy_without_a_hash) {
  // the kernel named the caller: no password, no passwd row, no hash; policy decides by name
  auto peer = [&](std::string user) {
    auto c = std::make_shared<api_call>();
    c->op = operation::list;
    c->creds.peer_user = std::move(user);
    c->client = "local";
    c->policy_command = "lsdef";
    return c;
  };
  EXPECT_TRUE(authz(peer("root")).allowed);
  auto r = authz(peer("carol"));
  EXPECT_FALSE(r.allowed);
  EXPECT_EQ(r.reason, "Permission denied for request");
  EXPECT_EQ(r.auth.user, "carol"); // authenticated, not authorized
  // host rows see the local socket as localhost
  db->write([](store::write_txn& t) {
    t.put(object_type::policy, "6", {{"name", "carol"}, {"host", "localhost"}, {"rule", "allow"}});
  });
  EXPECT_TRUE(authz(peer("carol")).allowed);
  // an empty name (a uid without one) authenticates as nobody
  r = authz(peer(""));
  EXPECT_FALSE(r.allowed);
  EXPECT_EQ(r.reason, "Authentication failure");
  EXPECT_EQ(stats().hash_checks, 0u);
}

TEST_F(caf_fixture, bad_password_and_unknown_user_fail_authentication) {
  auto r = authz(call(operation::list, {}, "root", "wrong"));
  EXPECT_FALSE(r.allowed);
  EXPECT_EQ(r.reason, "Authentication failure");
  EXPECT_TRUE(r.auth.user.empty());
  EXPECT_FALSE(authz(call(operation::list, {}, "nobody", "x")).allowed);
  auto stored = db->read().get(object_type::passwd, "root")->find("password");
  EXPECT_FALSE(authz(call(operation::list, {}, "root", std::string{*stored})).allowed);
  auto s = stats();
  EXPECT_EQ(s.failures, 3u);
  EXPECT_EQ(s.hash_checks, 2u); // once per wrong password, not again on the fresh re-check
}

TEST_F(caf_fixture, verified_passwords_are_cached_until_the_password_changes) {
  EXPECT_TRUE(authz(call(operation::list)).allowed);
  EXPECT_TRUE(authz(call(operation::list)).allowed);
  auto s = stats();
  EXPECT_EQ(s.hash_checks, 1u);
  EXPECT_EQ(s.cache_hits, 1u);
  db->write([](store::write_txn& t) {
    t.put(object_type::passwd, "root", {{"password", store::hash_password("newpw")}});
  });
  // The policy actor's cached "yes" is provisional: the store checks it was made on the
  // passwords it holds now, and the bridge authorizes again on fresh data.
  dispatcher svc{sys, st, pol, {}, 1};
  auto got = submit(svc, call(operation::list));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->error, errc::unauthorized); // the old password no longer works
  got = submit(svc, call(operation::list, {}, "root", "newpw"));
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->ok());
  svc.shutdown();
}

TEST_F(caf_fixture, repeated_failures_back_off) {
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(authz(call(operation::list, {}, "root", "bad")).allowed);
  }
  verdicts.clear();
  send_authz(call(operation::list, {}, "root", "bad"));
  sched.run();
  EXPECT_TRUE(verdicts.empty()); // held back
  sched.trigger_timeouts();
  sched.run();
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_FALSE(verdicts.front().allowed);
  // another client is not slowed down by these failures
  auto other = std::make_shared<api_call>(*call(operation::list, {}, "root", "bad"));
  other->client = "127.0.0.2";
  EXPECT_FALSE(authz(other).allowed);
}

TEST_F(caf_fixture, tokens_authenticate_until_revoked_or_expired) {
  auto r = exec(call(operation::token_create));
  ASSERT_TRUE(r.created);
  EXPECT_EQ(r.token_id.size(), 36u);
  auto c = std::make_shared<api_call>(*call(operation::list, {}, "", ""));
  c->creds.token = r.token_id;
  EXPECT_TRUE(authz(c).allowed);
  // stored hashed, never in clear
  EXPECT_TRUE(db->read().exists(object_type::token, store::sha256_hex(r.token_id)));
  EXPECT_FALSE(db->read().exists(object_type::token, r.token_id));
  auto revoke = std::make_shared<api_call>(*call(operation::token_revoke, r.token_id));
  EXPECT_EQ(exec(revoke).error, errc::none);
  EXPECT_FALSE(authz(c).allowed);
  db->write([](store::write_txn& t) {
    t.put(object_type::token, store::sha256_hex("old"), {{"username", "root"}, {"expires", "1"}});
  });
  c->creds.token = "old";
  EXPECT_FALSE(authz(c).allowed);
}

TEST_F(caf_fixture, submit_authorizes_then_runs) {
  dispatcher svc{sys, st, pol, {}, 1};
  auto got = submit(svc, call(operation::list));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->names, (std::vector<std::string>{"n1"}));
  got = submit(svc, call(operation::list, {}, "alice", "alicepw"));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->error, errc::unauthorized);
  // a decision made before a policy change is not used after it: the store finds it stale
  // and the bridge authorizes again on the new data
  db->write([](store::write_txn& t) {
    t.put(object_type::policy, "6", {{"name", "alice"}, {"rule", "allow"}});
  });
  got = submit(svc, call(operation::list, {}, "alice", "alicepw"));
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->ok());
  svc.shutdown();
}

TEST_F(caf_fixture, guesses_past_a_threshold_are_refused_without_hashing) {
  // many guesses at once from one client: only the first few are hashed, and the right
  // password among the later ones is refused like the rest
  std::vector<api_call_ptr> guesses;
  for (int i = 0; i < 20; ++i) {
    guesses.push_back(call(operation::list, {}, "root", "guess" + std::to_string(i)));
  }
  guesses.push_back(call(operation::list));
  verdicts.clear();
  for (const auto& g : guesses) {
    send_authz(g);
  }
  sched.run();
  while (sched.trigger_timeouts() > 0) {
    sched.run();
  }
  ASSERT_EQ(verdicts.size(), guesses.size());
  EXPECT_EQ(std::count_if(verdicts.begin(), verdicts.end(), [](auto& r) { return r.allowed; }), 0);
  auto s = stats();
  EXPECT_EQ(s.hash_checks, 3u); // login_backoff_after
  EXPECT_EQ(s.throttled, 18u);
  // another user from another client is not held up by this: its check runs at once
  auto other = std::make_shared<api_call>(*call(operation::list, {}, "alice", "alicepw"));
  other->client = "127.0.0.2";
  other->policy_command.clear();
  EXPECT_TRUE(authz(other).allowed);
  // guesses at one user from many clients are bounded per user too
  for (int i = 0; i < 20; ++i) {
    auto c = std::make_shared<api_call>(*call(operation::list, {}, "root", "x"));
    c->client = "10.0.0." + std::to_string(i);
    send_authz(c);
  }
  verdicts.clear();
  sched.run();
  ASSERT_EQ(verdicts.size(), 20u);
  for (const auto& r : verdicts) {
    EXPECT_FALSE(r.allowed);
  }
  EXPECT_LE(stats().hash_checks, 3u + 1u + 10u);
}

struct noderange_rows : caf_fixture {
  noderange_rows() {
    db->write([](store::write_txn& t) {
      t.put(object_type::passwd, "mallory", {{"password", store::hash_password("mallorypw")}});
      t.put(object_type::policy, "6", {{"name", "alice"}, {"noderange", "n1"}, {"rule", "allow"}});
      t.put(object_type::node, "n2", {{"groups", "all"}});
    });
  }

  api_call_ptr over(std::string target, std::string user, std::string pw) {
    auto c = std::make_shared<api_call>(*call(operation::show, std::move(target), user, pw));
    return c;
  }
};

TEST_F(noderange_rows, the_noderange_is_expanded_only_when_a_noderange_row_could_decide) {
  // no row names mallory: refused without expanding her million names
  auto r = authz(over("huge[1-1000000]", "mallory", "mallorypw"));
  EXPECT_FALSE(r.allowed);
  EXPECT_EQ(r.auth.user, "mallory");
  EXPECT_EQ(stats().expansions, 0u);
  // row 1 decides for root before any noderange row
  EXPECT_TRUE(authz(over("huge[1-1000000]", "root", "rootpw")).allowed);
  EXPECT_EQ(stats().expansions, 0u);
  // alice's row needs her nodes: expanded once, also when the answer is no and is checked
  // again on current data
  EXPECT_TRUE(authz(over("n1", "alice", "alicepw")).allowed);
  EXPECT_EQ(stats().expansions, 1u);
  EXPECT_FALSE(authz(over("n1,n2", "alice", "alicepw")).allowed);
  EXPECT_EQ(stats().expansions, 2u);
}

TEST_F(noderange_rows, a_bad_noderange_is_the_requests_fault_not_an_auth_failure) {
  auto r = authz(over("n[1-999999999]", "alice", "alicepw"));
  EXPECT_FALSE(r.allowed);
  EXPECT_EQ(r.error, errc::failed);
  EXPECT_NE(r.reason.find("would expand to more than"), std::string::npos) << r.reason;
  dispatcher svc{sys, st, pol, {}, 1};
  auto got = submit(svc, over("(n1", "alice", "alicepw"));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->error, errc::failed);
  ASSERT_EQ(got->messages.size(), 1u);
  EXPECT_NE(got->messages[0].find("Unbalanced parentheses"), std::string::npos);
  got = submit(svc, over("n1", "alice", "alicepw")); // and nothing sticks
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->ok());
  svc.shutdown();
}

TEST_F(caf_fixture, a_token_stops_working_when_its_users_password_changes) {
  auto r = exec(call(operation::token_create));
  ASSERT_TRUE(r.created);
  auto c = std::make_shared<api_call>(*call(operation::list, {}, "", ""));
  c->creds.token = r.token_id;
  EXPECT_TRUE(authz(c).allowed);
  db->write([](store::write_txn& t) {
    t.put(object_type::passwd, "root", {{"password", store::hash_password("newpw")}});
  });
  EXPECT_FALSE(authz(c).allowed);
}

} // namespace
