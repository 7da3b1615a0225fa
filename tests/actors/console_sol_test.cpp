// The console server over the daemon's real console I/O (api::sol_consoles) against an
// ipmi_sim BMC with Serial-over-LAN, on CAF's threaded scheduler (the I/O calls back from its
// own loop thread, which the test coordinator does not allow): the replay a watcher gets
// when it attaches, the stream after it, the writer's keystrokes at the serial side, and the
// log file holding both.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <mutex>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/bmc_farm.hpp"
#include "actors/console_actor.hpp"
#include "api/sol_consoles.hpp"

namespace {

using namespace cws;
using namespace cws::actors;
using namespace std::chrono_literals;

struct seen {
  std::mutex mu;
  std::string bytes;
};

console_watcher::behavior_type watcher_impl(console_watcher::pointer, std::shared_ptr<seen> s) {
  return {
    [s](console_atom, const std::string&, const std::string& bytes) {
      std::lock_guard lock{s->mu};
      s->bytes += bytes;
    },
    [](notice_atom, const std::string&, const console_notice&) {},
    [](detached_atom, const std::string&, const std::string&) {},
  };
}

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = 15s) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (done()) {
      return true;
    }
    std::this_thread::sleep_for(20ms);
  }
  return done();
}

std::string slurp(const std::filesystem::path& p) {
  std::string out;
  api::console_log_tail(p, std::numeric_limits<size_t>::max(), 1 << 20, out);
  return out;
}

TEST(console_sol, a_watcher_gets_the_replay_then_the_stream_and_its_keys_reach_the_host) {
  if (!test::have_ipmi_sim()) {
    GTEST_SKIP() << "ipmi_sim (package openipmi) is not installed";
  }
  test::temp_dir dir;
  // the serial side: a listener ipmi_sim connects to
  int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::listen(lfd, 4);
  socklen_t len = sizeof a;
  getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
  test::bmc_farm farm{dir.path / "bmcs", 1, "secret", {ntohs(a.sin_port)}};
  pollfd p{lfd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 12000), 1);
  int serial = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(serial, 0);

  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  console_config cc;
  cc.io = std::make_shared<api::sol_consoles>(
    api::sol_consoles::config{{dir.path / "consoles", 1 << 20, 1, false}, {}});
  cc.read = [&] {
    api::console_spec s;
    s.node = "cn1";
    s.method = "ipmi";
    s.bmc = {"127.0.0.1", farm.port(0), "admin", "secret"};
    return std::vector<api::console_spec>{s};
  };
  auto console = spawn_console(sys, cc);
  auto log = dir.path / "consoles" / "cn1";
  ASSERT_TRUE(eventually([&] { return slurp(log).find("console up") != std::string::npos; }));
  std::string before = "written before anyone watched\r\n";
  ASSERT_EQ(::send(serial, before.data(), before.size(), 0), static_cast<ssize_t>(before.size()));
  ASSERT_TRUE(eventually([&] { return slurp(log).find(before) != std::string::npos; }));

  auto s = std::make_shared<seen>();
  auto w = sys.spawn(watcher_impl, s);
  caf::scoped_actor self{sys};
  console_attach_reply reply;
  self
    ->request(console, 5s, attach_atom::value,
              console_attach{"cn1", console_mode::rw, 4096, "root", "test"}, w)
    .receive([&](const console_attach_reply& r) { reply = r; },
             [&](caf::error& e) { FAIL() << sys.render(e); });
  EXPECT_TRUE(reply.writer);
  EXPECT_EQ(reply.state, "up");
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock{s->mu};
    return s->bytes.find(before) != std::string::npos;
  })); // the replay
  std::string after = "written while watched\r\n";
  ::send(serial, after.data(), after.size(), 0);
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock{s->mu};
    return s->bytes.find(after) != std::string::npos;
  }));
  {
    std::lock_guard lock{s->mu};
    EXPECT_LT(s->bytes.find(before), s->bytes.find(after));
  }
  // the writer's keystrokes reach the host's serial port
  self->send(console, input_atom::value, std::string{"cn1"}, w, std::string{"root\r"});
  std::string got;
  ASSERT_TRUE(eventually([&] {
    char buf[256];
    pollfd q{serial, POLLIN, 0};
    if (::poll(&q, 1, 0) == 1) {
      auto n = ::recv(serial, buf, sizeof buf, 0);
      if (n > 0) {
        got.append(buf, static_cast<size_t>(n));
      }
    }
    return got.find("root\r") != std::string::npos;
  }))
    << got;
  self->send_exit(w, caf::exit_reason::user_shutdown);
  self->send_exit(console, caf::exit_reason::user_shutdown);
  ::close(serial);
  ::close(lfd);
}

} // namespace
