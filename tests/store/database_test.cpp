// The LMDB store: transactions, group index, generation counter, map growth, several processes.

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>

#include <sys/wait.h>
#include <unistd.h>

#include "store/database.hpp"
#include "store/error.hpp"
#include "temp_home.hpp"

namespace {

using namespace cws::store;

TEST(database, put_get_erase_and_sorted_scan) {
  cws::test::temp_dir dir;
  database db{dir.path};
  db.write([](write_txn& t) {
    t.put(object_type::node, "node2", {{"groups", "all"}, {"mgt", "kvm"}});
    t.put(object_type::node, "node10", {{"groups", "all"}});
    t.put(object_type::network, "net1", {{"mtu", "1500"}});
  });
  auto txn = db.read();
  EXPECT_EQ(txn.names(object_type::node), (std::vector<std::string>{"node10", "node2"}));
  EXPECT_EQ(txn.get(object_type::node, "node2")->find("mgt").value_or(""), "kvm");
  EXPECT_FALSE(txn.exists(object_type::node, "net1")); // types are separate
  EXPECT_TRUE(txn.exists(object_type::network, "net1"));
}

TEST(database, deferred_meta_sync_commits_are_seen_at_once_and_kept_after_sync) {
  cws::test::temp_dir dir;
  lmdb_options o;
  o.defer_meta_sync = true;
  {
    database db{dir.path, o};
    EXPECT_TRUE(db.env().defers_meta_sync());
    db.write([](write_txn& t) { t.put(object_type::node, "n1", {{"groups", "all"}}); });
    EXPECT_TRUE(db.read().exists(object_type::node, "n1")); // visible before the flush
    db.env().sync();
    db.write([](write_txn& t) { t.put(object_type::node, "n2", {{"groups", "all"}}); });
    db.env().sync();
  }
  database again{dir.path}; // an ordinary open sees both
  EXPECT_FALSE(again.env().defers_meta_sync());
  EXPECT_EQ(again.read().names(object_type::node), (std::vector<std::string>{"n1", "n2"}));
  lmdb_options nosync;
  nosync.durable = false;
  nosync.defer_meta_sync = true; // meaningless without durability
  EXPECT_FALSE(database(dir.path / "other", nosync).env().defers_meta_sync());
}

TEST(database, empty_values_are_not_stored) {
  cws::test::temp_dir dir;
  database db{dir.path};
  db.write([](write_txn& t) { t.put(object_type::node, "n1", {{"groups", "all"}, {"id", ""}}); });
  EXPECT_FALSE(db.read().get(object_type::node, "n1")->find("id").has_value());
}

TEST(database, group_index_follows_the_groups_attribute) {
  cws::test::temp_dir dir;
  database db{dir.path};
  db.write([](write_txn& t) {
    t.put(object_type::node, "n1", {{"groups", "all,compute"}});
    t.put(object_type::node, "n2", {{"groups", "all"}});
    t.put(object_type::group, "defined", {{"grouptype", "static"}});
  });
  {
    auto txn = db.read();
    EXPECT_EQ(txn.members("all"), (std::vector<std::string>{"n1", "n2"}));
    EXPECT_EQ(txn.members("compute"), (std::vector<std::string>{"n1"}));
    EXPECT_EQ(txn.group_names(), (std::vector<std::string>{"all", "compute", "defined"}));
  }
  db.write([](write_txn& t) {
    t.put(object_type::node, "n1", {{"groups", "all"}});
    t.erase(object_type::node, "n2");
  });
  auto txn = db.read();
  EXPECT_EQ(txn.members("all"), (std::vector<std::string>{"n1"}));
  EXPECT_TRUE(txn.members("compute").empty());
  EXPECT_EQ(txn.group_names(), (std::vector<std::string>{"all", "defined"}));
}

TEST(database, failing_change_leaves_nothing_behind) {
  cws::test::temp_dir dir;
  database db{dir.path};
  auto before = db.read().generation();
  EXPECT_THROW(db.write([](write_txn& t) {
    t.put(object_type::node, "n1", {{"groups", "all"}});
    t.put(object_type::node, "n2", {{"groups", "all"}});
    throw error{store_errc::bad_request, "boom"};
  }),
               error);
  auto txn = db.read();
  EXPECT_TRUE(txn.names(object_type::node).empty());
  EXPECT_TRUE(txn.members("all").empty());
  EXPECT_EQ(txn.generation(), before);
}

TEST(database, generation_counts_commits) {
  cws::test::temp_dir dir;
  database db{dir.path};
  auto g0 = db.read().generation();
  db.write([](write_txn& t) { t.put(object_type::node, "n1", {{"groups", "all"}}); });
  db.write([](write_txn& t) { t.erase(object_type::node, "n1"); });
  EXPECT_EQ(db.read().generation(), g0 + 2);
}

TEST(database, snapshot_does_not_see_later_writes) {
  cws::test::temp_dir dir;
  database db{dir.path};
  auto old = db.read();
  db.write([](write_txn& t) { t.put(object_type::node, "n1", {{"groups", "all"}}); });
  EXPECT_FALSE(old.exists(object_type::node, "n1"));
}

TEST(database, full_map_grows_instead_of_failing) {
  cws::test::temp_dir dir;
  lmdb_options opts;
  opts.initial_map_size = 1 << 20; // 1 MiB: the write below needs several
  opts.durable = false;
  database db{dir.path, opts};
  std::string big(1000, 'x');
  db.write([&](write_txn& t) {
    for (int i = 0; i < 5000; ++i) {
      t.put(object_type::node, "node" + std::to_string(i),
            {{"groups", "all"}, {"usercomment", big}});
    }
  });
  EXPECT_EQ(db.read().names(object_type::node).size(), 5000u);
  EXPECT_GT(db.env().map_size(), size_t{1} << 20);
}

TEST(database, map_limit_gives_a_clear_error_and_keeps_old_data) {
  cws::test::temp_dir dir;
  lmdb_options opts;
  opts.initial_map_size = 1 << 20;
  opts.max_map_size = 2 << 20;
  opts.durable = false;
  database db{dir.path, opts};
  db.write([](write_txn& t) { t.put(object_type::node, "keep", {{"groups", "all"}}); });
  std::string big(100000, 'x');
  try {
    db.write([&](write_txn& t) {
      for (int i = 0; i < 100; ++i) {
        t.put(object_type::node, "n" + std::to_string(i), {{"usercomment", big}});
      }
    });
    FAIL() << "expected a full database";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), store_errc::database);
    EXPECT_NE(std::string{e.what()}.find("full"), std::string::npos);
  }
  auto txn = db.read();
  EXPECT_TRUE(txn.exists(object_type::node, "keep"));
  EXPECT_FALSE(txn.exists(object_type::node, "n0"));
}

