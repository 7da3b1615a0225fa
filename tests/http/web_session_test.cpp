// The web console's side of the daemon (docs/web.md) against a real clusterwsd over TLS: its
// embedded files and their headers, the session cookie, the CSRF token, the Origin of a
// WebSocket, logout and expiry.

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

namespace {

using namespace std::chrono_literals;
using cws::test::reply;
using cws::test::run_tool;
using cws::test::slurp;
using headers = std::map<std::string, std::string>;

const std::string login_body = R"({"userName":"root","userPW":"rootpw"})";

class web_session_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    std::ofstream{d_->home() / "clusterws.conf", std::ios::app} << "ui_session_seconds = 600\n";
    ASSERT_EQ(run_tool(d_->home(), "mkdef 'cn[1-2]' groups=compute,all mgt=ipmi").rc, 0);
    d_->start();
  }

  static void TearDownTestSuite() {
    EXPECT_EQ(d_->stop(), 0);
    delete d_;
    delete dir_;
  }

  /// Logs in as root; the cookie's `name=value` and the body's csrf.
  std::pair<std::string, std::string> login() {
    auto r = client.request("POST", "/clusterws/session", login_body,
                            {{"Content-Type", "application/json"}});
    EXPECT_EQ(r.status, 201u) << r.body;
    std::smatch m;
    std::string cookie = r.headers["Set-Cookie"];
    EXPECT_TRUE(std::regex_search(cookie, m, std::regex{"^(clusterws_session=[0-9a-f-]+);"}))
      << cookie;
    std::string pair = m.size() > 1 ? m[1].str() : "";
    std::smatch c;
    EXPECT_TRUE(std::regex_search(r.body, c, std::regex{"\"csrf\":\"([0-9a-f]{64})\""})) << r.body;
    return {pair, c.size() > 1 ? c[1].str() : ""};
  }

  /// The raw answer to a WebSocket upgrade of /events with `extra` header lines.
  std::string upgrade(const std::string& extra) {
    std::string host = "127.0.0.1:" + std::to_string(d_->port());
    return client.exchange("GET /clusterws/events HTTP/1.1\r\nHost: " + host
                             + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                               "Sec-WebSocket-Version: 13\r\n"
                             + extra + "\r\n",
                           1s);
  }

  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* web_session_test::dir_ = nullptr;
cws::test::daemon* web_session_test::d_ = nullptr;

TEST_F(web_session_test, the_page_is_served_with_its_security_headers_and_etag) {
  auto r = client.get("/clusterws/ui/");
  ASSERT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find("<html"), std::string::npos);
  EXPECT_EQ(r.headers["Content-Type"], "text/html; charset=utf-8");
  EXPECT_EQ(r.headers["Content-Security-Policy"],
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  EXPECT_EQ(r.headers["X-Content-Type-Options"], "nosniff");
  EXPECT_EQ(r.headers["Referrer-Policy"], "no-referrer");
  EXPECT_EQ(r.headers["Cache-Control"], "no-cache");
  EXPECT_TRUE(std::regex_match(r.headers["ETag"], std::regex{"\"[0-9a-f]{64}\""}))
    << r.headers["ETag"];
  // the same under /xcatws, and each file with its type
  EXPECT_EQ(client.get("/xcatws/ui/index.html").body, r.body);
  EXPECT_EQ(client.get("/clusterws/ui/app.js").headers["Content-Type"],
            "text/javascript; charset=utf-8");
  EXPECT_EQ(client.get("/clusterws/ui/app.css").headers["Content-Type"], "text/css; charset=utf-8");
  auto lic = client.get("/clusterws/ui/LICENSES.txt");
  EXPECT_EQ(lic.status, 200u);
  EXPECT_NE(lic.body.find("@xterm/xterm"), std::string::npos);
}

