// Serial-over-LAN against a real ipmi_sim: the test holds the serial side (a TCP listener
// ipmi_sim connects to) and drives the console state machine (ipmi/sol.hpp) from a small
// poll loop over a UDP socket, as the daemon's event loop will.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "../support/bmc_farm.hpp"
#include "ipmi/console_session.hpp"
#include "ipmi/session_setup.hpp"
#include "ipmi/sol.hpp"

namespace {

using namespace cws::ipmi;
using namespace std::chrono_literals;
using kind = sol_event::kind;

/// A TCP listener on 127.0.0.1 (any port).
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

/// One SOL console to a BMC: a UDP socket, the session set-up, then the state machine.
struct console {
  int fd = -1;
  std::optional<sol> c;
  std::string output;
  std::vector<sol_event> events;

  explicit console(unsigned short port) {
    fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  ~console() {
    ::close(fd);
  }

  void send(const bytes& b) const {
    (void)::send(fd, b.data(), b.size(), 0);
  }

  /// The RMCP+ set-up (blocking, bounded), then the console with `o`.
  bool open(sol_options o) {
    session_setup s{"admin", "secret"};
    auto until = sol_clock::now() + 5s;
    send(s.packet());
    auto resend = sol_clock::now() + 500ms;
    while (sol_clock::now() < until) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) {
        uint8_t buf[2048];
        auto n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
          continue;
        }
        auto r = s.feed(buf, static_cast<size_t>(n));
        if (r == session_setup::progress::failed) {
          ADD_FAILURE() << s.message();
          return false;
        }
        if (r == session_setup::progress::established) {
          c.emplace(s.take(), o, sol_clock::now());
          flush();
          return true;
        }
        if (r == session_setup::progress::next) {
          send(s.packet());
          resend = sol_clock::now() + 500ms;
        }
      } else if (sol_clock::now() > resend) {
        send(s.packet());
        resend = sol_clock::now() + 500ms;
      }
    }
    return false;
  }

  void flush() {
    for (const auto& d : c->take_datagrams()) {
      send(d);
    }
    output += c->take_output();
    auto e = c->take_events();
    events.insert(events.end(), e.begin(), e.end());
  }

  bool saw(kind k) const {
    for (const auto& e : events) {
      if (e.what == k) {
        return true;
      }
    }
    return false;
  }
};

/// The serial side: the connection ipmi_sim made to the test's listener.
struct serial_side {
  int fd = -1;
  std::string received;
  ~serial_side() {
    if (fd >= 0) {
      ::close(fd);
    }
  }
  void write(const std::string& s) const {
    ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
  }
};

/// Runs `cons` and the serial side until `done` or `limit` passes.
bool drive(std::vector<console*> cons, serial_side& serial, const std::function<bool()>& done,
           std::chrono::milliseconds limit = 5s) {
  auto until = sol_clock::now() + limit;
  while (!done()) {
    auto now = sol_clock::now();
    if (now > until) {
      return false;
    }
    std::vector<pollfd> ps;
    auto wake = until;
    for (auto* k : cons) {
      ps.push_back({k->fd, POLLIN, 0});
      wake = std::min(wake, k->c->deadline());
    }
    ps.push_back({serial.fd, POLLIN, 0});
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count();
    ::poll(ps.data(), ps.size(), static_cast<int>(std::clamp<long long>(ms, 0, 50)));
    now = sol_clock::now();
    for (size_t i = 0; i < cons.size(); ++i) {
      if ((ps[i].revents & POLLIN) != 0) {
        uint8_t buf[2048];
        auto n = ::recv(cons[i]->fd, buf, sizeof buf, 0);
        if (n > 0) {
          cons[i]->c->feed(buf, static_cast<size_t>(n), now);
        }
      }
      cons[i]->c->tick(now);
      cons[i]->flush();
    }
    if ((ps.back().revents & POLLIN) != 0) {
      char buf[2048];
      auto n = ::recv(serial.fd, buf, sizeof buf, 0);
      if (n > 0) {
        serial.received.append(buf, static_cast<size_t>(n));
      }
    }
  }
  return true;
}

class ipmi_sol : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cws::test::have_ipmi_sim()) {
      GTEST_SKIP() << "ipmi_sim (package openipmi) is not installed";
    }
    dir_ = std::filesystem::temp_directory_path()
           / ("cws-sol-" + std::to_string(getpid()) + "-"
              + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    unsigned short port = 0;
    listener_ = listen_any(port);
    farm_
      = std::make_unique<cws::test::bmc_farm>(dir_, 1, "secret", std::vector<unsigned short>{port});
    // ipmi_sim connects to the serial side as it starts
    pollfd p{listener_, POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 12000), 1) << "ipmi_sim did not connect to the serial side";
    serial_.fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    ASSERT_GE(serial_.fd, 0);
  }
  void TearDown() override {
    farm_.reset();
    if (listener_ >= 0) {
      ::close(listener_);
    }
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  int listener_ = -1;
  serial_side serial_;
  std::unique_ptr<cws::test::bmc_farm> farm_;
};