TEST(database, two_processes_write_at_once) {
  cws::test::temp_dir dir;
  { database init{dir.path}; }
  constexpr int per_process = 200;
  pid_t pids[2];
  for (int p = 0; p < 2; ++p) {
    pids[p] = fork();
    ASSERT_GE(pids[p], 0);
    if (pids[p] == 0) {
      int rc = 0;
      try {
        lmdb_options opts;
        opts.initial_map_size = 1 << 20; // small: both processes grow the map
        database db{dir.path, opts};
        for (int i = 0; i < per_process; ++i) {
          db.write([&](write_txn& t) {
            t.put(
              object_type::node, "p" + std::to_string(p) + "n" + std::to_string(i),
              {{"groups", "all,p" + std::to_string(p)}, {"usercomment", std::string(2000, 'x')}});
          });
        }
      } catch (...) {
        rc = 1;
      }
      _exit(rc);
    }
  }
  for (auto pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  database db{dir.path};
  auto txn = db.read();
  EXPECT_EQ(txn.names(object_type::node).size(), 2u * per_process);
  EXPECT_EQ(txn.members("all").size(), 2u * per_process);
  EXPECT_EQ(txn.members("p1").size(), size_t{per_process});
  EXPECT_EQ(txn.generation(), 2u * per_process);
}

TEST(database, stale_reader_slot_of_a_killed_process_is_cleared_at_open) {
  cws::test::temp_dir dir;
  // Keep the environment open here: the lock table (and a stale slot in it) only survives
  // while some process has the environment open, as the daemon does.
  database holder{dir.path};
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t reader = fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    database db{dir.path};
    auto txn = db.read(); // takes a reader slot
    (void)!write(ready[1], "x", 1);
    pause();
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  kill(reader, SIGKILL);
  waitpid(reader, nullptr, 0);
  pid_t opener = fork();
  ASSERT_GE(opener, 0);
  if (opener == 0) {
    database db{dir.path};
    _exit(db.env().stale_readers_cleared());
  }
  int status = 0;
  waitpid(opener, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

} // namespace

namespace {

using namespace cws::store;

TEST(database, batch_commits_good_ops_and_rolls_back_failed_ones_alone) {
  cws::test::temp_dir dir;
  database db{dir.path};
  auto g0 = db.read().generation();
  std::vector<database::batch_op> ops;
  ops.push_back({[](write_txn& t) { t.put(object_type::node, "a", {{"groups", "all"}}); }, {}});
  ops.push_back({[](write_txn& t) {
                   t.put(object_type::node, "b", {{"groups", "all"}});
                   throw error{store_errc::bad_request, "no"};
                 },
                 {}});
  ops.push_back({[](write_txn& t) { t.put(object_type::node, "c", {{"groups", "all"}}); }, {}});
  db.write_batch(ops);
  EXPECT_FALSE(ops[0].failure);
  EXPECT_TRUE(ops[1].failure);
  EXPECT_FALSE(ops[2].failure);
  auto txn = db.read();
  EXPECT_EQ(txn.names(object_type::node), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(txn.members("all"), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(txn.generation(), g0 + 1); // one commit for the batch
}

} // namespace

namespace {

using namespace cws::store;

TEST(database, counters_tell_what_changed) {
  cws::test::temp_dir dir;
  database db{dir.path};
  using counter = read_txn::counter;
  auto at = [&](counter c) {
    return db.read().generation(c);
  };
  auto auth0 = at(counter::auth);
  auto mem0 = at(counter::membership);
  db.write([](write_txn& t) { t.put(object_type::network, "n", {{"mtu", "1500"}}); });
  EXPECT_EQ(at(counter::auth), auth0);
  EXPECT_EQ(at(counter::membership), mem0);
  db.write([](write_txn& t) { t.put(object_type::policy, "6", {{"name", "a"}}); });
  EXPECT_EQ(at(counter::auth), auth0 + 1);
  db.write([](write_txn& t) { t.erase(object_type::policy, "6"); });
  EXPECT_EQ(at(counter::auth), auth0 + 2);
  db.write([](write_txn& t) { t.put(object_type::node, "n1", {{"groups", "all"}}); });
  EXPECT_EQ(at(counter::membership), mem0 + 1);
  db.write([](write_txn& t) { t.put(object_type::node, "n1", {{"groups", "all"}, {"mgt", "x"}}); });
  EXPECT_EQ(at(counter::membership), mem0 + 1); // same groups: no change
  db.write([](write_txn& t) { t.put(object_type::site, "clustersite", {{"excludenodes", "n1"}}); });
  EXPECT_EQ(at(counter::membership), mem0 + 2); // excludenodes changes what a noderange names
  EXPECT_EQ(at(counter::auth), auth0 + 2);
}

} // namespace

namespace {

using namespace cws::store;

/// KiB of this process's resident pages of `file` (summed over its mappings), from smaps.
long resident_kib(const std::filesystem::path& file) {
  std::ifstream smaps{"/proc/self/smaps"};
  std::string line;
  bool in_file = false;
  long kib = 0;
  while (std::getline(smaps, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0]))
        && line.find('-') < line.find(' ')) {
      in_file
        = line.size() >= file.string().size()
          && line.compare(line.size() - file.string().size(), std::string::npos, file.string())
               == 0;
    } else if (in_file && line.rfind("Rss:", 0) == 0) {
      kib += std::stol(line.substr(4));
    }
  }
  return kib;
}

TEST(database, a_long_scan_does_not_keep_the_file_resident) {
  cws::test::temp_dir dir;
  database db{dir.path};
  std::string filler(400, 'x');
  size_t count = read_txn::release_every - 1; // one short of the scan's own release
  db.write([&](write_txn& t) {
    for (size_t i = 0; i < count; ++i) {
      t.put(object_type::node, "n" + std::to_string(i),
            {{"groups", "all"}, {"usercomment", filler}});
    }
  });
  auto file = std::filesystem::canonical(dir.path / "data.mdb");
  auto txn = db.read();
  size_t seen = 0;
  txn.scan(object_type::node, [&](std::string_view, record_view) { ++seen; });
  ASSERT_EQ(seen, count);
  auto after_scan = resident_kib(file);
  EXPECT_GT(after_scan, 10 * 1024) << "the scan read ~20 MB of records";
  txn.release_resident_pages();
  EXPECT_LT(resident_kib(file), 1024) << "was " << after_scan << " KiB";

  // one more record: the scan releases by itself after release_every records
  db.write([&](write_txn& t) {
    t.put(object_type::node, "zlast", {{"groups", "all"}, {"usercomment", filler}});
  });
  auto txn2 = db.read();
  txn2.scan(object_type::node, [&](std::string_view, record_view) {});
  EXPECT_LT(resident_kib(file), 1024);
}

} // namespace

namespace {

TEST(database, format_version_is_written_and_a_newer_one_refused) {
  cws::test::temp_dir dir;
  {
    database db{dir.path};
    EXPECT_EQ(db.read().meta(database::format_key), std::to_string(database::format_version));
    db.write([](write_txn& t) {
      t.put(object_type::node, "n1", {{"groups", "all"}});
      t.set_meta(database::format_key, std::to_string(database::format_version + 1));
    });
  }
  try {
    database again{dir.path};
    FAIL() << "a database of a newer format was opened";
  } catch (const error& e) {
    EXPECT_EQ(e.code(), store_errc::database);
    EXPECT_NE(std::string{e.what()}.find("newer than this clusterws reads"), std::string::npos)
      << e.what();
  }
}

} // namespace

namespace {

TEST(database, stats_tell_the_map_in_use_and_the_read_snapshots_open) {
  cws::test::temp_dir dir;
  database db{dir.path};
  auto empty = db.stats();
  EXPECT_GT(empty.map_used_bytes, 0u);
  EXPECT_GE(empty.map_size_bytes, empty.map_used_bytes);
  EXPECT_EQ(empty.readers_active, 0u);
  db.write([](write_txn& t) {
    for (int i = 0; i < 2000; ++i) {
      t.put(object_type::node, "n" + std::to_string(i), {{"groups", std::string(100, 'g')}});
    }
  });
  {
    auto snapshot = db.read();
    auto st = db.stats();
    EXPECT_GT(st.map_used_bytes, empty.map_used_bytes);
    EXPECT_EQ(st.readers_active, 1u);
    EXPECT_GE(st.reader_slots_used, 1u);
    auto second = db.read();
    EXPECT_EQ(db.stats().readers_active, 2u);
  }
  EXPECT_EQ(db.stats().readers_active, 0u);
}

} // namespace
