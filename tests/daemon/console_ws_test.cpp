// GET /clusterws/nodes/{node}/console over WebSocket against a real clusterwsd and a real
// ipmi_sim BMC with Serial-over-LAN (as console_test): the serial side's text arrives as binary
// frames, binary frames reach the serial side, replay, a read-only watcher cannot write, a
// second writer gets read-only and is told who writes, force takes over, policy `rcons`.

#include <gtest/gtest.h>

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "../support/sol_console_fixture.hpp"

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace websocket = boost::beast::websocket;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;

namespace {

using namespace std::chrono_literals;

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

  void write(const std::string& text, bool binary = false) {
    ws_.binary(binary);
    bool done = false;
    ws_.async_write(net::buffer(text), [&](beast::error_code e, size_t) {
      ec = e;
      done = true;
    });
    run(done, 10s);
  }

  bool got_binary() const {
    return ws_.got_binary();
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

using namespace cws::test;
using namespace std::chrono_literals;

class console_ws_test : public sol_console_fixture {
 protected:
  std::string target(const std::string& extra = {}) {
    return "/clusterws/nodes/cn1/console?userName=root&userPW=rootpw" + extra;
  }

  /// Messages of `c` until one holds `text`, concatenated.
  static std::string read_until(ws_client& c, const std::string& text) {
    std::string all;
    while (all.find(text) == std::string::npos) {
      auto m = c.read();
      if (!m) {
        break;
      }
      all += *m;
    }
    return all;
  }

  void up() {
    start(1, "");
    define("cn1", 0);
    d_->start();
    ASSERT_TRUE(eventually([&] { return log_has("cn1", "console up"); })) << slurp(d_->log());
  }
};

TEST_F(console_ws_test, serial_text_arrives_as_binary_frames_and_keystrokes_reach_the_serial_side) {
  up();
  type(0, "before attach\r\n");
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "before attach"); }));
  ws_client c{*d_};
  auto res = c.upgrade(target("&replay=4096"));
  ASSERT_EQ(res.result_int(), 101u) << res.body();
  auto first = c.read();
  ASSERT_TRUE(first);
  EXPECT_NE(first->find(R"("attached":"rw")"), std::string::npos) << *first;
  // the replay brings what came before
  EXPECT_NE(read_until(c, "before attach").find("before attach"), std::string::npos);
  type(0, "login: ");
  auto got = read_until(c, "login: ");
  EXPECT_NE(got.find("login: "), std::string::npos) << got;
  EXPECT_TRUE(c.got_binary());
  c.write("root\r", true);
  auto serial = serial_until(0, "root\r");
  EXPECT_NE(serial.find("root\r"), std::string::npos) << serial;
}

TEST_F(console_ws_test, a_second_writer_reads_only_and_is_told_who_writes_and_force_takes_over) {
  up();
  ws_client a{*d_};
  ASSERT_EQ(a.upgrade(target()).result_int(), 101u);
  auto m = a.read();
  ASSERT_TRUE(m);
  EXPECT_NE(m->find(R"("attached":"rw")"), std::string::npos) << *m;
  ws_client b{*d_};
  ASSERT_EQ(b.upgrade(target()).result_int(), 101u);
  auto got = read_until(b, R"("holder":"root")");
  EXPECT_NE(got.find(R"("attached":"ro")"), std::string::npos) << got;
  // b cannot write: its keystrokes never reach the serial side
  b.write("from-b\r", true);
  auto refused = read_until(b, "readonly");
  EXPECT_NE(refused.find("readonly"), std::string::npos) << refused;
  // a ro watcher cannot write either
  ws_client w{*d_};
  ASSERT_EQ(w.upgrade(target("&mode=ro")).result_int(), 101u);
  m = w.read();
  ASSERT_TRUE(m);
  EXPECT_NE(m->find(R"("attached":"ro")"), std::string::npos) << *m;
  w.write("from-w\r", true);
  // force: c takes over, a is told
  ws_client c{*d_};
  ASSERT_EQ(c.upgrade(target("&force=1")).result_int(), 101u);
  m = c.read();
  ASSERT_TRUE(m);
  EXPECT_NE(m->find(R"("attached":"rw")"), std::string::npos) << *m;
  auto told = read_until(a, "takenover");
  EXPECT_NE(told.find("takenover"), std::string::npos) << told;
  c.write("from-c\r", true);
  auto serial = serial_until(0, "from-c\r");
  EXPECT_NE(serial.find("from-c\r"), std::string::npos) << serial;
  EXPECT_EQ(serial.find("from-b"), std::string::npos) << serial;
  EXPECT_EQ(serial.find("from-w"), std::string::npos) << serial;
}