TEST_F(ipmi_sol, serial_text_arrives_and_keystrokes_reach_the_serial_side) {
  console a{farm_->port(0)};
  ASSERT_TRUE(a.open({}));
  ASSERT_TRUE(drive({&a}, serial_, [&] { return a.saw(kind::active); }));
  EXPECT_GT(a.c->packet_chars(), 0u);

  serial_.write("hello-from-the-serial-side\r\n");
  ASSERT_TRUE(
    drive({&a}, serial_,
          [&] { return a.output.find("hello-from-the-serial-side\r\n") != std::string::npos; }))
    << a.output;

  // more than one packet's worth of keystrokes, in order, nothing twice
  std::string typed = "typed-through-sol-0123456789-abcdefghijklmnopqrstuvwxyz\r";
  ASSERT_EQ(
    a.c->write(reinterpret_cast<const uint8_t*>(typed.data()), typed.size(), sol_clock::now()),
    typed.size());
  a.flush();
  // the serial side may have every byte before the BMC's ack of the last packet comes back
  ASSERT_TRUE(drive({&a}, serial_,
                    [&] { return serial_.received.size() >= typed.size() && a.c->queued() == 0; }))
    << serial_.received << " queued " << a.c->queued();
  EXPECT_EQ(serial_.received, typed);

  // a larger burst from the serial side comes through whole (several 255-byte packets)
  std::string burst;
  for (int i = 0; i < 40; ++i) {
    burst += "line " + std::to_string(i) + " of the burst\r\n";
  }
  a.output.clear();
  serial_.write(burst);
  ASSERT_TRUE(drive({&a}, serial_, [&] { return a.output.size() >= burst.size(); }))
    << a.output.size();
  EXPECT_EQ(a.output, burst);

  a.c->close(sol_clock::now());
  a.flush();
  ASSERT_TRUE(drive({&a}, serial_, [&] { return a.saw(kind::closed); }));
}

TEST_F(ipmi_sol, a_second_activation_is_already_active_and_force_takes_the_console_over) {
  console a{farm_->port(0)};
  ASSERT_TRUE(a.open({}));
  ASSERT_TRUE(drive({&a}, serial_, [&] { return a.saw(kind::active); }));

  console b{farm_->port(0)};
  ASSERT_TRUE(b.open({}));
  ASSERT_TRUE(drive({&a, &b}, serial_, [&] { return b.c->at() == sol::phase::done; }));
  EXPECT_TRUE(b.saw(kind::already_active));
  EXPECT_FALSE(b.saw(kind::active));

  sol_options force;
  force.force = true;
  console f{farm_->port(0)};
  ASSERT_TRUE(f.open(force));
  ASSERT_TRUE(drive({&a, &f}, serial_, [&] { return f.saw(kind::active); }));

  serial_.write("after-the-takeover\r\n");
  ASSERT_TRUE(drive({&a, &f}, serial_,
                    [&] { return f.output.find("after-the-takeover") != std::string::npos; }))
    << f.output;
  EXPECT_EQ(a.output.find("after-the-takeover"), std::string::npos); // the old one hears nothing

  std::string typed = "from-the-new-holder\r";
  f.c->write(reinterpret_cast<const uint8_t*>(typed.data()), typed.size(), sol_clock::now());
  f.flush();
  ASSERT_TRUE(drive({&a, &f}, serial_, [&] { return serial_.received.size() >= typed.size(); }));
  EXPECT_EQ(serial_.received, typed);

  f.c->close(sol_clock::now());
  a.c->close(sol_clock::now());
  f.flush();
  a.flush();
  drive({&a, &f}, serial_, [&] { return f.saw(kind::closed) && a.saw(kind::closed); });
  EXPECT_TRUE(f.saw(kind::closed));
}

