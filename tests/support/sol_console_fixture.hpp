#pragma once

// A real clusterwsd and ipmi_sim BMCs with Serial-over-LAN whose serial sides the test holds
// (the TCP listener each ipmi_sim connects to): the fixture of the console tests
// (tests/daemon/console_test.cpp, console_ws_test.cpp).

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../store/temp_home.hpp"
#include "bmc_farm.hpp"
#include "daemon.hpp"
#include "https_client.hpp"

namespace cws::test {

using namespace std::chrono_literals;

/// A TCP listener on 127.0.0.1 (any port): a BMC's serial side.
inline int listen_any(unsigned short& port) {
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
inline bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = 20s) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (done()) {
      return true;
    }
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

/// BMCs with SOL, their serial sides, and a daemon; each test starts what it needs.
class sol_console_fixture : public ::testing::Test {
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

  temp_dir dir_;
  std::vector<int> listeners_;
  std::vector<int> serial_;
  std::unique_ptr<bmc_farm> farm_;
  std::unique_ptr<cws::test::daemon> d_;
};

} // namespace cws::test
