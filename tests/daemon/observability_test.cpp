// What an operator sees of a running daemon: the metrics page (checked with promtool), the
// error log, the served OpenAPI text, the answers' Date and Cache-Control, plain HTTP on the
// HTTPS port, and the Python example of docs/examples run against it.

#include <gtest/gtest.h>

#include <csignal>

#include <boost/asio.hpp>

#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"
#include "../support/sshd.hpp"

namespace {

using cws::test::run_tool;
using cws::test::slurp;

/// The value of one series (`name{labels}`) on a metrics page; -1 when it is not there.
double sample(const std::string& page, const std::string& series) {
  auto at = page.find("\n" + series + " ");
  if (at == std::string::npos) {
    return -1;
  }
  return std::stod(page.substr(at + series.size() + 2));
}

/// Waits up to 10 s for `text` in the daemon's log.
bool log_shows(const cws::test::daemon& d, const std::string& text) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (slurp(d.log()).find(text) == std::string::npos) {
    if (std::chrono::steady_clock::now() > until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

class observability_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    // summaries every second, so that the test sees one
    std::ofstream{d_->home() / "clusterws.conf", std::ios::app} << "log_summary_seconds = 1\n";
    d_->start();
  }

  static void TearDownTestSuite() {
    d_->stop();
    delete d_;
    delete dir_;
  }

  cws::test::reply metrics(const std::string& who = "userName=root&userPW=rootpw") {
    cws::test::https_client c{d_->ca(), d_->port()};
    return c.get("/clusterws/metrics" + (who.empty() ? "" : "?" + who));
  }

  /// A plain HTTP request on the HTTPS port: everything the server sends before it closes.
  std::string plain_http() {
    namespace net = boost::asio;
    net::io_context ioc;
    net::ip::tcp::socket s{ioc};
    s.connect({net::ip::make_address("127.0.0.1"), d_->port()});
    timeval tv{5, 0}; // bounded: the server closes after its answer
    setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    net::write(s, net::buffer(std::string{"GET /clusterws/nodes HTTP/1.1\r\nHost: x\r\n\r\n"}));
    std::string out;
    char buf[4096];
    boost::system::error_code ec;
    while (!ec) {
      auto n = s.read_some(net::buffer(buf), ec);
      out.append(buf, n);
    }
    return out;
  }

  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
};

cws::test::temp_dir* observability_test::dir_ = nullptr;
cws::test::daemon* observability_test::d_ = nullptr;

TEST_F(observability_test, metrics_pass_promtool_and_count_what_happened) {
  cws::test::https_client c{d_->ca(), d_->port()};
  ASSERT_EQ(c.request("PUT", d_->url("/nodes/obs1"), "{\"groups\":\"all\"}").status, 200u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(c.get(d_->url("/nodes/obs1")).status, 200u);
  }
  ASSERT_EQ(c.get("/clusterws/nodes/obs1?userName=root&userPW=wrong").status, 401u);
  auto before = metrics();
  ASSERT_EQ(before.status, 200u) << before.body;
  EXPECT_EQ(before.headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8");
  auto file = dir_->path / "metrics.txt";
  std::ofstream{file} << before.body;
  auto check = run_tool(d_->home(), "promtool check metrics < '" + file.string() + "'");
  EXPECT_EQ(check.rc, 0) << check.out << before.body;
  const auto& page = before.body;
  EXPECT_GE(sample(page, "clusterws_http_requests_total{method=\"GET\",route=\"/nodes/{name}\","
                         "status=\"200\"}"),
            3);
  EXPECT_GE(sample(page, "clusterws_http_requests_total{method=\"PUT\",route=\"/nodes/{name}\","
                         "status=\"200\"}"),
            1);
  EXPECT_GE(sample(page, "clusterws_http_request_duration_seconds_count{route=\"/nodes/{name}\"}"),
            4);
  EXPECT_GE(sample(page, "clusterws_auth_failures_total"), 1);
  EXPECT_GE(sample(page, "clusterws_store_commits_total"), 1);
  EXPECT_GE(sample(page, "clusterws_store_batch_writes_count"), 1);
  EXPECT_GE(sample(page, "clusterws_store_commit_duration_seconds_count"), 1);
  EXPECT_GT(sample(page, "clusterws_lmdb_map_used_bytes"), 0);
  EXPECT_GE(sample(page, "clusterws_lmdb_map_size_bytes"),
            sample(page, "clusterws_lmdb_map_used_bytes"));
  EXPECT_EQ(sample(page, "clusterws_http_calls_in_flight"), 0);
  EXPECT_GE(sample(page, "clusterws_http_connections"), 1);
  EXPECT_EQ(sample(page, "clusterws_ssh_pool_connections"), 0);
  // the certificate's notAfter, as openssl reads it
  auto expiry = run_tool(d_->home(), "date -d \"$(openssl x509 -enddate -noout -in '"
                                       + (d_->home() / "pki" / "server-cert.pem").string()
                                       + "' | cut -d= -f2)\" +%s");
  ASSERT_EQ(expiry.rc, 0) << expiry.out;
  EXPECT_NEAR(sample(page, "clusterws_tls_certificate_expiry_seconds"), std::stod(expiry.out), 2);
  EXPECT_GT(std::stod(expiry.out), static_cast<double>(std::time(nullptr)));
  // never a password, on the page or in the log
  EXPECT_EQ(page.find("rootpw"), std::string::npos);
  EXPECT_EQ(slurp(d_->log()).find("rootpw"), std::string::npos);
  // the scrape itself counts
  auto after = metrics();
  EXPECT_GT(sample(after.body, "clusterws_http_requests_total{method=\"GET\",route=\"/metrics\","
                               "status=\"200\"}"),
            sample(page, "clusterws_http_requests_total{method=\"GET\",route=\"/metrics\","
                         "status=\"200\"}"));
}

TEST_F(observability_test, metrics_need_credentials_and_the_metrics_command) {
  EXPECT_EQ(metrics("").status, 401u);
  run_tool(d_->home(), "echo promPW1 | clusterctl passwd prom --password-stdin");
  EXPECT_EQ(metrics("userName=prom&userPW=promPW1").status, 401u); // no policy row
  auto r = run_tool(d_->home(), "mkdef -t policy -o 8 name=prom commands=metrics rule=allow");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(metrics("userName=prom&userPW=promPW1").status, 200u);
  cws::test::https_client c{d_->ca(), d_->port()};
  EXPECT_EQ(c.get("/clusterws/nodes?userName=prom&userPW=promPW1").status, 401u); // only that
}

TEST_F(observability_test, openapi_text_is_served_without_credentials) {
  cws::test::https_client c{d_->ca(), d_->port()};
  auto r = c.get("/clusterws/openapi.yaml");
  ASSERT_EQ(r.status, 200u);
  EXPECT_EQ(r.headers["Content-Type"], "application/yaml");
  EXPECT_EQ(r.body, slurp(CLUSTERWS_SOURCE_DIR "/docs/openapi.yaml"));
  EXPECT_EQ(r.headers.count("Cache-Control"), 0u); // public: caches may keep it
  EXPECT_EQ(c.request("POST", "/clusterws/openapi.yaml").status, 405u);
}

TEST_F(observability_test, answers_carry_a_date_and_authenticated_ones_no_store) {
  cws::test::https_client c{d_->ca(), d_->port()};
  auto r = c.get(d_->url("/policy/1"));
  ASSERT_EQ(r.status, 200u);
  EXPECT_EQ(r.headers["Cache-Control"], "no-store");
  ASSERT_EQ(r.headers["Date"].size(), 29u) << r.headers["Date"]; // Sun, 06 Nov 1994 08:49:37 GMT
  EXPECT_EQ(r.headers["Date"].substr(25), " GMT");
  auto refused = c.get("/clusterws/policy/1");
  EXPECT_EQ(refused.status, 401u);
  EXPECT_EQ(refused.headers["Cache-Control"], "no-store");
  auto root = c.get("/clusterws");
  EXPECT_EQ(root.headers.count("Cache-Control"), 0u);
  EXPECT_EQ(root.headers["Date"].size(), 29u);
}

TEST_F(observability_test, plain_http_gets_a_clear_400_and_failures_are_summarised) {
  auto answer = plain_http();
  EXPECT_EQ(answer.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << answer;
  EXPECT_NE(answer.find("Connection: close\r\n"), std::string::npos) << answer;
  EXPECT_NE(answer.find("{\"error\":\"This port speaks HTTPS only: use https:// with the "
                        "cluster CA.\",\"errorcode\":\"2\"}"),
            std::string::npos)
    << answer;
  // one line at once, the rest of the burst as one summary line
  EXPECT_TRUE(log_shows(*d_, "warning: TLS handshake failed: 127.0.0.1: plain HTTP on the HTTPS"));
  for (int i = 0; i < 4; ++i) {
    plain_http();
  }
  EXPECT_TRUE(log_shows(*d_, " more times in the last 1 s (last: 127.0.0.1: plain HTTP"))
    << slurp(d_->log());
  auto lines = slurp(d_->log());
  EXPECT_LT(std::count(lines.begin(), lines.end(), '\n'), 20) << lines;
  EXPECT_GE(sample(metrics().body, "clusterws_tls_handshake_failures_total{reason=\"plain_http\"}"),
            5);
}

TEST_F(observability_test, a_failed_handshake_is_counted_and_logged_with_its_reason) {
  // a cipher the service does not offer (no forward secrecy): the handshake fails
  auto r = run_tool(d_->home(),
                    "timeout 10 openssl s_client -connect 127.0.0.1:" + std::to_string(d_->port())
                      + " -tls1_2 -cipher AES128-SHA </dev/null");
  EXPECT_NE(r.rc, 0) << r.out;
  // written at once, or as the last one of the second's summary
  EXPECT_TRUE(log_shows(*d_, "127.0.0.1: no shared cipher")) << slurp(d_->log());
  EXPECT_GE(sample(metrics().body, "clusterws_tls_handshake_failures_total{reason=\"handshake\"}"),
            1);
}

TEST_F(observability_test, a_refused_start_says_why_in_one_error_line) {
  cws::test::temp_dir dir;
  auto r = run_tool(dir.path, "clusterwsd --home '" + (dir.path / "nohome").string() + "'");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find(" error: not started: The clusterws home '"), std::string::npos) << r.out;
  auto home = dir.path / "h";
  ASSERT_EQ(run_tool(home, "clusterctl init --admin-password x").rc, 0);
  std::ofstream{home / "clusterws.conf", std::ios::app} << "log_level = loud\n";
  r = run_tool(home, "clusterwsd");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.out.find(" error: not started: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'log_level'"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST_F(observability_test, a_quiet_log_level_leaves_out_the_notices) {
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "pw"};
  std::ofstream{d.home() / "clusterws.conf", std::ios::app} << "log_level = warning\n";
  d.start();
  EXPECT_EQ(d.stop(), 0);
  EXPECT_EQ(slurp(d.log()).find("notice: listening on"), std::string::npos) << slurp(d.log());
  EXPECT_NE(slurp(d_->log()).find("notice: listening on https://127.0.0.1:"), std::string::npos);
}

TEST_F(observability_test, sighup_reads_the_settings_again_log_level_at_once) {
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "pw"};
  auto conf = d.home() / "clusterws.conf";
  auto original = slurp(conf);
  d.start();
  std::ofstream{conf, std::ios::app} << "log_level = warning\nio_threads = 3\n";
  ::kill(d.pid(), SIGHUP);
  // applied at once: the notice of the change is the last notice written
  EXPECT_TRUE(log_shows(d, "notice: log_level is now warning")) << slurp(d.log());
  std::ofstream{conf, std::ios::trunc} << original << "io_threads = 3\nlog_level = notice\n";
  ::kill(d.pid(), SIGHUP);
  EXPECT_TRUE(log_shows(d, "applied at the next restart: io_threads")) << slurp(d.log());
  EXPECT_TRUE(log_shows(d, "notice: log_level is now notice")) << slurp(d.log());
  // a file that is no longer valid changes nothing and says why
  std::ofstream{conf, std::ios::app} << "io_threads = many\n";
  ::kill(d.pid(), SIGHUP);
  EXPECT_TRUE(log_shows(d, "configuration not reloaded (the settings in use stay)"))
    << slurp(d.log());
  EXPECT_EQ(cws::test::https_client(d.ca(), d.port()).get(d.url("/nodes")).status, 403u);
  EXPECT_EQ(d.stop(), 0);
}

TEST_F(observability_test, sighup_applies_audit_required_at_once) {
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "pw"};
  auto conf = d.home() / "clusterws.conf";
  auto original = slurp(conf);
  auto rewrite = [&](const std::string& lines) {
    std::ofstream{conf, std::ios::trunc} << original << lines;
    ::kill(d.pid(), SIGHUP);
  };
  // an audit log that can never be written: changes go on unrecorded until it is required
  std::ofstream{conf, std::ios::app} << "audit_log = /dev/full\n";
  d.start();
  cws::test::https_client c{d.ca(), d.port()};
  auto put = [&](const std::string& name) {
    return c.request("PUT", d.url("/nodes/" + name), R"({"groups":"all"})").status;
  };
  EXPECT_EQ(put("n1"), 200u);
  rewrite("audit_log = /dev/full\naudit_required = true\n");
  ASSERT_TRUE(log_shows(d, "notice: settings reloaded: audit_required")) << slurp(d.log());
  auto r = c.request("PUT", d.url("/nodes/n2"), R"({"groups":"all"})");
  EXPECT_EQ(r.status, 503u) << r.body;
  EXPECT_NE(r.body.find("audit_required is set"), std::string::npos) << r.body;
  EXPECT_NE(c.get(d.url("/nodes/n2")).status, 200u); // not applied
  // and off again, without a restart
  rewrite("audit_log = /dev/full\n");
  unsigned status = 0;
  for (int i = 0; i < 100 && status != 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    status = put("n2");
  }
  EXPECT_EQ(status, 200u) << slurp(d.log());
  EXPECT_EQ(d.stop(), 0);
}

TEST_F(observability_test, sighup_refuses_audit_required_without_an_audit_log) {
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "pw"};
  auto conf = d.home() / "clusterws.conf";
  auto original = slurp(conf);
  std::ofstream{conf, std::ios::app} << "audit_log = off\n";
  d.start();
  std::ofstream{conf, std::ios::trunc} << original
                                       << "audit_log = off\naudit_required = true\nlog_level "
                                          "= notice\n";
  ::kill(d.pid(), SIGHUP);
  // refused, as a start would be; the rest of the file applies
  EXPECT_TRUE(log_shows(d, "error: audit: settings not reloaded (the ones in use stay): "
                           "audit_required = true needs an audit log; audit_log is off"))
    << slurp(d.log());
  EXPECT_TRUE(log_shows(d, "notice: log_level is now notice")) << slurp(d.log());
  auto log = slurp(d.log());
  EXPECT_EQ(log.find("applied at the next restart: audit_required"), std::string::npos) << log;
  cws::test::https_client c{d.ca(), d.port()};
  EXPECT_EQ(c.request("PUT", d.url("/nodes/n1"), R"({"groups":"all"})").status, 200u);
  EXPECT_EQ(d.stop(), 0);
}