// A session that ends with a packet of the BMC's unacknowledged (a client killed, or gone
// with the echo of its last key in flight) leaves ipmi_sim waiting for that acknowledgement
// across activations: the next console's first characters then waited for ipmi_sim's 1 s
// retry timer. The console flushes the BMC's outbound side as it activates.
TEST_F(ipmi_sol, the_first_echo_after_a_session_left_a_packet_unacknowledged_is_not_held_back) {
  console a{farm_->port(0)};
  ASSERT_TRUE(a.open({}));
  ASSERT_TRUE(drive({&a}, serial_, [&] { return a.saw(kind::active); }));
  // the BMC sends this to `a` and starts its 1 s retry timer; `a` never acknowledges it: it
  // is read only while `a` is closing (a closing console ignores characters)
  serial_.write("x");
  pollfd p{a.fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 2000), 1);
  auto sent = sol_clock::now();
  a.c->close(sent);
  a.flush();
  ASSERT_TRUE(drive({&a}, serial_, [&] { return a.saw(kind::closed); }));
  EXPECT_EQ(a.output, "");

  // just after the retry timer's first tick (nothing to resend to: no session): the next tick
  // is a second away
  std::this_thread::sleep_until(sent + 1050ms);
  console b{farm_->port(0)};
  ASSERT_TRUE(b.open({}));
  ASSERT_TRUE(drive({&b}, serial_, [&] { return b.saw(kind::active); }));
  auto typed = sol_clock::now();
  b.c->write(reinterpret_cast<const uint8_t*>("k"), 1, typed);
  b.flush();
  ASSERT_TRUE(drive({&b}, serial_, [&] { return serial_.received == "k"; }));
  serial_.write("k"); // the serial side's echo
  ASSERT_TRUE(drive({&b}, serial_, [&] { return b.output.find('k') != std::string::npos; }));
  auto echo = std::chrono::duration_cast<std::chrono::milliseconds>(sol_clock::now() - typed);
  EXPECT_LT(echo.count(), 400) << "the first echo waited for the BMC's retry";

  b.c->close(sol_clock::now());
  b.flush();
  drive({&b}, serial_, [&] { return b.saw(kind::closed); });
}

TEST_F(ipmi_sol, a_bmc_gone_under_an_open_console_is_lost_by_the_next_keepalive) {
  sol_options o;
  o.keepalive = 300ms;
  o.request_timeout = 200ms;
  o.request_retries = 1;
  console a{farm_->port(0)};
  ASSERT_TRUE(a.open(o));
  ASSERT_TRUE(drive({&a}, serial_, [&] { return a.saw(kind::active); }));
  // the keepalive is answered while the BMC is there
  ASSERT_FALSE(drive(
    {&a}, serial_, [&] { return a.c->at() != sol::phase::active; }, 1s));
  farm_->stop(0);
  ASSERT_TRUE(drive(
    {&a}, serial_, [&] { return a.saw(kind::lost); }, 3s));
  EXPECT_EQ(a.c->at(), sol::phase::done);
}

/// What console_sessions reported, for a test thread to wait on.
struct recorder {
  std::mutex mu;
  std::condition_variable cv;
  std::string output;
  std::vector<sol_event> events;

  console_sessions::callbacks callbacks() {
    return {[this](uint64_t, std::string b) {
              std::lock_guard<std::mutex> l{mu};
              output += b;
              cv.notify_all();
            },
            [this](uint64_t, const sol_event& e) {
              std::lock_guard<std::mutex> l{mu};
              events.push_back(e);
              cv.notify_all();
            }};
  }
  bool wait(const std::function<bool()>& done) {
    std::unique_lock<std::mutex> l{mu};
    return cv.wait_for(l, 5s, done);
  }
  bool saw(kind k) {
    for (const auto& e : events) {
      if (e.what == k) {
        return true;
      }
    }
    return false;
  }
};

/// Reads the serial side until it holds `n` bytes (5 s at most).
void read_serial(serial_side& s, size_t n) {
  auto until = sol_clock::now() + 5s;
  while (s.received.size() < n && sol_clock::now() < until) {
    pollfd p{s.fd, POLLIN, 0};
    if (::poll(&p, 1, 50) == 1) {
      char buf[512];
      auto got = ::recv(s.fd, buf, sizeof buf, 0);
      if (got > 0) {
        s.received.append(buf, static_cast<size_t>(got));
      }
    }
  }
}

TEST_F(ipmi_sol, console_sessions_hold_a_console_on_their_event_loop) {
  recorder r;
  console_sessions consoles{r.callbacks()};
  consoles.open(7, {"127.0.0.1", farm_->port(0), "admin", "secret", {}});
  ASSERT_TRUE(r.wait([&] { return r.saw(kind::active); }));

  serial_.write("through-the-event-loop\r\n");
  ASSERT_TRUE(
    r.wait([&] { return r.output.find("through-the-event-loop\r\n") != std::string::npos; }))
    << r.output;

  consoles.write(7, "keys-on-the-loop\r");
  read_serial(serial_, 17);
  EXPECT_EQ(serial_.received, "keys-on-the-loop\r");

  consoles.close(7);
  ASSERT_TRUE(r.wait([&] { return r.saw(kind::closed); }));
}

TEST_F(ipmi_sol, console_sessions_report_a_wrong_password_as_an_error) {
  recorder r;
  console_sessions consoles{r.callbacks()};
  consoles.open(1, {"127.0.0.1", farm_->port(0), "admin", "wrong", {}});
  ASSERT_TRUE(r.wait([&] { return !r.events.empty(); }));
  EXPECT_EQ(r.events[0].what, kind::error);
  EXPECT_FALSE(r.events[0].message.empty());
}

} // namespace