TEST_F(console_ws_test, text_frames_attach_the_open_socket_again_in_another_mode) {
  up();
  ws_client a{*d_};
  ASSERT_EQ(a.upgrade(target()).result_int(), 101u);
  ASSERT_TRUE(a.read());
  ws_client b{*d_};
  ASSERT_EQ(b.upgrade(target()).result_int(), 101u);
  EXPECT_NE(read_until(b, R"("attached":"ro")").find(R"("holder":"root")"), std::string::npos);
  // rcons's ^Ecf: b takes the writer on its open socket, naming whom it bumped
  b.write("force");
  auto got = read_until(b, R"("attached":"rw")");
  EXPECT_NE(got.find(R"("bumped":"root")"), std::string::npos) << got;
  EXPECT_NE(read_until(a, "takenover").find("takenover"), std::string::npos);
  b.write("by-b\r", true);
  EXPECT_NE(serial_until(0, "by-b\r").find("by-b\r"), std::string::npos);
  // ^Ecs: b only watches; ^Eca: a writes again (nobody does)
  b.write("ro");
  EXPECT_NE(read_until(b, R"("attached":"ro")").find("ro"), std::string::npos);
  a.write("rw");
  EXPECT_NE(read_until(a, R"("attached":"rw")").find("rw"), std::string::npos);
  a.write("by-a\r", true);
  EXPECT_NE(serial_until(0, "by-a\r").find("by-a\r"), std::string::npos);
  // still one watcher each: the old attachments ended
  type(0, "once\r\n");
  auto seen = read_until(b, "once");
  EXPECT_EQ(seen.find("once"), seen.rfind("once")) << seen;
  a.write("sideways");
  EXPECT_NE(read_until(a, "unknown command").find("'rw', 'ro' or 'force'"), std::string::npos);
}

TEST_F(console_ws_test, a_user_without_an_rcons_policy_row_is_refused_before_the_upgrade) {
  up();
  run_tool(d_->home(), "echo alicepw | clusterctl passwd alice --password-stdin");
  auto url = "/clusterws/nodes/cn1/console?userName=alice&userPW=alicepw";
  ws_client c{*d_};
  auto res = c.upgrade(url);
  // refused by policy as every such call is (401, as the log's), no 101
  EXPECT_EQ(res.result_int(), 401u) << res.body();
  run_tool(d_->home(), "mkdef -t policy -o 6 name=alice rule=allow commands=rcons");
  ws_client ok{*d_};
  EXPECT_EQ(ok.upgrade(url).result_int(), 101u);
  // without an upgrade, the resource says what it is
  https_client plain{d_->ca(), d_->port()};
  auto r = plain.request("GET", target());
  EXPECT_EQ(r.status, 400u) << r.body;
  // a bad query is refused before the upgrade
  ws_client bad{*d_};
  EXPECT_EQ(bad.upgrade(target("&replay=x")).result_int(), 400u);
}

TEST_F(console_ws_test,
       a_watcher_that_stops_reading_is_dropped_and_the_log_and_other_watchers_get_every_byte) {
  // console_watcher_queue_bytes is the bound: 128 KiB unacknowledged, far less than the burst,
  // and enough for the reading watcher to pass a scheduling pause of ~100 ms on a busy machine
  // (16 KiB dropped it too, 1 run in 4)
  start(1, "console_watcher_queue_bytes = 131072\nconsole_watcher_socket_bytes = 16384\n");
  define("cn1", 0);
  d_->start();
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "console up"); })) << slurp(d_->log());
  ws_client slow{*d_, 4096}; // a small receive window, and it never reads
  ASSERT_EQ(slow.upgrade(target("&mode=ro")).result_int(), 101u);
  ws_client fast{*d_};
  ASSERT_EQ(fast.upgrade(target("&mode=ro")).result_int(), 101u);
  auto first = fast.read();
  ASSERT_TRUE(first);
  EXPECT_NE(first->find(R"("attached":"ro")"), std::string::npos) << *first;
  // 512 KiB of numbered lines into the serial side (blocking: ipmi_sim reads it as SOL drains)
  std::string burst;
  for (int i = 0; i < 4096; ++i) {
    char line[128];
    std::snprintf(line, sizeof line, "line %06d %0*d\r\n", i, 128 - 11 - 3 - 1, i);
    burst += line;
  }
  std::thread writer{[&] {
    type(0, burst);
  }};
  std::string got;
  auto until = std::chrono::steady_clock::now() + 30s;
  while (got.size() < burst.size() && std::chrono::steady_clock::now() < until) {
    auto m = fast.read(2s);
    if (!m) {
      if (fast.timed_out) {
        continue;
      }
      break;
    }
    if (fast.got_binary()) {
      got += *m;
    }
  }
  writer.join();
  // the other watcher got every byte, in order
  EXPECT_EQ(got.size(), burst.size());
  EXPECT_TRUE(got == burst) << "the fast watcher's bytes differ from the burst";
  // the log got every byte (the notes are on lines of their own around it)
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "line 004095"); }, 10s));
  EXPECT_NE(slurp(log_of("cn1")).find(burst), std::string::npos) << "the log lost bytes";
  // the slow one was dropped: what its socket holds, then "too slow" and close 1013
  std::string slow_got;
  for (;;) {
    auto m = slow.read(5s);
    if (!m) {
      break;
    }
    slow_got += *m;
  }
  EXPECT_FALSE(slow.timed_out);
  EXPECT_NE(slow_got.find(R"({"detached":"too slow"})"), std::string::npos);
  EXPECT_EQ(slow.reason().code, 1013u) << slow.ec.message();
  EXPECT_LT(slow_got.size(), burst.size());
  auto metrics = get("/metrics");
  EXPECT_NE(metrics.body.find("clusterws_console_watchers_dropped_total 1"), std::string::npos)
    << metrics.body;
}

} // namespace
