// The copy request layer alone: synclist parsing, copy_root confinement (symlinks, ..), the
// memory cap and the limits, on real files in a temporary directory.

#include <gtest/gtest.h>

#include <fstream>
#include <pwd.h>
#include <unistd.h>

#include "../store/temp_home.hpp"
#include "api/copy.hpp"

namespace {

namespace fs = std::filesystem;
using cws::api::build_copy;
using cws::api::copy_config;
using cws::api::copy_entry;
using cws::api::copy_request;
using cws::api::parse_synclist;

void spit(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream{p} << text;
}

TEST(synclist, common_forms_and_refusals) {
  std::vector<copy_entry> e;
  EXPECT_EQ(parse_synclist("# comment\n\n/etc/hosts -> /etc/hosts\n"
                           "  /a /b   ->  /dir/   # trailing comment\n",
                           e),
            "");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].sources, std::vector<std::string>{"/etc/hosts"});
  EXPECT_EQ(e[0].target, "/etc/hosts");
  EXPECT_EQ(e[1].sources, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(e[1].target, "/dir/");
  EXPECT_EQ(parse_synclist("/a -> /b\nAPPEND:\n/c -> /d\n", e),
            "line 2: the APPEND: section is not supported (only `source... -> destination` "
            "lines are).");
  EXPECT_EQ(parse_synclist("/a /b\n", e), "line 1: expected `source... -> destination`.");
  EXPECT_EQ(parse_synclist("-> /b\n", e), "line 1: expected `source... -> destination`.");
  EXPECT_EQ(parse_synclist("/a -> ->\n", e), "line 1: expected `source... -> destination`.");
  EXPECT_EQ(parse_synclist("/a -> /b /c\n", e), "line 1: expected `source... -> destination`.");
  EXPECT_EQ(parse_synclist("/a -> (n1,n2) /b\n", e),
            "line 1: node lists in a synclist line are not supported.");
  EXPECT_EQ(parse_synclist("# nothing\n", e), "the synclist has no `source -> destination` line.");
}

class copy_build : public ::testing::Test {
 protected:
  void SetUp() override {
    root = fs::canonical(dir.path) / "root";
    spit(root / "small", "s");
    spit(root / "big", std::string(2000, 'b'));
    spit(root / "tree" / "sub" / "leaf", "l");
    spit(dir.path / "outside", "o");
    cfg.root = root;
    cfg.memory_max = 1000;
    cfg.files_max = 10;
  }

  cws::api::api_result build(copy_request req) {
    return build_copy(req, cfg, spec);
  }

  static copy_request one(std::vector<std::string> src, std::string target, bool confined) {
    copy_request r;
    r.entries.push_back({std::move(src), std::move(target)});
    r.confined = confined;
    return r;
  }

  cws::test::temp_dir dir;
  fs::path root;
  copy_config cfg;
  std::shared_ptr<const cws::ssh::copy_spec> spec;
};

TEST_F(copy_build, small_files_are_held_once_big_ones_streamed) {
  auto r = build(one({(root / "small").string(), (root / "big").string()}, "/t", true));
  ASSERT_TRUE(r.ok()) << r.messages.front();
  const auto& g = spec->push.at(0);
  EXPECT_TRUE(g.into); // several sources
  ASSERT_EQ(g.files.size(), 2u);
  ASSERT_TRUE(g.files[0].data);
  EXPECT_EQ(*g.files[0].data, "s");
  EXPECT_FALSE(g.files[1].data); // over copy_memory_max: streamed from disk
  EXPECT_EQ(g.files[1].local, root / "big");
}

TEST_F(copy_build, confined_sources_must_resolve_inside_copy_root) {
  fs::create_symlink(dir.path / "outside", root / "escape");
  fs::create_symlink(root / "small", root / "inside-link");
  for (const auto& bad : {(dir.path / "outside").string(), (root / ".." / "outside").string(),
                          (root / "escape").string(), std::string{"small"}}) {
    auto r = build(one({bad}, "/t", true));
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error, cws::api::errc::bad_request);
    EXPECT_NE(r.messages.front().find("is not inside " + root.string() + " (copy_root)"),
              std::string::npos)
      << r.messages.front();
  }
  // no link is followed under copy_root, even one to a file inside it (issue #27, N2)
  EXPECT_FALSE(build(one({(root / "inside-link").string()}, "/t", true)).ok());
  // a symlink inside a tree pointing out is refused too
  fs::create_symlink(dir.path / "outside", root / "tree" / "sub" / "out");
  auto req = one({(root / "tree").string()}, "/t", true);
  req.recursive = true;
  EXPECT_FALSE(build(req).ok());
  // the CLI (not confined) copies what its user reads
  EXPECT_TRUE(build(one({(dir.path / "outside").string()}, "/t", false)).ok());
}

