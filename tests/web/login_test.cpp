// The login page in Debian's chromium (tests/web/login.mjs) against a real clusterwsd:
// wrong password, login, the CSRF refusal, logout, no console errors or CSP violations.

#include <gtest/gtest.h>

#include "../store/temp_home.hpp"
#include "../support/browser.hpp"
#include "../support/daemon.hpp"

namespace {

using cws::test::run_tool;

TEST(web_login, the_login_page_logs_in_refuses_a_forged_write_and_logs_out) {
  if (!cws::test::browser_available()) {
    GTEST_SKIP() << "no /usr/bin/chromium or web/node_modules/playwright-core";
  }
  cws::test::temp_dir dir;
  cws::test::daemon d(dir.path / "home", "rootpw");
  ASSERT_EQ(run_tool(d.home(), "mkdef 'cn[1-2]' groups=compute,all mgt=ipmi").rc, 0);
  d.start();
  auto r = cws::test::run_browser(d, "login.mjs", "root", "rootpw", cws::test::shots_dir(dir.path));
  EXPECT_EQ(r.rc, 0) << r.out;
  // the forged write made nothing
  EXPECT_EQ(run_tool(d.home(), "lsdef forged1").rc, 1);
  EXPECT_EQ(d.stop(), 0);
}

} // namespace
