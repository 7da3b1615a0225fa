// The nodeshell, jobs and console views in a real browser (tests/web/shellterm.mjs, docs/web.md
// "Nodeshell, jobs and consoles") against a real clusterwsd: two loopback sshd "racks" (so that
// the nodes' outputs fold into two groups) and a node whose sshd is gone (a failed node), a long
// job cancelled from the jobs view, and an ipmi_sim BMC with Serial-over-LAN whose serial side
// the test holds and echoes (a host's line discipline), opened in xterm.js.

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <fstream>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

#include "../support/browser.hpp"
#include "../support/sol_console_fixture.hpp"
#include "../support/sshd.hpp"

namespace {

using namespace cws::test;
using namespace std::chrono_literals;

/// Echoes what reaches a serial side back to it (CR as CR LF, as a tty with echo on), and keeps
/// what it got; stopped and joined by its destructor (before the fixture closes the socket).
class serial_echo {
 public:
  explicit serial_echo(int fd) : fd_(fd), thread_([this] { run(); }) {
  }
  ~serial_echo() {
    stop_ = true;
    thread_.join();
  }

  std::string got() {
    std::lock_guard lock{mutex_};
    return got_;
  }

 private:
  void run() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) != 1) {
        continue;
      }
      char buf[512];
      auto n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        return;
      }
      std::string in(buf, static_cast<size_t>(n));
      {
        std::lock_guard lock{mutex_};
        got_ += in;
      }
      std::string out;
      for (char c : in) {
        out += c;
        if (c == '\r') {
          out += '\n';
        }
      }
      ::send(fd_, out.data(), out.size(), MSG_NOSIGNAL);
    }
  }

  int fd_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::string got_;
  std::thread thread_;
};

class shellterm_test : public sol_console_fixture {};

TEST_F(shellterm_test,
       nodeshell_folds_every_nodes_output_a_long_job_is_cancelled_and_a_console_echoes) {
  if (!browser_available()) {
    GTEST_SKIP() << "no /usr/bin/chromium or web/node_modules/playwright-core";
  }
  sshd rack_a{dir_.path / "rack-a"};
  sshd rack_b{dir_.path / "rack-b"};
  start(1, "ssh_connect_timeout = 5\n");
  define("cn1", 0);
  auto home = d_->home();
  rack_a.authorize("root", home / "ssh" / "root" / "id_ed25519.pub");
  rack_b.authorize("root", home / "ssh" / "root" / "id_ed25519.pub");
  auto r = run_tool(home, "mkdef 'sh[01-04]' groups=racka,all ip=127.0.0.1 sshport="
                            + std::to_string(rack_a.port()));
  ASSERT_EQ(r.rc, 0) << r.out;
  r = run_tool(home, "mkdef 'sh[05-06]' groups=rackb,all ip=127.0.0.1 sshport="
                       + std::to_string(rack_b.port()));
  ASSERT_EQ(r.rc, 0) << r.out;
  r = run_tool(home, "mkdef shdead groups=all ip=127.0.0.1 sshport=" + std::to_string(free_port()));
  ASSERT_EQ(r.rc, 0) << r.out;
  rack_a.start();
  rack_b.start();
  d_->start();
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "console up"); })) << slurp(d_->log());
  type(0, "replayed before the browser came\r\n");
  type(0, "\x1b[38;2;200;40;40mtruecolor text\x1b[0m\r\n");
  ASSERT_TRUE(eventually([&] { return log_has("cn1", "truecolor text"); }));

  serial_echo echo{serial_[0]};
  auto run = run_browser(*d_, "shellterm.mjs", "root", "rootpw", shots_dir(dir_.path),
                         {{"CWS_PORT_A", std::to_string(rack_a.port())},
                          {"CWS_PORT_B", std::to_string(rack_b.port())},
                          {"CWS_CONSOLE_NODE", "cn1"}});
  EXPECT_EQ(run.rc, 0) << run.out;
  std::cout << run.out; // the steps' times
  // The line typed in the browser reached the node's serial side as keystrokes.
  EXPECT_NE(echo.got().find("typed in the browser\r"), std::string::npos) << echo.got();
  // A reader's keystrokes never did.
  EXPECT_EQ(echo.got().find("never sent"), std::string::npos) << echo.got();
  rack_a.stop();
  rack_b.stop();
}

} // namespace
