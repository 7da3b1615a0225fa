// The compiled-template cache (api/template_cache): a kept template renders exactly what a
// fresh parse renders (the shipped templates, golden against the uncached path); a change to
// the template or to a file it includes (in place, or replaced by rename) is seen on the next
// fetch; racy files are not kept; the bounds evict the least recently used; threads share it.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "../store/temp_home.hpp"
#include "api/template_cache.hpp"
#include "store/credentials.hpp"
#include "store/database.hpp"
#include "store/tables.hpp"

namespace {

using namespace cws;
using namespace std::chrono_literals;

/// Fixed values: renders depend on the template alone.
struct fixed_values : api::template_values {
  std::optional<std::string> node_column(std::string_view table,
                                         std::string_view column) const override {
    return std::string{table} + "." + std::string{column};
  }
  std::optional<std::string> row_column(std::string_view, std::string_view,
                                        std::string_view column) const override {
    return std::string{column};
  }
  std::optional<std::string> crypted(std::string_view, std::string_view,
                                     std::string_view) const override {
    return std::string{"$6$salt$hash"};
  }
  std::string variable(std::string_view name) const override {
    return "<" + std::string{name} + ">";
  }
};

class template_cache_test : public ::testing::Test {
 protected:
  /// Writes `name` in place (same inode) and dates it `age` seconds back: the times the
  /// cache compares differ from any earlier write's whatever the clock's granularity.
  void write(const std::string& name, const std::string& text, int age) {
    std::ofstream{dir.path / name} << text;
    date(name, age);
  }

  void date(const std::string& name, int age) {
    struct timespec times[2];
    times[0].tv_sec = epoch - age; // (whole seconds: two files dated alike have equal times)
    times[0].tv_nsec = 0;
    times[1] = times[0];
    ASSERT_EQ(utimensat(AT_FDCWD, (dir.path / name).c_str(), times, 0), 0);
  }

  std::string render(api::template_cache& cache, const std::string& name) {
    return cache.get(dir.path / name, {})->render("cn01", values);
  }

  std::string uncached(const std::filesystem::path& file) {
    auto read = api::file_reader(1 << 20);
    return api::compiled_template::parse(read(file), file, {}, read).render("cn01", values);
  }

  static api::template_cache_limits no_racy(size_t entries = 64, size_t bytes = 16 << 20) {
    api::template_cache_limits l;
    l.max_entries = entries;
    l.max_bytes = bytes;
    l.racy_window = 0s;
    return l;
  }

