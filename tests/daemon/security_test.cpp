// The findings of the adversarial test (issue #12), each replayed against a real clusterwsd
// over TLS: the attack as it was seen, then what must hold now.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

namespace {

using cws::test::run_tool;
using cws::test::slurp;

size_t count_lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

/// The peak resident memory of process `pid`, in KiB (VmHWM).
long peak_rss_kib(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::stol(line.substr(6));
    }
  }
  return -1;
}

class security_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    // a small audit log bound, reached by the test that fills it
    std::ofstream{d_->home() / "clusterws.conf", std::ios::app}
      << "audit_log_max_bytes = 65536\n"
         "login_backoff_after = 1000\nlogin_backoff_user_after = 1000\n"
         "login_backoff_client_after = 1000\n";
    ASSERT_EQ(run_tool(home(), "mkdef 'cn[1-3]' groups=compute,all mgt=kvm").rc, 0);
    ASSERT_EQ(run_tool(home(), "mkdef outside groups=other,all mgt=kvm").rc, 0);
    ASSERT_EQ(run_tool(home(), "echo alicepw | clusterctl passwd alice --password-stdin").rc, 0);
    // alice may change the compute nodes only: a policy row with a noderange
    ASSERT_EQ(run_tool(home(), "mkdef -t policy -o 6 name=alice noderange=compute rule=allow").rc,
              0);
    d_->start();
  }

  static void TearDownTestSuite() {
    EXPECT_EQ(d_->stop(), 0);
    delete d_;
    delete dir_;
  }

  static const std::filesystem::path& home() {
    return d_->home();
  }

  cws::test::reply send(const std::string& method, const std::string& path,
                        const std::string& body = {}, const std::string& extra = {}) {
    return client.request(method, d_->url(path, extra), body);
  }

  std::string lsdef(const std::string& args) {
    return run_tool(home(), "lsdef " + args).out;
  }

  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* security_test::dir_ = nullptr;
cws::test::daemon* security_test::d_ = nullptr;

// 1. Unauthenticated clients grew audit.log by ~32 KB per request.
TEST_F(security_test, unauthenticated_refusals_do_not_grow_the_audit_log) {
  // a daemon of its own: the summary of the refusals is written when it stops
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "rootpw"};
  std::ofstream{d.home() / "clusterws.conf", std::ios::app}
    << "audit_summary_seconds = 86400\nlogin_backoff_after = 1000\n"
       "login_backoff_user_after = 1000\nlogin_backoff_client_after = 1000\n";
  d.start();
  cws::test::https_client c{d.ca(), d.port()};
  auto log = d.home() / "audit.log";
  auto before = std::filesystem::exists(log) ? std::filesystem::file_size(log) : 0;
  std::string long_path = "/clusterws/nodes/" + std::string(12000, 'x');
  for (int i = 0; i < 200; ++i) {
    auto r = c.request("PUT", long_path + (i % 2 ? "?userName=root&userPW=guess" : ""),
                       R"({"groups":"all"})");
    ASSERT_EQ(r.status, 401u);
    EXPECT_EQ(r.headers["Connection"], "close"); // each guess costs a new handshake
  }
  auto after = std::filesystem::exists(log) ? std::filesystem::file_size(log) : 0;
  EXPECT_EQ(after, before) << slurp(log);
  // an authenticated change with a long noderange is written, but bounded with its hash
  auto r
    = c.request("PUT", d.url("/nodes/cn1," + std::string(5000, 'y')), R"({"usercomment":"x"})");
  EXPECT_EQ(r.status, 403u); // 'yyy...' is not a valid name
  auto text = slurp(log);
  auto last = text.substr(text.rfind('\n', text.size() - 2) + 1);
  EXPECT_LT(last.size(), 1400u) << last;
  EXPECT_NE(last.find("...[sha256:"), std::string::npos) << last;
  EXPECT_NE(last.find(", 5004 bytes]"), std::string::npos) << last;
  // the refusals were counted and are written once, at the stop
  EXPECT_EQ(d.stop(), 0);
  text = slurp(log);
  EXPECT_EQ(count_lines(text), 2u) << text;
  const std::string summary = "\"event\":\"refused without valid credentials\"";
  EXPECT_NE(text.find(summary), std::string::npos) << text;
  EXPECT_NE(text.find("\"count\":200,\"clients\":{\"127.0.0.1\":200}}"), std::string::npos) << text;
}

