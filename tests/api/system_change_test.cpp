// api::system_change on real files in a temporary directory: the dry run reads and diffs
// without writing, apply publishes then runs the actions and stops at the first error.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include "api/system_change.hpp"
#include "base/published_file.hpp"

namespace {

namespace fs = std::filesystem;
using cws::api::system_action;
using cws::api::system_change;

struct system_change_test : ::testing::Test {
  fs::path dir = fs::temp_directory_path() / ("cws-sysch-" + std::to_string(::getpid()));
  void SetUp() override {
    fs::create_directories(dir);
  }
  void TearDown() override {
    fs::remove_all(dir);
  }
  std::string slurp(const fs::path& p) {
    std::string s;
    EXPECT_FALSE(cws::base::read_file(p, 1 << 20, s));
    return s;
  }
};

TEST_F(system_change_test, dry_run_shows_each_diff_and_the_actions_and_writes_nothing) {
  std::ofstream(dir / "a") << "one\ntwo\n";
  std::ofstream(dir / "same") << "x\n";
  bool ran = false;
  system_change c;
  c.files = {{dir / "a", "one\nthree\n"}, {dir / "same", "x\n"}, {dir / "new", "n\nm\n"}};
  c.actions = {{"reload it", [&](std::string&) {
                  ran = true;
                  return std::error_code{};
                }}};
  std::string error;
  auto a = (dir / "a").string(), n = (dir / "new").string();
  EXPECT_EQ(c.dry_run_text(&error),
            "--- " + a + "\n+++ " + a + "\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n"
              + (dir / "same").string() + ": unchanged\n" + "--- " + n + "\n+++ " + n
              + "\n@@ -0,0 +1,2 @@\n+n\n+m\n" + "would run: reload it\n");
  EXPECT_EQ(error, "");
  EXPECT_FALSE(ran);
  EXPECT_EQ(slurp(dir / "a"), "one\ntwo\n");
  EXPECT_FALSE(fs::exists(dir / "new"));
}

TEST_F(system_change_test, dry_run_names_an_unreadable_file) {
  std::ofstream(dir / "big") << std::string(100, 'x');
  system_change c;
  c.read_limit = 10;
  c.files = {{dir / "big", "y\n"}};
  std::string error;
  EXPECT_EQ(c.dry_run_text(&error), "");
  EXPECT_EQ(error.rfind("cannot read " + (dir / "big").string() + ": ", 0), 0u) << error;
}

TEST_F(system_change_test, apply_publishes_every_file_then_runs_the_actions_in_order) {
  std::ofstream(dir / "a") << "old\n";
  struct stat before {};
  ASSERT_EQ(::stat((dir / "a").c_str(), &before), 0);
  std::vector<std::string> order;
  system_change c;
  c.files = {{dir / "a", "new\n"}, {dir / "b", "b\n", 0600}};
  c.actions = {{"first",
                [&](std::string&) {
                  order.push_back("first:" + slurp(dir / "a") + slurp(dir / "b"));
                  return std::error_code{};
                }},
               {"second", [&](std::string&) {
                  order.push_back("second");
                  return std::error_code{};
                }}};
  std::string message;
  EXPECT_FALSE(c.apply(message)) << message;
  EXPECT_EQ(order, (std::vector<std::string>{"first:new\nb\n", "second"}));
  struct stat after {};
  ASSERT_EQ(::stat((dir / "a").c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino); // replaced by rename, not written in place
  ASSERT_EQ(::stat((dir / "b").c_str(), &after), 0);
  EXPECT_EQ(after.st_mode & 0777, 0600u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
}

TEST_F(system_change_test, the_first_error_stops_and_is_named) {
  std::ofstream(dir / "a") << "old\n";
  fs::create_directories(dir / "d");
  bool ran = false;
  system_change c;
  c.files = {{dir / "d", "cannot\n"}, {dir / "a", "new\n"}};
  c.actions = {{"reload", [&](std::string&) {
                  ran = true;
                  return std::error_code{};
                }}};
  std::string message;
  EXPECT_TRUE(c.apply(message));
  EXPECT_EQ(message.rfind("cannot write " + (dir / "d").string() + ": ", 0), 0u) << message;
  EXPECT_EQ(slurp(dir / "a"), "old\n");
  EXPECT_FALSE(ran);

  system_change d;
  d.files = {{dir / "a", "new\n"}};
  d.actions = {{"reload dnsmasq",
                [](std::string& m) {
                  m = "exit status 1";
                  return std::make_error_code(std::errc::io_error);
                }},
               {"never", [&](std::string&) {
                  ran = true;
                  return std::error_code{};
                }}};
  EXPECT_TRUE(d.apply(message));
  EXPECT_EQ(message, "reload dnsmasq: exit status 1");
  EXPECT_EQ(slurp(dir / "a"), "new\n");
  EXPECT_FALSE(ran);
}

} // namespace
