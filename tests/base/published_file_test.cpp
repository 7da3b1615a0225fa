#include "base/published_file.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using cws::base::publish_file;
using cws::base::publish_files;
using cws::base::read_file;
using cws::base::unified_diff;

namespace {

struct published_file_test : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("cws-publish-" + std::to_string(::getpid()));
  void SetUp() override {
    fs::create_directories(dir);
  }
  void TearDown() override {
    fs::remove_all(dir);
  }
  std::string slurp(const fs::path& p) {
    std::string s;
    EXPECT_FALSE(read_file(p, 1 << 20, s));
    return s;
  }
  /// What diff(1) prints for the two texts, labels replaced by ours.
  std::string gnu_diff(const std::string& a, const std::string& b) {
    std::ofstream(dir / "a") << a;
    std::ofstream(dir / "b") << b;
    std::string cmd
      = "diff -u --label old --label new " + (dir / "a").string() + " " + (dir / "b").string();
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;)
      out.append(buf, n);
    ::pclose(p);
    return out;
  }
};

TEST_F(published_file_test, publish_replaces_the_file_and_keeps_its_mode_and_leaves_no_temporary) {
  auto f = dir / "hosts";
  ASSERT_FALSE(publish_file(f, "one\n", 0600));
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ::chmod(f.c_str(), 0640);
  ASSERT_FALSE(publish_file(f, "two\n"));
  EXPECT_EQ(slurp(f), "two\n");
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u); // the old file's mode, not the default
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST_F(published_file_test, a_failed_publish_leaves_the_old_file_and_no_temporary) {
  auto sub = dir / "ro";
  fs::create_directories(sub);
  ASSERT_FALSE(publish_file(sub / "f", "old\n"));
  ASSERT_FALSE(publish_file(dir / "missing" / "f", "x").value() == 0);
  // a directory in the way of the rename: the error comes back, the old content stays
  fs::create_directories(sub / "d");
  EXPECT_TRUE(publish_file(sub / "d", "new\n"));
  EXPECT_EQ(slurp(sub / "f"), "old\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(sub), fs::directory_iterator()), 2);
}

TEST_F(published_file_test, a_batch_publishes_every_file_or_on_an_early_error_none) {
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  ASSERT_FALSE(publish_file(dir / "a" / "1", "old\n", 0600));
  std::vector<std::string> texts;
  std::vector<cws::base::file_to_publish> batch;
  for (int i = 1; i <= 6; ++i)
    texts.push_back("file " + std::to_string(i) + "\n");
  for (int i = 1; i <= 6; ++i)
    batch.push_back({dir / (i % 2 ? "a" : "b") / std::to_string(i), texts[i - 1]});
  ASSERT_FALSE(publish_files(batch));
  for (int i = 1; i <= 6; ++i)
    EXPECT_EQ(slurp(batch[i - 1].path), texts[i - 1]);
  struct stat st {};
  ASSERT_EQ(::stat((dir / "a" / "1").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u); // the replaced file's mode
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "a"), fs::directory_iterator()), 3);

  // the fourth file's directory is missing: nothing is renamed, no temporary is left
  std::string changed = "changed\n";
  for (auto& f : batch)
    f.content = changed;
  batch[3].path = dir / "missing" / "4";
  std::size_t failed = 99;
  EXPECT_TRUE(publish_files(batch, &failed));
  EXPECT_EQ(failed, 3u);
  for (int i : {1, 2, 3, 5, 6})
    EXPECT_EQ(slurp(batch[i - 1].path), texts[i - 1]);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "a"), fs::directory_iterator()), 3);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir / "b"), fs::directory_iterator()), 3);
}

TEST_F(published_file_test,
       read_file_refuses_a_file_larger_than_its_limit_and_reads_missing_as_empty) {
  std::string s;
  bool exists = true;
  EXPECT_FALSE(read_file(dir / "none", 10, s, &exists));
  EXPECT_FALSE(exists);
  ASSERT_FALSE(publish_file(dir / "big", std::string(11, 'x')));
  EXPECT_EQ(read_file(dir / "big", 10, s), std::make_error_code(std::errc::file_too_large));
  EXPECT_TRUE(s.empty());
}

TEST_F(published_file_test, unified_diff_prints_what_diff_u_prints) {
  std::vector<std::pair<std::string, std::string>> cases = {
    {"a\nb\nc\n", "a\nB\nc\n"},
    {"", "x\ny\n"},
    {"x\ny\n", ""},
    {"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nX\n"},
    {"a\nb\n", "a\nb"}, // the last line loses its newline
  };
  std::mt19937 rng(7);
  for (int c = 0; c < 40; ++c) { // random line edits on a 60-line text
    std::string a, b;
    for (int i = 0; i < 60; ++i) {
      std::string line = "host" + std::to_string(i) + "\n";
      a += line;
      int r = rng() % 10;
      if (r == 0)
        continue;                                                // removed
      b += r == 1 ? "changed" + std::to_string(i) + "\n" : line; // changed or kept
      if (r == 2)
        b += "added" + std::to_string(i) + "\n";
    }
    cases.emplace_back(a, b);
  }
  for (auto& [a, b] : cases) {
    auto ours = unified_diff(a, b, "old", "new");
    auto theirs = gnu_diff(a, b);
    // LCS ties may pair lines differently from GNU diff; both must apply to give `b`: check
    // by patch(1), and check the headers and the equal case exactly
    std::ofstream(dir / "p") << ours;
    std::ofstream(dir / "t") << a;
    ASSERT_EQ(
      std::system(("patch -s " + (dir / "t").string() + " " + (dir / "p").string()).c_str()), 0)
      << ours;
    EXPECT_EQ(slurp(dir / "t"), b) << ours;
    EXPECT_EQ(ours.substr(0, 16), theirs.substr(0, 16));
  }
  EXPECT_EQ(unified_diff("same\n", "same\n", "old", "new"), "");
  for (auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
         {"", "x\n"}, {"x\n", ""}, {"a\n", "b\n"}, {"a\nb\n", "a\nc\nb\n"}})
    EXPECT_EQ(unified_diff(a, b, "old", "new"), gnu_diff(a, b)); // one-line hunks: "L", not "L,1"
  EXPECT_EQ(unified_diff("a\nb\nc\n", "a\nB\nc\n", "old", "new"),
            gnu_diff("a\nb\nc\n", "a\nB\nc\n"));
}

TEST_F(published_file_test, unified_diff_of_a_huge_change_is_one_correct_hunk) {
  std::string a, b;
  for (int i = 0; i < 3000; ++i) {
    a += "10.0.0." + std::to_string(i) + " n" + std::to_string(i) + "\n";
    b += "10.1.0." + std::to_string(i) + " n" + std::to_string(i) + "\n";
  }
  auto d = unified_diff(a, b, "old", "new", 3, 100);
  EXPECT_NE(d.find("@@ -1,3000 +1,3000 @@\n"), std::string::npos);
  std::ofstream(dir / "p") << d;
  std::ofstream(dir / "t") << a;
  ASSERT_EQ(std::system(("patch -s " + (dir / "t").string() + " " + (dir / "p").string()).c_str()),
            0);
  EXPECT_EQ(slurp(dir / "t"), b);
}

} // namespace