TEST_F(observability_test, the_python_example_lists_nodes_and_runs_nodeshell) {
  cws::test::sshd node{dir_->path / "sshd"};
  node.authorize("root", d_->home() / "ssh" / "root" / "id_ed25519.pub");
  node.start();
  auto port = std::to_string(node.port());
  ASSERT_EQ(run_tool(d_->home(), "mkdef 'py[1-2]' groups=py ip=127.0.0.1 sshport=" + port).rc, 0);
  ASSERT_EQ(run_tool(d_->home(), "mkdef pydead groups=py ip=127.0.0.1 sshport="
                                   + std::to_string(cws::test::free_port()))
              .rc,
            0);
  auto r
    = run_tool(d_->home(), "CLUSTERWS_PASSWORD=rootpw timeout 120 python3 " CLUSTERWS_SOURCE_DIR
                           "/docs/examples/clusterws_client.py --url https://127.0.0.1:"
                             + std::to_string(d_->port()) + "/clusterws --ca '" + d_->ca().string()
                             + "' --user root py 'echo hello'");
  node.stop();
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("nodes: py1 py2 pydead\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("py1: hello\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("py2: hello\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pydead: FAILED: ssh: connect to host pydead port"), std::string::npos)
    << r.out;
  EXPECT_NE(r.out.find("done: 3 nodes, 1 failed\n"), std::string::npos) << r.out;
}

} // namespace