TEST_F(security_test, the_audit_log_is_bounded_and_moved_aside_when_full) {
  auto log = home() / "audit.log";
  for (int i = 0; i < 600; ++i) {
    ASSERT_EQ(
      send("PUT", "/nodes/cn2", R"({"usercomment":"fill )" + std::to_string(i) + "\"}").status,
      200u);
  }
  EXPECT_LE(std::filesystem::file_size(log), 65536u);
  ASSERT_TRUE(std::filesystem::exists(log.string() + ".1"));
  EXPECT_LE(std::filesystem::file_size(log.string() + ".1"), 65536u);
  // the newest line is in the new file
  auto text = slurp(log);
  EXPECT_NE(text.substr(text.rfind('\n', text.size() - 2) + 1)
              .find("\"path\":\"/clusterws/nodes/cn2\",\"noderange\":\"cn2\",\"status\":200}"),
            std::string::npos)
    << text;
}

// 2. nic*.<suffix> keys were checked by their stem only and printed raw by lsdef.
TEST_F(security_test, nic_suffixes_cannot_forge_lines_or_objects) {
  for (std::string key : std::vector<std::string>{
         "nicips.eth0\nObject name: outside", "nicips.eth0=x", "nicips.eth 0",
         "nicips.eth0\xe2\x80\xa8x", "nictypes." + std::string(300, 'a')}) {
    std::string body = "{\"";
    for (char c : key) {
      if (c == '\n') {
        body += "\\n";
      } else {
        body += c;
      }
    }
    body += "\":\"10.0.0.1\"}";
    auto r = client.request("PUT", "/clusterws/nodes/cn1?userName=alice&userPW=alicepw", body);
    EXPECT_EQ(r.status, 403u) << key;
    EXPECT_NE(r.body.find("is not a valid attribute name"), std::string::npos) << r.body;
  }
  // on a group too: nothing forged in the members' listings
  auto r = send("PUT", "/groups/compute", R"({"nicnetworks.ib0\nObject name: x":"n"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(lsdef("cn1").find("Object name: x"), std::string::npos);
  EXPECT_EQ(lsdef("outside").find("10.0.0.1"), std::string::npos);
  // the CLI refuses them as well, and a good suffix still works
  EXPECT_NE(run_tool(home(), "chdef cn1 'nicips.eth0 x=1'").rc, 0);
  EXPECT_EQ(send("PUT", "/nodes/cn1", R"({"nicips.eth0":"10.1.0.1"})").status, 200u);
  EXPECT_NE(lsdef("cn1").find("nicips.eth0=10.1.0.1"), std::string::npos);
  // site keys: no NUL, no controls
  EXPECT_EQ(send("PUT", "/globalconf/attrs/k", "{\"bad\\u0000key\":\"1\"}").status, 403u);
  EXPECT_EQ(send("PUT", "/globalconf/attrs/k", "{\"bad\\u001bkey\":\"1\"}").status, 403u);
}

// 3. Tokens outlived password changes and could renew themselves.
TEST_F(security_test, tokens_die_with_the_password_and_cannot_renew_themselves) {
  ASSERT_EQ(run_tool(home(), "echo bobpw | clusterctl passwd bob --password-stdin").rc, 0);
  ASSERT_EQ(run_tool(home(), "mkdef -t policy -o 7 name=bob rule=allow").rc, 0);
  ASSERT_EQ(send("PUT", "/globalconf/attrs/tokenexpiredays", R"({"tokenexpiredays":"2"})").status,
            200u);
  auto tok = client.request("POST", "/clusterws/tokens", R"({"userName":"bob","userPW":"bobpw"})");
  ASSERT_EQ(tok.status, 201u) << tok.body;
  auto id = tok.body.substr(tok.body.find("\"id\":\"") + 6, 36);
  auto parent_expiry = tok.body.substr(tok.body.find("\"expire\":\""));
  std::map<std::string, std::string> with{{"X-Auth-Token", id}};
  EXPECT_EQ(client.request("GET", "/clusterws/nodes", "", with).status, 200u);
  // a token asks for a token: it expires no later than its parent, even if the site allows
  // longer now
  ASSERT_EQ(send("PUT", "/globalconf/attrs/tokenexpiredays", R"({"tokenexpiredays":"30"})").status,
            200u);
  auto child = client.request("POST", "/clusterws/tokens", "", with);
  ASSERT_EQ(child.status, 201u);
  EXPECT_EQ(child.body.substr(child.body.find("\"expire\":\"")), parent_expiry);
  // GET /tokens lists one's own tokens, by handle, never by id
  auto mine = client.request("GET", "/clusterws/tokens", "", with);
  EXPECT_EQ(mine.status, 200u);
  EXPECT_EQ(mine.body.find(id), std::string::npos);
  EXPECT_EQ(std::count(mine.body.begin(), mine.body.end(), '{'), 3) << mine.body; // 2 tokens
  auto listed = run_tool(home(), "clusterctl tokens bob");
  EXPECT_EQ(count_lines(listed.out), 2u) << listed.out;
  // a new password revokes both
  ASSERT_EQ(run_tool(home(), "echo bobpw2 | clusterctl passwd bob --password-stdin").rc, 0);
  EXPECT_EQ(client.request("GET", "/clusterws/nodes", "", with).status, 401u);
  EXPECT_EQ(count_lines(run_tool(home(), "clusterctl tokens bob").out), 0u);
  // revoke by handle, and removing the user revokes the rest
  auto t2 = client.request("POST", "/clusterws/tokens", R"({"userName":"bob","userPW":"bobpw2"})");
  auto id2 = t2.body.substr(t2.body.find("\"id\":\"") + 6, 36);
  auto handle = run_tool(home(), "clusterctl tokens bob").out.substr(0, 16);
  EXPECT_EQ(run_tool(home(), "clusterctl revoke " + handle).rc, 0);
  EXPECT_EQ(client.request("GET", "/clusterws/nodes", "", {{"X-Auth-Token", id2}}).status, 401u);
  auto t3 = client.request("POST", "/clusterws/tokens", R"({"userName":"bob","userPW":"bobpw2"})");
  auto id3 = t3.body.substr(t3.body.find("\"id\":\"") + 6, 36);
  EXPECT_EQ(run_tool(home(), "clusterctl rmuser bob").rc, 0);
  EXPECT_EQ(client.request("GET", "/clusterws/nodes", "", {{"X-Auth-Token", id3}}).status, 401u);
  EXPECT_EQ(client.get("/clusterws/nodes?userName=bob&userPW=bobpw2").status, 401u);
  EXPECT_NE(run_tool(home(), "clusterctl rmuser bob").rc, 0);
}

// 4. A user no row allows made the daemon expand huge noderanges (1.15 GB RSS).
TEST_F(security_test, a_user_without_rights_costs_no_expansion) {
  ASSERT_EQ(run_tool(home(), "echo mallorypw | clusterctl passwd mallory --password-stdin").rc, 0);
  auto before = peak_rss_kib(d_->pid());
  for (int i = 0; i < 4; ++i) {
    auto r = client.get("/clusterws/nodes/huge[1-1000000]?userName=mallory&userPW=mallorypw");
    EXPECT_EQ(r.status, 401u);
  }
  EXPECT_LT(peak_rss_kib(d_->pid()) - before, 64 * 1024) << "KiB of peak RSS grew";
  // root's request over the same range is decided by row 1 without expanding for policy
  EXPECT_EQ(client.get(d_->url("/nodes/cn[1-2]/nodels")).status, 200u);
}

// 6. Transfer-Encoding other than chunked ran the body as a second request.
TEST_F(security_test, transfer_encodings_other_than_chunked_are_refused) {
  ASSERT_EQ(run_tool(home(), "mkdef victim groups=all").rc, 0);
  std::string smuggled
    = "DELETE " + d_->url("/nodes/victim") + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";
  for (std::string te : {"gzip", "xchunked", "chunked, identity"}) {
    auto extra = te == "xchunked" ? "Content-Length: " + std::to_string(smuggled.size()) + "\r\n"
                                  : std::string{};
    auto got = client.exchange("POST /clusterws/nodes/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
                               + te + "\r\n" + extra + "\r\n" + smuggled);
    EXPECT_EQ(got.rfind("HTTP/1.1 400", 0), 0u) << te << ": " << got;
    EXPECT_EQ(got.find("HTTP/1.1", 5), std::string::npos) << "a second answer: " << got;
  }
  auto got = client.exchange("POST /clusterws/nodes/x HTTP/1.1\r\nHost: x\r\n"
                             "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n");
  EXPECT_EQ(got.rfind("HTTP/1.1 501", 0), 0u) << got;
  EXPECT_NE(got.find("'gzip' is not supported"), std::string::npos) << got;
  EXPECT_EQ(run_tool(home(), "nodels victim").out, "victim\n"); // nothing was deleted
}

// 7. Controls and Unicode line separators in values forged lines.
TEST_F(security_test, control_characters_in_values_are_refused_by_name) {
  auto r = send("PUT", "/nodes/cn3", "{\"usercomment\":\"a\\u001b[2Jb\"}");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("control character U+001B"), std::string::npos) << r.body;
  r = send("PUT", "/nodes/cn3", "{\"usercomment\":\"a\\u2028Object name: x\"}");
  EXPECT_NE(r.body.find("U+2028"), std::string::npos) << r.body;
  r = send("PUT", "/nodes/cn3", "{\"usercomment\":\"a\\u0085b\"}");
  EXPECT_NE(r.body.find("U+0085"), std::string::npos) << r.body;
  EXPECT_EQ(send("PUT", "/nodes/cn3", "{\"usercomment\":\"tab\\tok\"}").status, 200u);
  EXPECT_NE(run_tool(home(), "chdef cn3 \"usercomment=$(printf 'a\\033b')\"").rc, 0);
}