TEST_F(web_session_test, a_known_etag_is_answered_304_and_head_sends_no_body) {
  auto r = client.get("/clusterws/ui/app.js");
  ASSERT_EQ(r.status, 200u);
  auto etag = r.headers["ETag"];
  auto again = client.request("GET", "/clusterws/ui/app.js", {}, {{"If-None-Match", etag}});
  EXPECT_EQ(again.status, 304u);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(client.request("GET", "/clusterws/ui/app.js", {}, {{"If-None-Match", "\"x\""}}).status,
            200u);
  // (raw: the client's parser would wait for the body a HEAD's length announces)
  auto head = client.exchange("HEAD /clusterws/ui/app.js HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              "Connection: close\r\n\r\n");
  EXPECT_EQ(head.substr(0, 12), "HTTP/1.1 200") << head;
  EXPECT_NE(head.find("Content-Length: " + std::to_string(r.body.size()) + "\r\n"),
            std::string::npos)
    << head;
  EXPECT_EQ(head.size(), head.find("\r\n\r\n") + 4) << "no body after the head";
}

TEST_F(web_session_test, the_root_redirects_to_the_page_and_an_unknown_file_is_404) {
  auto root = client.get("/");
  EXPECT_EQ(root.status, 302u);
  EXPECT_EQ(root.headers["Location"], "/clusterws/ui/");
  EXPECT_EQ(client.get("/clusterws/ui").headers["Location"], "/clusterws/ui/");
  EXPECT_EQ(client.get("/clusterws/ui/nothing.js").status, 404u);
  EXPECT_EQ(client.get("/clusterws/ui/../ui/app.js").status, 404u);
  EXPECT_EQ(client.request("POST", "/clusterws/ui/app.js").status, 405u);
}

TEST_F(web_session_test, a_login_sets_a_strict_cookie_and_get_session_shows_it) {
  auto r = client.request("POST", "/clusterws/session", login_body,
                          {{"Content-Type", "application/json"}});
  ASSERT_EQ(r.status, 201u) << r.body;
  auto cookie = r.headers["Set-Cookie"];
  EXPECT_TRUE(std::regex_match(cookie, std::regex{"clusterws_session=[0-9a-f-]{36}; Path=/; "
                                                  "Max-Age=600; Secure; HttpOnly; "
                                                  "SameSite=Strict"}))
    << cookie;
  EXPECT_TRUE(std::regex_search(r.body, std::regex{"\"user\":\"root\""})) << r.body;
  EXPECT_TRUE(std::regex_search(r.body, std::regex{"\"expire\":\"\\d{4}-\\d\\d-\\d\\dT"}))
    << r.body;
  EXPECT_EQ(r.headers["X-Content-Type-Options"], "nosniff");
  auto [pair, csrf] = login();
  auto s = client.request("GET", "/clusterws/session", {}, {{"Cookie", "a=b; " + pair}});
  EXPECT_EQ(s.status, 200u) << s.body;
  EXPECT_NE(s.body.find("\"csrf\":\"" + csrf + "\""), std::string::npos) << s.body;
  // the cookie reads the API, and the token is not a session of the local socket's kind
  auto nodes = client.request("GET", "/clusterws/nodes", {}, {{"Cookie", pair}});
  EXPECT_EQ(nodes.status, 200u);
  EXPECT_NE(nodes.body.find("cn1"), std::string::npos);
  EXPECT_EQ(client.get("/clusterws/session").status, 401u); // no cookie
  // the login is in the audit log, without the cookie's value
  auto audit = slurp(d_->home() / "audit.log");
  EXPECT_NE(audit.find("/clusterws/session"), std::string::npos);
  EXPECT_EQ(audit.find(pair.substr(pair.find('=') + 1)), std::string::npos);
}

TEST_F(web_session_test, a_wrong_password_is_refused_with_the_apis_message_and_backoff) {
  auto body = R"({"userName":"root","userPW":"wrong"})";
  auto r
    = client.request("POST", "/clusterws/session", body, {{"Content-Type", "application/json"}});
  EXPECT_EQ(r.status, 401u);
  EXPECT_EQ(r.body, "{\"error\":\"Authentication failure\",\"errorcode\":\"2\"}\n");
  EXPECT_EQ(r.headers.count("Set-Cookie"), 0u);
  // the API's backoff: after login_backoff_after (3) failures the next ones wait
  for (int i = 0; i < 3; ++i) {
    client.request("POST", "/clusterws/session", body, {{"Content-Type", "application/json"}});
  }
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(
    client.request("POST", "/clusterws/session", body, {{"Content-Type", "application/json"}})
      .status,
    401u);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 200ms);
  std::this_thread::sleep_for(1s); // the delay passed: the next test's login is checked
}

