// Limits of the service on their own daemon: slow clients are cut off at the request deadline,
// connections beyond max_connections are refused, and the service goes on answering; a
// response far larger than one TLS record arrives whole on a kept-alive connection.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"
#include "../support/sshd.hpp"

namespace {

class limits_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    std::ofstream{d_->home() / "clusterws.conf", std::ios::app}
      << "request_timeout = 1\nmax_connections = 4\ncall_timeout = 1\nlogin_backoff_after = 0\n";
    d_->start();
  }

  static void TearDownTestSuite() {
    EXPECT_EQ(d_->stop(), 0);
    delete d_;
    delete dir_;
  }

  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
};

cws::test::temp_dir* limits_test::dir_ = nullptr;
cws::test::daemon* limits_test::d_ = nullptr;

TEST_F(limits_test, a_slow_client_is_cut_off_at_the_request_deadline) {
  cws::test::https_client slow{d_->ca(), d_->port()};
  // half a request, then nothing: the connection is closed after request_timeout (1 s)
  EXPECT_TRUE(slow.closed_after_partial("GET /clusterws HTTP/1.1\r\nHost: x\r\n",
                                        std::chrono::milliseconds(5000)));
  cws::test::https_client ok{d_->ca(), d_->port()};
  EXPECT_EQ(ok.get("/clusterws").status, 200u);
}

TEST_F(limits_test, an_idle_keep_alive_connection_lasts_request_timeout_after_its_last_answer) {
  using std::chrono::milliseconds;
  cws::test::https_client c{d_->ca(), d_->port()};
  ASSERT_EQ(c.get("/clusterws").status, 200u);
  // each request moves the deadline (1 s after it): the session's one wait, armed for the
  // first deadline, finds it moved and waits on instead of closing
  std::this_thread::sleep_for(milliseconds(600));
  ASSERT_EQ(c.get("/clusterws").status, 200u);
  std::this_thread::sleep_for(milliseconds(700)); // past the first deadline, not the second
  ASSERT_EQ(c.get("/clusterws").status, 200u);
  EXPECT_EQ(c.connects(), 1);
  std::this_thread::sleep_for(milliseconds(1600)); // idle past the deadline: closed
  ASSERT_EQ(c.get("/clusterws").status, 200u);
  EXPECT_EQ(c.connects(), 2);
}

TEST_F(limits_test, connections_beyond_the_limit_are_refused) {
  std::vector<std::unique_ptr<cws::test::https_client>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<cws::test::https_client>(d_->ca(), d_->port()));
    ASSERT_EQ(held.back()->get("/clusterws").status, 200u);
  }
  cws::test::https_client extra{d_->ca(), d_->port()};
  EXPECT_THROW(extra.get("/clusterws"), std::exception);
  held.pop_back();
  // the freed slot is usable again (the server notices the close first)
  bool served = false;
  for (int i = 0; i < 50 && !served; ++i) {
    try {
      cws::test::https_client again{d_->ca(), d_->port()};
      served = again.get("/clusterws").status == 200u;
    } catch (const std::exception&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  EXPECT_TRUE(served);
}

TEST_F(limits_test, a_call_slower_than_call_timeout_gets_503_even_after_a_nodeshell) {
  // a nodeshell first, on the same connection
  auto r = cws::test::run_tool(d_->home(), "mkdef lone groups=lonely ip=127.0.0.1 sshport="
                                             + std::to_string(cws::test::free_port()));
  ASSERT_EQ(r.rc, 0) << r.out;
  cws::test::https_client client{d_->ca(), d_->port()};
  auto shell = client.request("POST", d_->url("/nodes/lone/nodeshell"), "{\"command\":\"true\"}");
  EXPECT_EQ(shell.status, 403u) << shell.body; // every node failed: xCAT's 403
  EXPECT_NE(shell.body.find("Connection refused"), std::string::npos) << shell.body;
  // then wrong passwords: login backoff delays each refusal longer (0.25, 0.5, 1, 2 s...)
  // until one takes longer than call_timeout (1 s) and is answered 503 at that deadline
  cws::test::reply slow;
  std::chrono::duration<double> took{};
  for (int i = 0; i < 6 && slow.status != 503; ++i) {
    auto start = std::chrono::steady_clock::now();
    slow = client.get("/clusterws/nodes/lone?userName=nobody&userPW=wrong");
    took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(slow.status == 401 || slow.status == 503) << slow.status << slow.body;
  }
  EXPECT_EQ(slow.status, 503u);
  EXPECT_EQ(slow.body, "{\"error\":\"The service did not answer within 1 seconds.\","
                       "\"errorcode\":\"2\"}\n");
  EXPECT_LT(took.count(), 1.8) << "answered at the refusal, not at the deadline";
}

TEST_F(limits_test, a_large_response_arrives_whole) {
  auto r = cws::test::run_tool(d_->home(), "mkdef 'big[1-20000]' groups=big");
  ASSERT_EQ(r.rc, 0) << r.out;
  cws::test::https_client client{d_->ca(), d_->port()};
  for (int i = 0; i < 2; ++i) { // twice on one connection: the first answer ended cleanly
    auto list = client.get(d_->url("/nodes/big/nodels"));
    ASSERT_EQ(list.status, 200u);
    EXPECT_GT(list.body.size(), 100000u);
    EXPECT_EQ(std::count(list.body.begin(), list.body.end(), ','), 19999);
    EXPECT_NE(list.body.find("\"big20000\""), std::string::npos);
  }
  EXPECT_EQ(client.connects(), 1);
}

} // namespace
