// GET /clusterws/nodes/{node}/console over WebSocket against a real clusterwsd and a real
// ipmi_sim BMC with Serial-over-LAN (as console_test): the serial side's text arrives as binary
// frames, binary frames reach the serial side, replay, a read-only watcher cannot write, a
// second writer gets read-only and is told who writes, force takes over, policy `rcons`.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/bmc_farm.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

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

/// A TCP listener on 127.0.0.1 (any port): a BMC's serial side.
int listen_any(unsigned short& port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::listen(fd, 4);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

/// True once `done` holds, checked every 50 ms for at most `limit`.
bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = 20s) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (done()) {
      return true;
    }
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

class console_ws_test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_ipmi_sim()) {
      GTEST_SKIP() << "ipmi_sim (package openipmi) is not installed";
    }
  }

  void TearDown() override {
    if (d_) {
      d_->stop();
    }
    d_.reset();
    farm_.reset();
    for (auto fd : serial_) {
      ::close(fd);
    }
    for (auto fd : listeners_) {
      ::close(fd);
    }
  }

  /// `bmcs` BMCs with SOL (their serial sides accepted), a daemon with `conf` lines.
  void start(size_t bmcs, const std::string& conf) {
    std::vector<unsigned short> ports;
    for (size_t i = 0; i < bmcs; ++i) {
      unsigned short p = 0;
      listeners_.push_back(listen_any(p));
      ports.push_back(p);
    }
    farm_ = std::make_unique<bmc_farm>(dir_.path / "bmcs", bmcs, "secret", ports);
    for (size_t i = 0; i < bmcs; ++i) {
      serial_.push_back(-1);
      accept_serial(i);
    }
    d_ = std::make_unique<cws::test::daemon>(dir_.path / "home", "rootpw");
    std::ofstream{d_->home() / "clusterws.conf", std::ios::app}
      << "console_keepalive_ms = 500\nconsole_backoff_min_ms = 200\nconsole_backoff_max_ms = "
         "1000\n"
      << conf;
  }

  /// ipmi_sim connects to the serial side as it starts.
  void accept_serial(size_t i) {
    pollfd p{listeners_[i], POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 12000), 1) << "ipmi_sim did not connect to the serial side";
    if (serial_[i] >= 0) {
      ::close(serial_[i]);
    }
    serial_[i] = ::accept4(listeners_[i], nullptr, nullptr, SOCK_CLOEXEC);
    ASSERT_GE(serial_[i], 0);
  }

  void define(const std::string& node, size_t bmc, const std::string& password = "secret") {
    auto r = run_tool(d_->home(), "mkdef " + node + " groups=all mgt=ipmi cons=ipmi bmc=127.0.0.1"
                                    + " bmcusername=admin bmcpassword=" + password
                                    + " bmcport=" + std::to_string(farm_->port(bmc)));
    ASSERT_EQ(r.rc, 0) << r.out;
  }

  /// Text into BMC `i`'s serial side (the host writing to its serial port).
  void type(size_t i, const std::string& text) {
    ASSERT_EQ(::send(serial_[i], text.data(), text.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(text.size()));
  }

  std::filesystem::path log_of(const std::string& node) const {
    return d_->home() / "consoles" / node;
  }

  bool log_has(const std::string& node, const std::string& text) const {
    return slurp(log_of(node)).find(text) != std::string::npos;
  }

  reply get(const std::string& path, const std::string& extra = {}) {
    https_client client{d_->ca(), d_->port()};
    return client.request("GET", d_->url(path, extra));
  }

  /// Reads what the serial side got for at most `limit`, until it holds `text`.
  std::string serial_until(size_t i, const std::string& text,
                           std::chrono::milliseconds limit = 10s) {
    std::string got;
    auto until = std::chrono::steady_clock::now() + limit;
    while (got.find(text) == std::string::npos && std::chrono::steady_clock::now() < until) {
      pollfd p{serial_[i], POLLIN, 0};
      if (::poll(&p, 1, 100) == 1) {
        char buf[512];
        auto n = ::recv(serial_[i], buf, sizeof buf, 0);
        if (n <= 0) {
          break;
        }
        got.append(buf, static_cast<size_t>(n));
      }
    }
    return got;
  }

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

  temp_dir dir_;
  std::vector<int> listeners_;
  std::vector<int> serial_;
  std::unique_ptr<bmc_farm> farm_;
  std::unique_ptr<cws::test::daemon> d_;
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

} // namespace