  const time_t epoch = time(nullptr);
  test::temp_dir dir;
  fixed_values values;
};

TEST_F(template_cache_test, a_kept_template_renders_what_a_fresh_parse_renders) {
  // golden: the shipped templates, rendered from the store, through the cache (parsed, then
  // kept) and without it, byte for byte
  auto share = std::filesystem::path{CLUSTERWS_SOURCE_DIR} / "share" / "install";
  store::database db{dir.path / "db"};
  db.write([](store::write_txn& w) {
    w.put(store::object_type::group, "compute", {{"serialport", "0"}, {"serialspeed", "115200"}});
    w.put(store::object_type::node, "cn01", {{"groups", "compute"}, {"xcatmaster", "10.0.0.1"}});
    w.put(store::object_type::site, "clustersite",
          {{"master", "10.0.0.254"}, {"domain", "cluster.test"}});
  });
  // a stored crypt hash is rendered as it is (a clear one gets a fresh salt per render)
  ASSERT_TRUE(store::apply(db, [](store::write_txn& t) {
                return store::set_rows(
                  t, *store::find_table("passwd"), {{"key", "system"}},
                  {{"username", "root"}, {"password", store::hash_password_sha512("pw")}});
              }).ok());
  write("part.inc", "part for #HOSTNAME# #TABLE:nodehm:$NODE:serialspeed#\n", 100);
  write("site.tmpl", "head #CWSVAR:token#\n#INCLUDE:part.inc#tail #TABLE:site:key=master:value#\n",
        100);
  std::map<std::string, std::string> vars{{"status_url", "http://10.0.0.1:8080/boot/node/cn01"},
                                          {"token", "t0ken"},
                                          {"mirror_host", "10.0.0.1"},
                                          {"mirror_dir", "/debian"},
                                          {"repo_url", "http://10.0.0.1/debian"}};
  api::template_cache cache{no_racy()};
  auto txn = db.read();
  store::cluster_view view{txn};
  api::store_template_values store_values{view, "cn01", vars};
  size_t n = 0;
  for (const auto& file : {share / "debian" / "compute.debian12.tmpl",
                           share / "rh" / "compute.rhels9.tmpl", dir.path / "site.tmpl"}) {
    auto read = api::file_reader(1 << 20);
    auto fresh
      = api::compiled_template::parse(read(file), file, {}, read).render("cn01", store_values);
    EXPECT_NE(fresh.find("t0ken"), std::string::npos) << file;
    EXPECT_EQ(cache.get(file, {})->render("cn01", store_values), fresh) << file;
    EXPECT_EQ(cache.get(file, {})->render("cn01", store_values), fresh) << file;
    ++n;
    EXPECT_EQ(cache.stats().parses, n);
    EXPECT_EQ(cache.stats().hits, n);
  }
}

TEST_F(template_cache_test, a_change_to_the_template_or_an_include_is_seen_on_the_next_fetch) {
  api::template_cache cache{no_racy()};
  write("a.inc", "one", 100);
  write("t.tmpl", "[#INCLUDE:a.inc#]", 100);
  EXPECT_EQ(render(cache, "t.tmpl"), "[one]");
  EXPECT_EQ(render(cache, "t.tmpl"), "[one]");
  EXPECT_EQ(cache.stats().parses, 1u);

  // the include edited in place, same size (only its times tell)
  write("a.inc", "two", 90);
  EXPECT_EQ(render(cache, "t.tmpl"), "[two]");
  EXPECT_EQ(cache.stats().parses, 2u);
  // the template itself
  write("t.tmpl", "(#INCLUDE:a.inc#)", 90);
  EXPECT_EQ(render(cache, "t.tmpl"), "(two)");
  // the include replaced by rename (a new inode) with the old one's size and time
  write("new.inc", "six", 90);
  std::filesystem::rename(dir.path / "new.inc", dir.path / "a.inc");
  EXPECT_EQ(render(cache, "t.tmpl"), "(six)");
  EXPECT_EQ(cache.stats().parses, 4u);
  EXPECT_EQ(render(cache, "t.tmpl"), "(six)");
  EXPECT_EQ(cache.stats().parses, 4u);
  EXPECT_EQ(cache.stats().entries, 1u);
  // an include removed: the fetch fails as an uncached parse does
  std::filesystem::remove(dir.path / "a.inc");
  EXPECT_THROW(render(cache, "t.tmpl"), api::template_error);
  EXPECT_THROW(uncached(dir.path / "t.tmpl"), api::template_error);
  write("a.inc", "back", 80);
  EXPECT_EQ(render(cache, "t.tmpl"), "(back)");
}

TEST_F(template_cache_test, a_file_modified_within_the_racy_window_is_not_kept) {
  // a second write within the file system's timestamp granularity would leave the times as
  // they were: a file younger than the window is parsed again on every fetch
  api::template_cache cache; // (the default window: 1 s)
  std::ofstream{dir.path / "t.tmpl"} << "fresh #HOSTNAME#";
  EXPECT_EQ(render(cache, "t.tmpl"), "fresh cn01");
  EXPECT_EQ(render(cache, "t.tmpl"), "fresh cn01");
  EXPECT_EQ(cache.stats().parses, 2u);
  EXPECT_EQ(cache.stats().entries, 0u);
  date("t.tmpl", 100); // (utimensat moves ctime to now: still racy)
  render(cache, "t.tmpl");
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST_F(template_cache_test, the_bounds_evict_the_least_recently_used) {
  for (const char* name : {"a.tmpl", "b.tmpl", "c.tmpl"}) {
    write(name, std::string{name} + " #HOSTNAME#", 100);
  }
  {
    api::template_cache cache{no_racy(2)};
    render(cache, "a.tmpl");
    render(cache, "b.tmpl");
    render(cache, "a.tmpl"); // (a used after b: b is the least recently used)
    render(cache, "c.tmpl");
    auto s = cache.stats();
    EXPECT_EQ(s.entries, 2u);
    EXPECT_EQ(s.evictions, 1u);
    EXPECT_EQ(s.parses, 3u);
    render(cache, "a.tmpl");
    render(cache, "c.tmpl");
    EXPECT_EQ(cache.stats().parses, 3u); // a and c kept
    render(cache, "b.tmpl");
    EXPECT_EQ(cache.stats().parses, 4u); // b was not
  }
  {
    // by bytes: room for about one small template; a large one is not kept at all
    api::template_cache probe{no_racy()};
    probe.get(dir.path / "a.tmpl", {});
    auto one = probe.stats().bytes;
    api::template_cache cache{no_racy(64, one + one / 2)};
    render(cache, "a.tmpl");
    render(cache, "b.tmpl");
    EXPECT_EQ(cache.stats().entries, 1u);
    EXPECT_EQ(cache.stats().evictions, 1u);
    EXPECT_LE(cache.stats().bytes, one + one / 2);
    write("big.tmpl", std::string(4096, 'x'), 100);
    EXPECT_EQ(render(cache, "big.tmpl"), std::string(4096, 'x'));
    EXPECT_EQ(cache.stats().entries, 1u);
    EXPECT_EQ(cache.stats().bytes, one); // (b's, the same size as a's)
  }
  {
    api::template_cache off{no_racy(0)};
    render(off, "a.tmpl");
    render(off, "a.tmpl");
    EXPECT_EQ(off.stats().parses, 2u);
    EXPECT_EQ(off.stats().entries, 0u);
  }
}

TEST_F(template_cache_test, threads_fetch_while_an_include_is_replaced) {
  // readers on several threads (the boot listener's store readers) while the include is
  // replaced by rename again and again: every render is one whole version, never a mix
  for (int i = 0; i < 4; ++i) {
    write("t" + std::to_string(i) + ".tmpl", "t" + std::to_string(i) + "[#INCLUDE:a.inc#]", 100);
  }
  write("a.inc", "version-0", 100);
  api::template_cache cache{no_racy(3)}; // (fewer entries than templates: evictions too)
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::atomic<int> renders{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 6; ++r) {
    readers.emplace_back([&, r] {
      fixed_values v;
      for (int i = 0; i < 400; ++i) {
        auto name = "t" + std::to_string((i + r) % 4) + ".tmpl";
        std::string out;
        try {
          out = cache.get(dir.path / name, {})->render("cn01", v);
        } catch (const api::template_error&) {
          ++bad;
          continue;
        }
        auto open = out.find('[');
        auto inner = out.substr(open + 1, out.size() - open - 2);
        if (out.substr(0, open) != name.substr(0, 2) || inner.rfind("version-", 0) != 0
            || inner.size() != 9) {
          ++bad;
        }
        ++renders;
      }
    });
  }
  std::thread writer{[&] {
    for (int i = 1; i < 60 && renders < 2400; ++i) {
      auto tmp = "a.inc.new" + std::to_string(i);
      write(tmp, "version-" + std::to_string(i % 10), 100 - i);
      std::filesystem::rename(dir.path / tmp, dir.path / "a.inc");
      std::this_thread::sleep_for(1ms);
    }
    done = true;
  }};
  for (auto& t : readers) {
    t.join();
  }
  writer.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(renders.load(), 2400);
  // and the last version is what a fetch now gives
  auto last = uncached(dir.path / "t0.tmpl");
  EXPECT_EQ(render(cache, "t0.tmpl"), last);
  EXPECT_LE(cache.stats().entries, 3u);
}

} // namespace
