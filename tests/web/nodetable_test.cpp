// The node table in Debian's chromium (tests/web/nodetable.mjs) against a real clusterwsd
// holding 100,000 nodes: first paint, a noderange filter, paging to the end, sorting,
// keyboard and selection, a change arriving by event, a bad noderange's error; the three
// speed figures printed (docs/web.md, docs/performance.md).

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <sstream>

#include "../store/temp_home.hpp"
#include "../support/browser.hpp"
#include "../support/daemon.hpp"

namespace {

using cws::test::run_tool;

TEST(web_nodetable, a_table_of_100000_nodes_filters_pages_sorts_and_follows_events) {
  if (!cws::test::browser_available()) {
    GTEST_SKIP() << "no /usr/bin/chromium or web/node_modules/playwright-core";
  }
  cws::test::temp_dir dir;
  cws::test::daemon d(dir.path / "home", "rootpw");
  // one mkdef of a range: the store's bulk path (bench/nodetable.sh: under a second)
  auto t0 = std::chrono::steady_clock::now();
  auto r
    = run_tool(d.home(), "mkdef 'node[000001-100000]' groups=compute,all mgt=ipmi arch=x86_64");
  ASSERT_EQ(r.rc, 0) << r.out;
  r = run_tool(d.home(), "chdef 'node[000001-000500]' status=booted");
  ASSERT_EQ(r.rc, 0) << r.out;
  std::cout << "100,000 nodes defined in "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
            << " s\n";
  d.start();
  auto b
    = cws::test::run_browser(d, "nodetable.mjs", "root", "rootpw", cws::test::shots_dir(dir.path),
                             {{"CWS_NODES", "100000"}}, std::chrono::seconds(180));
  EXPECT_EQ(b.rc, 0) << b.out;
  // the figures, for the log of the run
  std::istringstream lines{b.out};
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("NODETABLE ", 0) == 0) {
      std::cout << line << "\n";
    }
  }
  EXPECT_EQ(d.stop(), 0);
}

} // namespace
