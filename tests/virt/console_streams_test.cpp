// Console streams of virtual machines (cons=kvm) against real libvirt connections: the test
// driver (which has no consoles: virDomainOpenConsole is "not supported" there), a domain that
// does not exist, a hypervisor that cannot be reached and one that never answers. A console
// that works needs libvirtd's QEMU driver and a VM: tests/e2e/console_vm_test.sh.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <netinet/in.h>
#include <optional>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "virt/console_streams.hpp"

namespace {

using namespace std::chrono_literals;
using cws::virt::console_event;
using cws::virt::console_stream_config;
using cws::virt::console_streams;
using cws::virt::open_failure_kind;
using kind = console_event::kind;

/// What the streams report, for the test thread to wait on.
struct recorder {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::pair<uint64_t, console_event>> events;

  console_streams::callbacks callbacks() {
    console_streams::callbacks cb;
    cb.output = [](uint64_t, std::string) {
    };
    cb.event = [this](uint64_t id, const console_event& e) {
      std::lock_guard lock{mu};
      events.emplace_back(id, e);
      cv.notify_all();
    };
    return cb;
  }

  /// Console `id`'s first event, or nullopt after `limit`.
  std::optional<console_event> first(uint64_t id, std::chrono::milliseconds limit = 10s) {
    std::unique_lock lock{mu};
    std::optional<console_event> out;
    cv.wait_for(lock, limit, [&] {
      for (auto& [i, e] : events) {
        if (i == id) {
          out = e;
          return true;
        }
      }
      return false;
    });
    return out;
  }
};

/// A hypervisor URI whose port takes the connection (the kernel's backlog) but never speaks
/// libvirt's RPC; `fd` is the listener, for the test to close.
std::string silent_hypervisor(int& fd) {
  fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 16) != 0
      || getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    fd = -1;
    return {};
  }
  return "qemu+tcp://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/system";
}

TEST(console_streams, another_clients_console_session_reads_as_already_active) {
  EXPECT_EQ(open_failure_kind("operation failed: Active console session exists for this domain"),
            kind::already_active);
  EXPECT_EQ(open_failure_kind("Requested operation is not valid: domain is not running"),
            kind::error);
  EXPECT_EQ(open_failure_kind(""), kind::error);
}

TEST(console_streams, a_driver_without_consoles_is_an_error_saying_so_and_the_connection_closes) {
  recorder r;
  console_streams streams{r.callbacks()};
  streams.open(1, "test:///default", "test", false);
  auto e = r.first(1);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->what, kind::error);
  EXPECT_NE(e->message.find("virDomainOpenConsole"), std::string::npos) << e->message;
  for (int i = 0; i < 50 && streams.connections() != 0; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(streams.connections(), 0u);
}

TEST(console_streams, a_domain_that_does_not_exist_is_an_error_naming_it) {
  recorder r;
  console_streams streams{r.callbacks()};
  streams.open(1, "test:///default", "no-such-vm", true);
  auto e = r.first(1);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->what, kind::error);
  EXPECT_NE(e->message.find("no-such-vm"), std::string::npos) << e->message;
}

TEST(console_streams, a_hypervisor_that_cannot_be_reached_is_an_error_naming_its_uri) {
  recorder r;
  console_streams streams{r.callbacks()};
  std::string uri = "qemu+unix:///system?socket=/nonexistent/cws-libvirt-sock";
  streams.open(1, uri, "vm", false);
  auto e = r.first(1);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->what, kind::error);
  EXPECT_NE(e->message.find("Cannot connect to the hypervisor " + uri), std::string::npos)
    << e->message;
}

TEST(console_streams, keystrokes_for_a_console_that_is_not_up_are_dropped_and_counted) {
  recorder r;
  console_streams streams{r.callbacks()};
  streams.write(7, "abc");
  auto e = r.first(7);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->what, kind::dropped);
  EXPECT_EQ(e->count, 3u);
  streams.close(7); // nothing open: nothing follows
  std::this_thread::sleep_for(100ms);
  std::lock_guard lock{r.mu};
  EXPECT_EQ(r.events.size(), 1u);
}

TEST(console_streams, a_hypervisor_that_never_answers_holds_back_neither_others_nor_the_stop) {
  int fd = -1;
  auto silent = silent_hypervisor(fd);
  ASSERT_FALSE(silent.empty());
  recorder r;
  console_stream_config cfg;
  cfg.stop_wait = 300ms;
  auto streams = std::make_unique<console_streams>(r.callbacks(), cfg);
  streams->open(1, silent, "vm", false);
  streams->open(2, "test:///default", "test", false);
  auto other = r.first(2, 5s);
  ASSERT_TRUE(other) << "the second hypervisor's console waited for the silent one";
  EXPECT_EQ(other->what, kind::error);
  EXPECT_FALSE(r.first(1, 200ms)) << "the silent hypervisor answered?";
  auto t0 = std::chrono::steady_clock::now();
  streams.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  ::close(fd); // the connection refused now: the left-behind open ends
}

} // namespace
