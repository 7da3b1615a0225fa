// GET /clusterws/events over WebSocket against a real clusterwsd, with Beast's WebSocket
// client over TLS validated by the cluster CA: authentication before the upgrade, events in
// order as JSON text frames, filters, resume by `after=`, policy, heartbeat pings, the close
// codes (a client message, one too big, a client too slow, a stop of the service).

#include <gtest/gtest.h>

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"

namespace {

using namespace std::chrono_literals;
using cws::test::run_tool;

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace websocket = boost::beast::websocket;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;

/// A WebSocket client over TLS (the cluster CA), each operation run on its own io_context
/// for at most a given time.
class ws_client {
 public:
  ws_client(const cws::test::daemon& d, int rcvbuf = 0) : port_(d.port()) {
    tls_.load_verify_file(d.ca().string());
    tls_.set_verify_mode(ssl::verify_peer);
    ws_.next_layer().set_verify_callback(ssl::host_name_verification("127.0.0.1"));
    auto& tcp = beast::get_lowest_layer(ws_);
    tcp.socket().open(net::ip::tcp::v4());
    if (rcvbuf > 0) {
      tcp.socket().set_option(net::socket_base::receive_buffer_size(rcvbuf));
    }
    tcp.connect(net::ip::tcp::endpoint{net::ip::make_address("127.0.0.1"), port_});
    ws_.next_layer().handshake(ssl::stream_base::client);
    ws_.control_callback([this](websocket::frame_type kind, beast::string_view) {
      if (kind == websocket::frame_type::ping) {
        ++pings;
      }
    });
  }

  /// The upgrade request for `target` (with `headers`); the answer (101, or the refusal).
  websocket::response_type upgrade(const std::string& target,
                                   const std::vector<std::pair<std::string, std::string>>& headers
                                   = {}) {
    ws_.set_option(websocket::stream_base::decorator([headers](websocket::request_type& req) {
      for (const auto& [k, v] : headers) {
        req.set(k, v);
      }
    }));
    websocket::response_type res;
    bool done = false;
    ws_.async_handshake(res, "127.0.0.1", target, [&](beast::error_code e) {
      ec = e;
      done = true;
    });
    run(done, 10s);
    return res;
  }

  /// The next message (nullopt: the socket ended, see `ec` and reason(), or `limit` passed:
  /// `timed_out`, and the read stays pending for the next call).
  std::optional<std::string> read(std::chrono::milliseconds limit = 10s) {
    if (!reading_) {
      reading_ = true;
      done_ = false;
      in_.clear();
      ws_.async_read(in_, [this](beast::error_code e, size_t) {
        ec = e;
        done_ = true;
      });
    }
    run(done_, limit);
    timed_out = !done_;
    if (!done_) {
      return std::nullopt;
    }
    reading_ = false;
    if (ec) {
      return std::nullopt;
    }
    return beast::buffers_to_string(in_.data());
  }

  /// Messages until one holds `text`, concatenated (one per line).
  std::string read_until(const std::string& text) {
    std::string all;
    while (all.find(text) == std::string::npos) {
      auto m = read();
      if (!m) {
        break;
      }
      all += *m + "\n";
    }
    return all;
  }

  void write(const std::string& text) {
    bool done = false;
    ws_.async_write(net::buffer(text), [&](beast::error_code e, size_t) {
      ec = e;
      done = true;
    });
    run(done, 10s);
  }

  websocket::close_reason reason() const {
    return ws_.reason();
  }

  /// Runs pending operations until `done`, for `limit` at most.
  void run(const bool& done, std::chrono::milliseconds limit) {
    auto until = std::chrono::steady_clock::now() + limit;
    ioc_.restart();
    while (!done && std::chrono::steady_clock::now() < until) {
      ioc_.run_one_for(std::chrono::milliseconds(50));
    }
  }

  beast::error_code ec;
  bool timed_out = false;
  int pings = 0;

