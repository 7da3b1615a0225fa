// The change log: every commit that created, changed or removed objects leaves one change
// set, keyed by its generation, with the attributes that differ; failed ops leave nothing;
// the log is bounded and says what it dropped; records are checked when read.

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include "store/change_feed.hpp"
#include "store/database.hpp"
#include "store/error.hpp"
#include "temp_home.hpp"

namespace {

using namespace cws::store;

using attrs = std::vector<std::string>;

logged_change change(object_type t, std::string name, change_kind k, attrs a) {
  return {t, std::move(name), k, std::move(a)};
}

TEST(change_feed, each_commit_leaves_one_set_keyed_by_its_generation) {
  cws::test::temp_dir dir;
  database db{dir.path};
  db.write([](write_txn& t) {
    t.put(object_type::node, "n2", {{"groups", "all"}, {"mgt", "kvm"}});
    t.put(object_type::network, "net1", {{"net", "10.0.0.0"}});
  });
  db.write([](write_txn& t) {
    t.put(object_type::node, "n2", {{"groups", "all"}, {"mgt", "ipmi"}, {"bmc", "b2"}});
  });
  db.write([](write_txn& t) { t.erase(object_type::network, "net1"); });
  auto txn = db.read();
  auto sets = txn.changes_after(0, 100);
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(sets[2].seq, txn.generation());
  EXPECT_LT(sets[0].seq, sets[1].seq);
  EXPECT_EQ(sets[0].changes,
            (std::vector<logged_change>{
              change(object_type::node, "n2", change_kind::created, {"groups", "mgt"}),
              change(object_type::network, "net1", change_kind::created, {"net"})}));
  // only what differs: `groups` was written again as it was
  EXPECT_EQ(sets[1].changes, (std::vector<logged_change>{change(
                               object_type::node, "n2", change_kind::changed, {"bmc", "mgt"})}));
  EXPECT_EQ(sets[2].changes, (std::vector<logged_change>{change(object_type::network, "net1",
                                                                change_kind::removed, {"net"})}));
  // a reader resumes after the last number it saw
  auto rest = txn.changes_after(sets[0].seq, 1);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].seq, sets[1].seq);
  EXPECT_TRUE(txn.changes_after(sets[2].seq, 100).empty());
  EXPECT_EQ(txn.changes_dropped(), 0u);
}

TEST(change_feed, one_object_changed_twice_in_a_commit_is_one_change) {
  cws::test::temp_dir dir;
  database db{dir.path};
  db.write([](write_txn& t) { t.put(object_type::node, "n1", {{"groups", "all"}}); });
  db.write([](write_txn& t) {
    t.put(object_type::node, "n1", {{"groups", "all"}, {"os", "rhels9"}});
    t.put(object_type::node, "n1", {{"groups", "all"}, {"os", "rhels9"}, {"arch", "x86_64"}});
    t.put(object_type::node, "tmp", {{"groups", "all"}});
    t.erase(object_type::node, "tmp"); // made and removed: no trace
  });
  db.write([](write_txn& t) {
    t.erase(object_type::node, "n1");
    t.put(object_type::node, "n1", {{"groups", "all"}, {"os", "rhels9"}, {"arch", "x86_64"}});
  });
  auto sets = db.read().changes_after(0, 100);
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(sets[1].changes, (std::vector<logged_change>{change(
                               object_type::node, "n1", change_kind::changed, {"arch", "os"})}));
  // removed and made again: every attribute either step touched (the values are not
  // compared across steps), so a reader may see more than changed, never less
  EXPECT_EQ(sets[2].changes,
            (std::vector<logged_change>{
              change(object_type::node, "n1", change_kind::changed, {"arch", "groups", "os"})}));
}

TEST(change_feed, a_failed_op_of_a_batch_leaves_no_change) {
  cws::test::temp_dir dir;
  database db{dir.path};
  std::vector<database::batch_op> ops;
  ops.push_back({[](write_txn& t) { t.put(object_type::node, "ok", {{"groups", "all"}}); }, {}});
  ops.push_back({[](write_txn& t) {
                   t.put(object_type::node, "bad", {{"groups", "all"}});
                   throw error{store_errc::bad_request, "refused"};
                 },
                 {}});
  db.write_batch(ops);
  EXPECT_TRUE(ops[1].failure);
  auto sets = db.read().changes_after(0, 100);
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].changes, (std::vector<logged_change>{
                               change(object_type::node, "ok", change_kind::created, {"groups"})}));
}

TEST(change_feed, tokens_stay_out_and_unchanged_commits_leave_nothing) {
  cws::test::temp_dir dir;
  database db{dir.path};
  db.write([](write_txn& t) { t.put(object_type::token, "hash", {{"username", "root"}}); });
  db.write([](write_txn& t) { t.set_meta("x", "y"); });
  EXPECT_TRUE(db.read().changes_after(0, 100).empty());
}

TEST(change_feed, the_log_keeps_the_last_commits_and_names_what_it_dropped) {
  cws::test::temp_dir dir;
  database db{dir.path};
  db.write([](write_txn& t) { t.set_meta(write_txn::changes_kept_key, "3"); });
  for (int i = 0; i < 6; ++i) {
    db.write([&](write_txn& t) {
      t.put(object_type::node, "n" + std::to_string(i), {{"groups", "all"}});
    });
  }
  auto txn = db.read();
  auto sets = txn.changes_after(0, 100);
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(sets.back().seq, txn.generation());
  EXPECT_EQ(sets.front().seq, txn.generation() - 2);
  EXPECT_EQ(sets.front().changes.front().name, "n3");
  // a reader that saw less than the last dropped set has missed some: it must start over
  EXPECT_EQ(txn.changes_dropped(), txn.generation() - 3);
}

TEST(change_feed, commits_of_another_process_are_in_the_log) {
  cws::test::temp_dir dir;
  database db{dir.path};
  db.write([](write_txn& t) { t.put(object_type::node, "mine", {{"groups", "all"}}); });
  pid_t pid = fork();
  if (pid == 0) {
    database other{dir.path}; // a CLI tool's own environment
    other.write([](write_txn& t) { t.put(object_type::node, "theirs", {{"groups", "all"}}); });
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto sets = db.read().changes_after(0, 100);
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[1].changes.front().name, "theirs");
}

TEST(change_feed, records_round_trip_and_damaged_ones_are_refused_by_name) {
  std::vector<logged_change> changes{
    change(object_type::node, "n1", change_kind::created, {"groups", "mgt"}),
    change(object_type::site, "clustersite", change_kind::changed, {"domain"}),
    change(object_type::group, "g", change_kind::removed, {})};
  auto bytes = encode_changes(changes);
  EXPECT_EQ(decode_changes(bytes), changes);
  auto refused = [](std::string bytes, const std::string& what) {
    try {
      decode_changes(bytes);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const error& e) {
      EXPECT_EQ(e.code(), store_errc::database);
      EXPECT_NE(std::string{e.what()}.find(what), std::string::npos) << e.what();
    }
  };
  refused(bytes.substr(0, bytes.size() - 1), "cut short");
  refused(bytes + "x", "bytes after the last change");
  refused(std::string{"\xff\xff\xff\xff\x0f", 5}, "changes");         // a count past what follows
  refused(std::string{"\x01\x09\x00\x01n\x00", 6}, "unknown");        // type 9
  refused(std::string{"\x01\x00\x07\x01n\x00", 6}, "unknown");        // kind 7
  refused(std::string{"\x01\x00\x00\x00\x00\x00", 6}, "object name"); // an empty name
}

} // namespace