TEST_F(copy_build, directories_need_r_and_count_against_the_limit) {
  auto req = one({(root / "tree").string()}, "/t", false);
  auto r = build(req);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.messages.front().find("is a directory: -R copies directories."), std::string::npos);
  req.recursive = true;
  req.preserve = true;
  ASSERT_TRUE(build(req).ok());
  const auto& files = spec->push.at(0).files;
  ASSERT_EQ(files.size(), 3u); // parents before children
  EXPECT_EQ(files[0].name, "tree");
  EXPECT_TRUE(files[0].directory);
  EXPECT_EQ(files[1].name, "tree/sub");
  EXPECT_EQ(files[2].name, "tree/sub/leaf");
  EXPECT_GE(files[2].mtime, 0);
  cfg.files_max = 2;
  r = build(req);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.messages.front().find("More than 2 files"), std::string::npos);
}

TEST_F(copy_build, pull_and_script_shapes) {
  copy_request req = one({"/var/log/messages"}, dir.path.string(), false);
  req.pull = true;
  ASSERT_TRUE(build(req).ok());
  EXPECT_EQ(spec->pull, "/var/log/messages");
  EXPECT_FALSE(spec->pull_tree);
  req.entries[0].sources.push_back("/etc/hosts");
  EXPECT_FALSE(build(req).ok()); // one file per pull
  // -R -P: a tree, named after its last component, bounded by copy_files_max
  req = one({"/var/log/testlogdir/"}, dir.path.string(), false);
  req.pull = true;
  req.recursive = true;
  cfg.files_max = 7;
  ASSERT_TRUE(build(req).ok());
  EXPECT_TRUE(spec->pull_tree);
  EXPECT_EQ(spec->pull, "/var/log/testlogdir");
  EXPECT_EQ(spec->pull_entries_max, 7u);
  for (const char* nameless : {"/", "//", "/var/..", "/var/.", ".", ""}) {
    req.entries[0].sources = {nameless};
    auto r = build(req);
    EXPECT_FALSE(r.ok()) << nameless;
  }
  req = one({"/x"}, (dir.path / "nodir").string(), false);
  req.pull = true;
  EXPECT_FALSE(build(req).ok());
  req = one({(root / "small").string()}, "/tmp/", false);
  req.execute = true;
  ASSERT_TRUE(build(req).ok());
  EXPECT_TRUE(spec->execute);
  EXPECT_EQ(spec->push.at(0).files.at(0).mode & 0700, 0700u);
  EXPECT_EQ(cws::api::describe(req, "a b"), "xdsh -e " + (root / "small").string() + " a b");
}

} // namespace

namespace {

TEST_F(copy_build, confined_sources_are_read_with_the_callers_rights) {
  if (::geteuid() != 0 || ::getpwnam("nobody") == nullptr) {
    GTEST_SKIP() << "needs root and the nobody account";
  }
  fs::permissions(dir.path, fs::perms(0755));
  spit(root / "private", "p");
  fs::permissions(root / "private", fs::perms(0600));
  auto req = one({(root / "private").string()}, "/t", true);
  auto r = build_copy(req, cfg, spec, "cws-no-such-local-user");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.messages.front().find("Permission denied (read as nobody)"), std::string::npos)
    << r.messages.front();
  fs::permissions(root / "private", fs::perms(0644));
  EXPECT_TRUE(build_copy(req, cfg, spec, "cws-no-such-local-user").ok());
  // the thread has its own rights back
  fs::permissions(root / "private", fs::perms(0600));
  EXPECT_TRUE(build_copy(req, cfg, spec, "root").ok());
  EXPECT_TRUE(build_copy(req, cfg, spec).ok());
}

} // namespace
