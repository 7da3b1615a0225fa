// The prober against real sockets on 127.0.0.x: listening, refused and silent ports (a full
// accept queue drops SYNs, as a dead node's network does), deadlines, fanout, cancel,
// unresolvable names and the installer's question-and-answer port.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "../support/silent_port.hpp"
#include "../support/sshd.hpp"
#include "probe/prober.hpp"

namespace {

using namespace std::chrono_literals;
using cws::probe::outcome;
using cws::probe::port_state;
using cws::probe::prober;
using cws::probe::target;
using clock_type = std::chrono::steady_clock;

/// A listener that accepts (and keeps) every connection, on 127.0.0.1.
class open_port {
 public:
  open_port() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 4096);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
  }
  ~open_port() {
    ::close(fd_);
  }
  unsigned short port() const {
    return port_;
  }
  int fd() const {
    return fd_;
  }

 private:
  int fd_;
  unsigned short port_;
};

struct run_result {
  std::vector<outcome> results;
  std::chrono::milliseconds took{0};
};

run_result probe_all(prober& p, std::vector<target> targets, size_t fanout,
                     std::chrono::milliseconds timeout) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  run_result r;
  r.results.resize(targets.size());
  auto t0 = clock_type::now();
  p.run(
    std::move(targets), fanout, timeout,
    [&](size_t i, outcome o) {
      std::lock_guard<std::mutex> g{mu};
      r.results[i] = std::move(o);
    },
    [&] {
      std::lock_guard<std::mutex> g{mu};
      done = true;
      cv.notify_all();
    });
  std::unique_lock<std::mutex> lock{mu};
  EXPECT_TRUE(cv.wait_for(lock, 60s, [&] { return done; }));
  r.took = std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t0);
  return r;
}

target make(const std::string& name, const std::string& address, std::vector<uint16_t> ports) {
  target t;
  t.node = name;
  t.address = address;
  t.ports = std::move(ports);
  return t;
}

TEST(prober, tells_open_refused_and_silent_ports_apart) {
  prober p;
  open_port up;
  cws::test::silent_port silent;
  auto refused = cws::test::free_port();
  auto r = probe_all(p, {make("n1", "127.0.0.1", {up.port(), refused, silent.port()})}, 8, 700ms);
  ASSERT_EQ(r.results[0].ports.size(), 3u);
  EXPECT_EQ(r.results[0].ports[0], port_state::open);
  EXPECT_EQ(r.results[0].ports[1], port_state::closed);
  EXPECT_EQ(r.results[0].ports[2], port_state::silent);
  EXPECT_TRUE(r.results[0].alive());
  EXPECT_TRUE(r.results[0].error.empty());
  // the silent port kept the node until its deadline, and no longer
  EXPECT_GE(r.took, 690ms);
  EXPECT_LT(r.took, 2000ms);
}

TEST(prober, a_node_that_answers_everywhere_ends_at_once) {
  prober p;
  open_port up;
  auto refused = cws::test::free_port();
  auto r = probe_all(p, {make("n1", "127.0.0.1", {up.port(), refused})}, 8, 10s);
  EXPECT_EQ(r.results[0].ports[0], port_state::open);
  EXPECT_EQ(r.results[0].ports[1], port_state::closed);
  EXPECT_LT(r.took, 2000ms);
}

TEST(prober, dead_nodes_cost_one_deadline_all_together) {
  prober p;
  open_port up;
  cws::test::silent_port dead1{"127.0.0.3"};
  cws::test::silent_port dead2{"127.0.0.3"};
  std::vector<target> targets;
  for (int i = 0; i < 400; ++i) {
    bool dead = i % 4 == 0;
    targets.push_back(dead
                        ? make("d" + std::to_string(i), "127.0.0.3", {dead1.port(), dead2.port()})
                        : make("n" + std::to_string(i), "127.0.0.1", {up.port()}));
  }
  auto r = probe_all(p, std::move(targets), 1024, 1000ms);
  size_t noping = 0;
  for (size_t i = 0; i < r.results.size(); ++i) {
    EXPECT_EQ(r.results[i].alive(), i % 4 != 0) << i;
    noping += r.results[i].alive() ? 0 : 1;
  }
  EXPECT_EQ(noping, 100u);
  EXPECT_GE(r.took, 990ms);
  // in parallel: one after another would take 100 s (the speed goal is bench/nodestat.sh's)
  EXPECT_LT(r.took, 5000ms);
}