 private:
  beast::flat_buffer in_;
  bool reading_ = false;
  bool done_ = false;
  net::io_context ioc_;
  ssl::context tls_{ssl::context::tls_client};
  websocket::stream<beast::ssl_stream<beast::tcp_stream>> ws_{ioc_, tls_};
  unsigned short port_;
};

/// The ids of the event frames in `text` (one frame a line), in order.
std::vector<unsigned long long> ids(const std::string& text) {
  std::vector<unsigned long long> out;
  std::regex id{R"((^|\n)\{"id":([0-9]+),)"};
  for (auto it = std::sregex_iterator(text.begin(), text.end(), id); it != std::sregex_iterator();
       ++it) {
    out.push_back(std::stoull((*it)[2]));
  }
  return out;
}

class websocket_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    std::ofstream{d_->home() / "clusterws.conf", std::ios::app}
      << "events_poll_ms = 100\nevents_heartbeat_s = 1\nws_max_message_bytes = 1024\n";
    ASSERT_EQ(run_tool(home(), "mkdef 'cn[1-3]' groups=compute,all mgt=kvm").rc, 0);
    ASSERT_EQ(run_tool(home(), "mkdef sv1 groups=service,all mgt=kvm").rc, 0);
    ASSERT_EQ(run_tool(home(), "echo alicepw | clusterctl passwd alice --password-stdin").rc, 0);
    // alice may list the compute nodes only
    ASSERT_EQ(run_tool(home(), "mkdef -t policy -o 6 name=alice noderange=compute "
                               "commands=lsdef rule=allow")
                .rc,
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

  static std::string events(const std::string& user, const std::string& pw,
                            const std::string& extra = {}) {
    return "/clusterws/events?userName=" + user + "&userPW=" + pw + extra;
  }

  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
};

cws::test::temp_dir* websocket_test::dir_ = nullptr;
cws::test::daemon* websocket_test::d_ = nullptr;

TEST_F(websocket_test, an_authenticated_upgrade_gets_each_change_in_order_as_a_json_frame) {
  ws_client c{*d_};
  // HTTP Basic, as a browser's fetch cannot but a script can; the query works too (below)
  auto res = c.upgrade("/clusterws/events", {{"Authorization", "Basic cm9vdDpyb290cHc="}});
  ASSERT_FALSE(c.ec) << c.ec.message();
  EXPECT_EQ(res.result_int(), 101);
  ASSERT_EQ(run_tool(home(), "mkdef ws1 groups=all mgt=kvm").rc, 0);
  ASSERT_EQ(run_tool(home(), "chdef ws1 os=rhels9").rc, 0);
  ASSERT_EQ(run_tool(home(), "mkdef -t network -o wsnet net=10.7.0.0 mask=255.255.0.0").rc, 0);
  auto got = c.read_until("wsnet");
  auto created = got.find(R"("data":{"seq":)");
  auto first = got.find(R"({"type":"node","name":"ws1","change":"created","attributes":)");
  auto changed = got.find(R"({"type":"node","name":"ws1","change":"changed","attributes":["os"]})");
  auto net = got.find(R"({"type":"network","name":"wsnet","change":"created")");
  ASSERT_NE(created, std::string::npos) << got;
  ASSERT_NE(first, std::string::npos) << got;
  ASSERT_NE(changed, std::string::npos) << got;
  ASSERT_NE(net, std::string::npos) << got;
  EXPECT_LT(first, changed);
  EXPECT_LT(changed, net);
  auto seen = ids(got);
  ASSERT_EQ(seen.size(), 3u) << got;
  EXPECT_LT(seen[0], seen[1]);
  EXPECT_LT(seen[1], seen[2]);
  EXPECT_NE(got.find("{\"id\":" + std::to_string(seen[0])
                     + ",\"event\":\"changes\",\"data\":{"
                       "\"seq\":"
                     + std::to_string(seen[0]) + ","),
            std::string::npos)
    << got;
  // the heartbeat is a ping (events_heartbeat_s = 1), answered by the client's pong
  EXPECT_FALSE(c.read(2500ms)); // (nothing changes: the read waits, and sees the pings)
  EXPECT_TRUE(c.timed_out);
  EXPECT_GE(c.pings, 1);

  // resume: a new socket with after= the first id gets what followed, from the log
  ws_client again{*d_};
  again.upgrade(events("root", "rootpw", "&after=" + std::to_string(seen[0])));
  ASSERT_FALSE(again.ec) << again.ec.message();
  auto resumed = again.read_until("wsnet");
  EXPECT_EQ(ids(resumed), (std::vector<unsigned long long>{seen[1], seen[2]})) << resumed;
}

TEST_F(websocket_test, without_credentials_the_upgrade_is_refused_with_401_in_http) {
  ws_client c{*d_};
  auto res = c.upgrade("/clusterws/events");
  EXPECT_EQ(c.ec, websocket::error::upgrade_declined) << c.ec.message();
  EXPECT_EQ(res.result_int(), 401);
  ws_client wrong{*d_};
  res = wrong.upgrade(events("root", "nope"));
  EXPECT_EQ(res.result_int(), 401);
  ws_client bad{*d_};
  res = bad.upgrade(events("root", "rootpw", "&types=node,bogus"));
  EXPECT_EQ(res.result_int(), 400);
  EXPECT_NE(res.body().find("Unknown event type 'bogus'"), std::string::npos) << res.body();
}

TEST_F(websocket_test, filters_and_policy_decide_what_a_user_sees) {
  // alice may list the compute nodes: a socket of those is allowed, one of everything not
  ws_client refused{*d_};
  EXPECT_EQ(refused.upgrade(events("alice", "alicepw")).result_int(), 401);
  ws_client alice{*d_};
  EXPECT_EQ(alice.upgrade(events("alice", "alicepw", "&noderange=compute")).result_int(), 101);
  ws_client networks{*d_};
  EXPECT_EQ(networks.upgrade(events("root", "rootpw", "&types=network")).result_int(), 101);
  ASSERT_EQ(run_tool(home(), "chdef cn2,sv1 usercomment=seen").rc, 0);
  ASSERT_EQ(run_tool(home(), "echo newpw | clusterctl passwd carol --password-stdin").rc, 0);
  ASSERT_EQ(run_tool(home(), "mkdef -t network -o fnet net=10.6.0.0 mask=255.255.0.0").rc, 0);
  ASSERT_EQ(run_tool(home(), "chdef cn3 usercomment=last").rc, 0);
  auto a = alice.read_until("cn3");
  EXPECT_NE(a.find(R"("name":"cn2")"), std::string::npos) << a;
  EXPECT_EQ(a.find("sv1"), std::string::npos) << a; // outside her noderange
  EXPECT_EQ(a.find("carol"), std::string::npos) << a;
  EXPECT_EQ(a.find("fnet"), std::string::npos) << a;
  auto n = networks.read_until("fnet");
  EXPECT_EQ(n.find("cn2"), std::string::npos) << n; // types=network
  EXPECT_NE(n.find(R"({"type":"network","name":"fnet","change":"created")"), std::string::npos)
    << n;
}

TEST_F(websocket_test, a_client_message_ends_the_socket_with_1008_and_a_big_one_with_1009) {
  ws_client talker{*d_};
  ASSERT_EQ(talker.upgrade(events("root", "rootpw")).result_int(), 101);
  talker.write("hello");
  EXPECT_FALSE(talker.read());
  EXPECT_EQ(talker.ec, websocket::error::closed) << talker.ec.message();
  EXPECT_EQ(talker.reason().code, 1008);
  ws_client big{*d_};
  ASSERT_EQ(big.upgrade(events("root", "rootpw")).result_int(), 101);
  big.write(std::string(2000, 'x')); // ws_max_message_bytes = 1024
  EXPECT_FALSE(big.read());
  EXPECT_TRUE(big.ec); // (closed, or a broken pipe: Beast tears down right after its close)
  EXPECT_EQ(big.reason().code, 1009);
  // the service goes on
  ws_client after{*d_};
  EXPECT_EQ(after.upgrade(events("root", "rootpw")).result_int(), 101);
}

TEST(websocket_alone, a_client_too_slow_gets_a_last_event_then_1013) {
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "rootpw"};
  std::ofstream{d.home() / "clusterws.conf", std::ios::app}
    << "events_buffer_bytes = 65536\nevents_poll_ms = 100\n";
  d.start();
  // a small receive buffer keeps what the kernel takes from the daemon small; the client
  // reads nothing while ~6 MB of events are committed
  ws_client slow{d, 4096};
  ASSERT_EQ(slow.upgrade("/clusterws/events?userName=root&userPW=rootpw").result_int(), 101);
  for (int round = 0; round < 3; ++round) {
    auto r = run_tool(d.home(), "mkdef 'slow" + std::to_string(round)
                                  + "n[00001-20000]' groups=all,aaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    ASSERT_EQ(r.rc, 0) << r.out;
  }
  std::this_thread::sleep_for(1s); // the feed's look at the tools' commits
  std::string last;
  int frames = 0;
  while (auto m = slow.read(20s)) {
    last = *m;
    ++frames;
  }
  EXPECT_EQ(slow.ec, websocket::error::closed) << slow.ec.message();
  EXPECT_EQ(slow.reason().code, 1013);
  EXPECT_EQ(last, R"({"event":"reset","data":{"reason":"the client did not take the events fast )"
                  R"(enough (65536 bytes waiting): the stream ends"}})");
  EXPECT_LT(frames, 20); // most of the 60,000 changes never went out
  EXPECT_EQ(d.stop(), 0);
}

TEST(websocket_alone, a_stop_of_the_service_closes_the_socket_with_1001) {
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "rootpw"};
  d.start();
  ws_client c{d};
  ASSERT_EQ(c.upgrade("/clusterws/events?userName=root&userPW=rootpw").result_int(), 101);
  auto t0 = std::chrono::steady_clock::now();
  int rc = -1;
  std::thread stopper{[&] {
    rc = d.stop();
  }};
  EXPECT_FALSE(c.read(10s)); // the client answers the close as it reads
  stopper.join();
  EXPECT_EQ(rc, 0);
  // the close frame came first (its code and reason are checked below); the TLS end after it
  // may be cut by the exiting process: a reset, or no close_notify (seen under ASan's load)
  EXPECT_TRUE(c.ec == websocket::error::closed || c.ec == net::error::connection_reset
              || c.ec == ssl::error::stream_truncated)
    << c.ec.message();
  EXPECT_EQ(c.reason().code, 1001);
  EXPECT_EQ(c.reason().reason, "the service is stopping");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s); // the closing handshake, not a drain
}

} // namespace
