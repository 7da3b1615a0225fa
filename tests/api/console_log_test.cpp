// A node's console log (api/console_log.hpp): appends, notes on lines of their own, per-line
// timestamps, rotation by size with `keep` files, the replay ring, and the tail reader.

#include <gtest/gtest.h>

#include "../store/temp_home.hpp"
#include "api/console.hpp"
#include "api/console_log.hpp"

namespace {

using namespace cws;
using clock = std::chrono::system_clock;

std::string read(const std::filesystem::path& p) {
  std::string out;
  api::console_log_tail(p, std::numeric_limits<size_t>::max(), 1 << 20, out);
  return out;
}

TEST(console_log, notes_go_on_lines_of_their_own_and_timestamps_begin_each_line) {
  test::temp_dir dir;
  auto t = clock::from_time_t(1795000000); // 2026-11-18T...
  {
    api::console_log log{{dir.path, 1 << 20, 2, false}, "n1"};
    log.append("boot: ", t);
    log.note("[-- clusterws: console lost -- x]", t);
    log.append("more\n", t);
  }
  EXPECT_EQ(read(dir.path / "n1"), "boot: \r\n[-- clusterws: console lost -- x]\r\nmore\n");
  {
    api::console_log log{{dir.path, 1 << 20, 2, true}, "n2"};
    log.append("a\nb", t);
    log.append("c\n", t);
  }
  auto stamp = "[" + api::console_time(t) + "] ";
  EXPECT_EQ(read(dir.path / "n2"), stamp + "a\n" + stamp + "bc\n");
  EXPECT_EQ(api::console_time(clock::from_time_t(0)), "1970-01-01T00:00:00Z");
}

TEST(console_log, a_log_is_rotated_before_it_passes_its_size_keeping_keep_files) {
  test::temp_dir dir;
  api::console_log log{{dir.path, 100, 2, false}, "n1"};
  for (int i = 0; i < 10; ++i) {
    log.append(std::string(40, static_cast<char>('0' + i)), clock::now());
  }
  // 40 bytes each, two per file: n1 holds 8 and 9, n1.1 6 and 7, n1.2 4 and 5
  EXPECT_EQ(read(dir.path / "n1"), std::string(40, '8') + std::string(40, '9'));
  EXPECT_EQ(read(dir.path / "n1.1"), std::string(40, '6') + std::string(40, '7'));
  EXPECT_EQ(read(dir.path / "n1.2"), std::string(40, '4') + std::string(40, '5'));
  EXPECT_FALSE(std::filesystem::exists(dir.path / "n1.3"));
  // keep = 0: the file is cut
  api::console_log cut{{dir.path, 100, 0, false}, "n2"};
  for (int i = 0; i < 3; ++i) {
    cut.append(std::string(40, static_cast<char>('a' + i)), clock::now());
  }
  EXPECT_EQ(read(dir.path / "n2"), std::string(40, 'c'));
  EXPECT_FALSE(std::filesystem::exists(dir.path / "n2.1"));
}

TEST(console_log, the_replay_ring_keeps_the_last_bytes_only) {
  api::replay_ring r{8};
  r.push("abc");
  EXPECT_EQ(r.last(100), "abc");
  r.push("defgh");
  EXPECT_EQ(r.last(8), "abcdefgh");
  r.push("ij");
  EXPECT_EQ(r.last(8), "cdefghij");
  EXPECT_EQ(r.last(3), "hij");
  r.push("0123456789");
  EXPECT_EQ(r.last(8), "23456789");
  api::replay_ring none{0};
  none.push("x");
  EXPECT_EQ(none.last(5), "");
}

TEST(console_log, tail_gives_the_last_lines_and_a_missing_log_says_so) {
  test::temp_dir dir;
  {
    api::console_log log{{dir.path, 1 << 20, 1, false}, "n1"};
    log.append("one\ntwo\nthree\nfour", clock::now());
  }
  std::string out;
  EXPECT_TRUE(api::console_log_tail(dir.path / "n1", 2, 1 << 20, out).ok());
  EXPECT_EQ(out, "three\nfour");
  EXPECT_TRUE(api::console_log_tail(dir.path / "n1", 0, 1 << 20, out).ok());
  EXPECT_EQ(out, "");
  EXPECT_TRUE(api::console_log_tail(dir.path / "n1", 100, 1 << 20, out).ok());
  EXPECT_EQ(out, "one\ntwo\nthree\nfour");
  EXPECT_TRUE(api::console_log_tail(dir.path / "n1", 100, 6, out).ok()); // bounded
  EXPECT_EQ(out, "e\nfour");
  auto r = api::console_log_tail(dir.path / "nope", 1, 100, out);
  EXPECT_EQ(r.error, api::errc::failed);
}

TEST(console_log, node_names_that_cannot_be_file_names_are_refused) {
  EXPECT_TRUE(api::console_file_name_ok("cn001"));
  EXPECT_FALSE(api::console_file_name_ok(""));
  EXPECT_FALSE(api::console_file_name_ok(".."));
  EXPECT_FALSE(api::console_file_name_ok("a/b"));
  EXPECT_FALSE(api::console_file_name_ok(std::string(256, 'a')));
}

} // namespace