// 8. rule=disallow granted full access.
TEST_F(security_test, policy_rules_are_validated_when_written) {
  auto r = send("POST", "/policy/8", R"({"name":"eve","rule":"disallow"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("use allow, accept, trusted or deny"), std::string::npos) << r.body;
  EXPECT_NE(run_tool(home(), "mkdef -t policy -o 8 name=eve rule=disallow").rc, 0);
  EXPECT_EQ(send("POST", "/policy/8", R"({"name":"eve","rule":"deny"})").status, 201u);
}

// 9. With a noderange policy row, a bad noderange answered 401 instead of its 403.
TEST_F(security_test, a_bad_noderange_is_403_with_its_reason_under_noderange_rows) {
  for (int i = 0; i < 2; ++i) {
    auto r = client.get("/clusterws/nodes/n[1-999999999]?userName=alice&userPW=alicepw");
    EXPECT_EQ(r.status, 403u) << r.body;
    EXPECT_NE(r.body.find("would expand to more than"), std::string::npos) << r.body;
    r = client.get("/clusterws/nodes/(cn1?userName=alice&userPW=alicepw");
    EXPECT_EQ(r.status, 403u) << r.body;
    EXPECT_NE(r.body.find("Unbalanced parentheses"), std::string::npos) << r.body;
  }
  // not sticky: the next good request of the same user is answered
  EXPECT_EQ(client.get("/clusterws/nodes/cn1?userName=alice&userPW=alicepw").status, 200u);
}

// 10. A password with NUL and junk after it authenticated.
TEST_F(security_test, credentials_with_nul_are_refused) {
  EXPECT_EQ(client.get("/clusterws/nodes?userName=root&userPW=rootpw%00junk").status, 401u);
  EXPECT_EQ(client.get("/clusterws/nodes?userName=root%00x&userPW=rootpw").status, 401u);
  EXPECT_EQ(client.get("/clusterws/nodes?userName=root&userPW=rootpw").status, 200u);
  EXPECT_NE(run_tool(home(), "printf 'pw\\0junk\\n' | clusterctl passwd carol --password-stdin").rc,
            0);
}

// 11. tokenexpiredays = 1e15, inf or nan overflowed the expiry.
TEST_F(security_test, tokenexpiredays_is_validated) {
  for (auto v : {"1e15", "inf", "nan", "-1", "0", "99999"}) {
    auto r = send("PUT", "/globalconf/attrs/tokenexpiredays",
                  std::string{R"({"tokenexpiredays":")"} + v + "\"}");
    EXPECT_EQ(r.status, 403u) << v;
  }
  EXPECT_EQ(
    send("PUT", "/globalconf/attrs/tokenexpiredays", R"({"tokenexpiredays":"never"})").status,
    200u);
  auto tok = client.request("POST", d_->url("/tokens"));
  EXPECT_NE(tok.body.find("\"expire\":\"never\""), std::string::npos) << tok.body;
}

// Issue #27 N14: `DELETE /clusterws/%74okens/<id>` wrote the token id in clear to the audit log.
TEST_F(security_test, encoded_token_paths_are_redacted_in_the_audit_log) {
  std::vector<std::string> ids;
  for (auto path : {"/clusterws/%74okens/", "/xcatws/t%6Fkens/"}) {
    auto tok = client.request("POST", d_->url("/tokens"));
    ASSERT_EQ(tok.status, 201u) << tok.body;
    auto id = tok.body.substr(tok.body.find("\"id\":\"") + 6, 36);
    // the id's first character encoded too: neither form may reach the log
    char enc[4];
    std::snprintf(enc, sizeof enc, "%%%02X", static_cast<unsigned char>(id[0]));
    auto r = client.request("DELETE", path + (enc + id.substr(1)), "", {{"X-Auth-Token", id}});
    EXPECT_EQ(r.status, 200u) << path << r.body;
    ids.push_back(id);
    ids.push_back(enc + id.substr(1));
  }
  auto audit = slurp(home() / "audit.log");
  EXPECT_NE(audit.find("\"method\":\"DELETE\",\"path\":\"/clusterws/tokens/***\""),
            std::string::npos)
    << audit;
  EXPECT_NE(audit.find("\"method\":\"DELETE\",\"path\":\"/xcatws/tokens/***\""), std::string::npos)
    << audit;
  for (const auto& id : ids) {
    EXPECT_EQ(audit.find(id), std::string::npos) << id;
    EXPECT_EQ(slurp(d_->log()).find(id), std::string::npos) << id;
  }
}

// Decided with the issue: quotes, empty write ranges, extra token path segments.
TEST_F(security_test, quoted_names_empty_write_ranges_and_deep_token_paths) {
  auto r = send("PUT", "/nodes/x'y", R"({"groups":"all"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("The object name 'x'y' is not valid."), std::string::npos) << r.body;
  EXPECT_EQ(run_tool(home(), "nodels xy").rc, 1);
  r = send("PUT", "/nodes/cn1,-cn1", R"({"usercomment":"x"})");
  EXPECT_EQ(r.status, 403u);
  EXPECT_NE(r.body.find("No object names were provided."), std::string::npos) << r.body;
  EXPECT_EQ(send("POST", "/tokens/a/b").status, 404u);
}

} // namespace