TEST(prober, fanout_bounds_the_nodes_probed_at_once) {
  prober p;
  cws::test::silent_port silent;
  std::vector<target> targets;
  for (int i = 0; i < 6; ++i) {
    targets.push_back(make("d" + std::to_string(i), "127.0.0.1", {silent.port()}));
  }
  auto r = probe_all(p, std::move(targets), 2, 200ms); // three waves of two
  EXPECT_GE(r.took, 590ms);
  EXPECT_LT(r.took, 2000ms);
  for (const auto& o : r.results) {
    EXPECT_EQ(o.ports[0], port_state::silent);
  }
}

TEST(prober, names_are_resolved_and_unknown_ones_reported) {
  prober p;
  open_port up;
  // (localhost is in /etc/hosts, and glibc refuses a name with a blank before asking any
  // name server: no query leaves the machine)
  auto r = probe_all(p, {make("localhost", "", {up.port()}), make("no such node", "", {up.port()})},
                     8, 2s);
  EXPECT_EQ(r.results[0].ports[0], port_state::open);
  EXPECT_EQ(r.results[1].error, "resolve");
  EXPECT_NE(r.results[1].message.find("no such node"), std::string::npos);
}

TEST(prober, cancel_ends_running_and_waiting_nodes) {
  prober p;
  cws::test::silent_port silent;
  std::vector<target> targets;
  for (int i = 0; i < 4; ++i) {
    targets.push_back(make("d" + std::to_string(i), "127.0.0.1", {silent.port()}));
  }
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::vector<std::string> errors(4);
  std::vector<std::string> messages(4);
  std::vector<size_t> ports(4);
  auto t0 = clock_type::now();
  auto id = p.run(
    std::move(targets), 2, 30s,
    [&](size_t i, outcome o) {
      std::lock_guard<std::mutex> g{mu};
      errors[i] = o.error;
      messages[i] = o.message;
      ports[i] = o.ports.size();
    },
    [&] {
      std::lock_guard<std::mutex> g{mu};
      done = true;
      cv.notify_all();
    });
  std::this_thread::sleep_for(100ms);
  p.cancel(id);
  std::unique_lock<std::mutex> lock{mu};
  ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return done; }));
  EXPECT_LT(clock_type::now() - t0, 5s);
  for (const auto& e : errors) {
    EXPECT_EQ(e, "cancelled");
  }
  // the kit's one wording (base/node_errc.hpp): two were probing (fanout 2), two waited;
  // every outcome still has a state per port
  EXPECT_EQ(messages[0], "The request was cancelled.");
  EXPECT_EQ(messages[1], "The request was cancelled.");
  EXPECT_EQ(messages[2], "The request was cancelled before it started.");
  EXPECT_EQ(messages[3], "The request was cancelled before it started.");
  EXPECT_EQ(ports, (std::vector<size_t>{1, 1, 1, 1}));
  p.cancel(id); // ended: nothing happens
}

TEST(prober, the_query_port_gets_its_question_and_keeps_the_answer) {
  prober p;
  open_port installer;
  std::thread server([&] {
    int c = ::accept(installer.fd(), nullptr, nullptr);
    char buf[64] = {};
    auto n = ::recv(c, buf, sizeof buf - 1, 0);
    std::string answer = std::string{buf, static_cast<size_t>(std::max<ssize_t>(n, 0))} == "stat \n"
                           ? "installing prep\nmore\n"
                           : "wrong question\n";
    ::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
    ::close(c);
  });
  auto refused = cws::test::free_port();
  auto t = make("n1", "127.0.0.1", {refused, installer.port()});
  t.query_index = 1;
  t.query = "stat \n";
  auto r = probe_all(p, {t}, 8, 5s);
  server.join();
  EXPECT_EQ(r.results[0].ports[1], port_state::open);
  EXPECT_EQ(r.results[0].answer, "installing prep\nmore\n");
  EXPECT_LT(r.took, 3000ms);
}

TEST(prober, destroying_it_ends_every_node_with_its_result) {
  cws::test::silent_port silent;
  std::atomic<int> results{0};
  std::atomic<int> stopping{0};
  std::atomic<bool> done{false};
  {
    prober p;
    std::vector<target> targets;
    for (int i = 0; i < 3; ++i) {
      targets.push_back(make("d" + std::to_string(i), "127.0.0.1", {silent.port()}));
    }
    p.run(
      std::move(targets), 1, 30s,
      [&](size_t, outcome o) {
        results += o.error == "cancelled";
        stopping += o.message == "the service is stopping"
                    || o.message == "The service stopped before the request started.";
      },
      [&] { done = true; });
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(results.load(), 3);
  EXPECT_EQ(stopping.load(), 3) << "a stop is worded as one, not as a cancel";
  EXPECT_TRUE(done.load());
}

} // namespace