TEST_F(web_session_test, a_change_with_the_cookie_needs_the_csrf_token) {
  auto [pair, csrf] = login();
  auto body = R"({"groups":"compute,all","mgt":"ipmi"})";
  auto no = client.request("POST", "/clusterws/nodes/web1", body,
                           {{"Cookie", pair}, {"Content-Type", "application/json"}});
  EXPECT_EQ(no.status, 403u);
  EXPECT_NE(no.body.find("CSRF"), std::string::npos) << no.body;
  auto wrong = client.request("POST", "/clusterws/nodes/web1", body,
                              {{"Cookie", pair},
                               {"X-CSRF-Token", std::string(64, 'a')},
                               {"Content-Type", "application/json"}});
  EXPECT_EQ(wrong.status, 403u);
  EXPECT_EQ(run_tool(d_->home(), "lsdef web1").rc, 1); // nothing was made
  auto ok = client.request(
    "POST", "/clusterws/nodes/web1", body,
    {{"Cookie", pair}, {"X-CSRF-Token", csrf}, {"Content-Type", "application/json"}});
  EXPECT_EQ(ok.status, 201u) << ok.body;
  // explicit credentials win over the cookie, and need no CSRF token
  auto basic = client.request("DELETE", "/clusterws/nodes/web1", {},
                              {{"Cookie", pair}, {"Authorization", "Basic cm9vdDpyb290cHc="}});
  EXPECT_EQ(basic.status, 200u) << basic.body;
}

TEST_F(web_session_test, a_websocket_with_the_cookie_must_come_from_the_services_origin) {
  auto [pair, csrf] = login();
  std::string own = "https://127.0.0.1:" + std::to_string(d_->port());
  auto bad = upgrade("Cookie: " + pair + "\r\nOrigin: https://evil.example\r\n");
  EXPECT_EQ(bad.substr(0, 12), "HTTP/1.1 403") << bad;
  auto none = upgrade("Cookie: " + pair + "\r\n");
  EXPECT_EQ(none.substr(0, 12), "HTTP/1.1 403") << none;
  auto good = upgrade("Cookie: " + pair + "\r\nOrigin: " + own + "\r\n");
  EXPECT_EQ(good.substr(0, 12), "HTTP/1.1 101") << good;
}

TEST_F(web_session_test, logout_revokes_the_session_and_clears_the_cookie) {
  auto [pair, csrf] = login();
  EXPECT_EQ(client.request("DELETE", "/clusterws/session", {}, {{"Cookie", pair}}).status, 403u);
  auto out = client.request("DELETE", "/clusterws/session", {},
                            {{"Cookie", pair}, {"X-CSRF-Token", csrf}});
  EXPECT_EQ(out.status, 200u) << out.body;
  EXPECT_NE(out.headers["Set-Cookie"].find("clusterws_session=; Path=/; Max-Age=0"),
            std::string::npos);
  EXPECT_EQ(client.request("GET", "/clusterws/session", {}, {{"Cookie", pair}}).status, 401u);
  EXPECT_EQ(client.request("GET", "/clusterws/nodes", {}, {{"Cookie", pair}}).status, 401u);
}

TEST_F(web_session_test, the_session_endpoints_are_refused_on_the_local_socket) {
  auto sock = cws::test::announced_socket(*d_);
  if (sock.empty()) {
    GTEST_SKIP() << "no local socket";
  }
  auto r = run_tool(d_->home(), "curl -s --unix-socket " + sock
                                  + " -X POST -d '{}' http://localhost/clusterws/session");
  EXPECT_NE(r.out.find("not available on the local socket"), std::string::npos) << r.out;
}

TEST(web_session_expiry, a_session_ends_after_ui_session_seconds) {
  cws::test::temp_dir dir;
  cws::test::daemon d(dir.path / "home", "rootpw");
  std::ofstream{d.home() / "clusterws.conf", std::ios::app} << "ui_session_seconds = 2\n";
  d.start();
  cws::test::https_client client{d.ca(), d.port()};
  auto r = client.request("POST", "/clusterws/session", login_body,
                          {{"Content-Type", "application/json"}});
  ASSERT_EQ(r.status, 201u);
  EXPECT_NE(r.headers["Set-Cookie"].find("Max-Age=2;"), std::string::npos);
  auto pair = r.headers["Set-Cookie"].substr(0, r.headers["Set-Cookie"].find(';'));
  EXPECT_EQ(client.request("GET", "/clusterws/session", {}, {{"Cookie", pair}}).status, 200u);
  std::this_thread::sleep_for(3200ms);
  EXPECT_EQ(client.request("GET", "/clusterws/session", {}, {{"Cookie", pair}}).status, 401u);
  EXPECT_EQ(d.stop(), 0);
}

} // namespace
