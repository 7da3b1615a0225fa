// Findings N9 and N11 of the second adversarial test (issue #27), replayed against a real
// clusterwsd, a real sshd and real users: work that outlived its caller (a REST client that
// left, an interrupted xdsh, a fan-out call past call_timeout, fan-out work without a cap),
// and one peer holding every connection.

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"
#include "../support/sshd.hpp"

namespace {

using cws::test::announced_socket;
using cws::test::as_user;
using cws::test::run_tool;
using clock_type = std::chrono::steady_clock;

constexpr const char* test_user = "cwsrt";

/// Whether a process whose whole command line matches `pattern` (pgrep -x -f) runs: the
/// remote command itself, not a local xdsh that names it.
bool running(const std::filesystem::path& home, const std::string& pattern) {
  return run_tool(home, "pgrep -x -f '" + pattern + "'").rc == 0;
}

/// Waits up to `limit` for `pred`.
template<class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit) {
  auto end = clock_type::now() + limit;
  while (clock_type::now() < end) {
    if (pred()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

/// A value of the metrics page (the first sample of `name`), -1 if absent.
double metric(cws::test::https_client& c, const cws::test::daemon& d, const std::string& name) {
  auto page = c.get(d.url("/metrics")).body;
  auto at = page.find("\n" + name + " ");
  if (at == std::string::npos) {
    return -1;
  }
  return std::stod(page.substr(at + name.size() + 2));
}

/// A plain HTTP request for `target` on the connection `fd`.
std::string plain_request(const std::string& method, const std::string& target,
                          const std::string& body) {
  return method + " " + target
         + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
         + std::to_string(body.size()) + "\r\n\r\n" + body;
}

/// True if the daemon closed `fd` within `wait` (a refused connection), false if it kept it.
bool closed_within(int fd, std::chrono::milliseconds wait) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) {
    return false;
  }
  char c;
  return ::recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

/// A connection to the local socket at `path` (-1 if connect failed).
int connect_unix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// A TCP connection to 127.0.0.1:`port` from the address `from` (127.0.0.x).
int connect_tcp(const char* from, unsigned short port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, from, &src.sin_addr);
  ::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(port);
  dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof dst) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// -- N9: work outlives its caller ------------------------------------------------------------

class runtime_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    farm_ = new cws::test::sshd(dir_->path / "farm");
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    auto home = d_->home();
    std::ofstream{home / "clusterws.conf", std::ios::app}
      << "ssh_connect_timeout = 5\ncall_timeout = 4\n"
         "max_nodes_in_flight = 8\nmax_nodes_in_flight_per_user = 5\n";
    farm_->authorize("root", home / "ssh" / "root" / "id_ed25519.pub");
    user_ok_ = cws::test::ensure_user(test_user);
    if (user_ok_) {
      cws::test::make_key(home / "ssh" / test_user / "id_ed25519");
      farm_->authorize(test_user, home / "ssh" / test_user / "id_ed25519.pub");
      run_tool(home,
               std::string{"echo userpw | clusterctl passwd "} + test_user + " --password-stdin");
      run_tool(home,
               std::string{"mkdef -t policy -o 6 name="} + test_user + " rule=allow commands=xdsh");
    }
    auto r = run_tool(home, "mkdef 'rt[01-12]' groups=farm,all ip=127.0.0.1 sshport="
                              + std::to_string(farm_->port()));
    ASSERT_EQ(r.rc, 0) << r.out;
    farm_->start();
    d_->start();
  }

  static void TearDownTestSuite() {
    EXPECT_EQ(d_->stop(), 0);
    farm_->stop();
    delete d_;
    delete farm_;
    delete dir_;
  }

  static const std::filesystem::path& home() {
    return d_->home();
  }

  /// Nodes of running fan-out calls, as the metrics page counts them.
  double in_flight() {
    return metric(client, *d_, "clusterws_fanout_nodes_in_flight");
  }

  /// Sends a nodeshell of `command` on `nodes` (`extra`: more query) and closes the
  /// connection after `wait` without reading the answer.
  void leave_after(const std::string& nodes, const std::string& command, const std::string& extra,
                   std::chrono::milliseconds wait) {
    cws::test::https_client c{d_->ca(), d_->port()};
    c.exchange(plain_request("POST", d_->url("/nodes/" + nodes + "/nodeshell", extra),
                             "{\"command\":\"" + command + "\"}"),
               wait);
  }

  static cws::test::temp_dir* dir_;
  static cws::test::sshd* farm_;
  static cws::test::daemon* d_;
  static bool user_ok_;
  cws::test::https_client client{d_->ca(), d_->port()};
};

cws::test::temp_dir* runtime_test::dir_ = nullptr;
cws::test::sshd* runtime_test::farm_ = nullptr;
cws::test::daemon* runtime_test::d_ = nullptr;
bool runtime_test::user_ok_ = false;

TEST_F(runtime_test, a_rest_client_that_leaves_a_nodeshell_leaves_a_job_that_call_timeout_ends) {
  // the attack: POST a long nodeshell, close the connection; the commands ran on for good.
  // Now the call is a job its client awaited: it runs on (GET /jobs reads it), bounded by
  // the call's call_timeout (4 s here) as if its client had stayed.
  auto left = clock_type::now();
  leave_after("rt01,rt02", "sleep 71.25", {}, std::chrono::milliseconds(1500));
  auto jobs = client.request("GET", d_->url("/jobs"));
  ASSERT_EQ(jobs.status, 200) << jobs.body;
  EXPECT_NE(jobs.body.find("\"operation\":\"nodeshell\",\"state\":\"running\""), std::string::npos)
    << jobs.body;
  EXPECT_TRUE(running(home(), "sleep 71[.]25")) << "the job ran on without its client";
  EXPECT_TRUE(
    eventually([&] { return !running(home(), "sleep 71[.]25"); }, std::chrono::seconds(8)))
    << "the remote commands outlived their call_timeout";
  std::chrono::duration<double> took = clock_type::now() - left;
  EXPECT_LT(took.count(), 9.0);
  EXPECT_TRUE(eventually([&] { return in_flight() == 0; }, std::chrono::seconds(3)));
  EXPECT_TRUE(eventually(
    [&] {
      auto log = cws::test::slurp(d_->log());
      return log.find("2 of 2 nodes failed (2 cancelled)") != std::string::npos
             && log.find("Not finished within call_timeout") != std::string::npos;
    },
    std::chrono::seconds(2)))
    << cws::test::slurp(d_->log());
}

TEST_F(runtime_test, a_streamed_nodeshell_whose_client_leaves_ends_at_call_timeout) {
  // stream=1 writes only when a node ends: a client that left is seen by the look, not a write
  leave_after("rt03", "sleep 71.5", "&stream=1", std::chrono::milliseconds(1500));
  EXPECT_TRUE(eventually([&] { return !running(home(), "sleep 71[.]5"); }, std::chrono::seconds(8)))
    << "the remote command outlived its call_timeout";
  EXPECT_TRUE(eventually([&] { return in_flight() == 0; }, std::chrono::seconds(3)));
}

TEST_F(runtime_test, a_fan_out_call_ends_at_call_timeout_with_one_result_per_node) {
  auto start = clock_type::now();
  auto r = client.request("POST", d_->url("/nodes/rt04,rt05/nodeshell", "&format=detail"),
                          "{\"command\":\"sleep 71.75\"}");
  std::chrono::duration<double> took = clock_type::now() - start;
  EXPECT_LT(took.count(), 9.0) << "call_timeout (4 s) did not bound the fan-out call";
  // the answer as documented (format=detail): one result per node, saying why it ended
  EXPECT_EQ(r.status, 201u) << r.body;
  for (const char* node : {"rt04", "rt05"}) {
    EXPECT_NE(
      r.body.find(std::string{"\""} + node
                  + "\":{\"rc\":-1,\"stdout\":[],\"stderr\":[],\"error\":\"cancelled\","
                    "\"message\":\"Not finished within call_timeout (4 seconds); ended.\"}"),
      std::string::npos)
      << r.body;
  }
  EXPECT_TRUE(
    eventually([&] { return !running(home(), "sleep 71[.]75"); }, std::chrono::seconds(3)));
}

TEST_F(runtime_test, an_interrupted_non_root_xdsh_ends_the_commands_on_the_nodes) {
  if (!user_ok_) {
    GTEST_SKIP() << "needs root to create the test user";
  }
  auto out = dir_->path / "xdsh.out";
  // in the background (where sh ignores SIGINT): SIGTERM is the signal here
  auto r = run_tool(home(), std::string{"setpriv --reuid="} + test_user + " --regid=" + test_user
                              + " --init-groups xdsh rt06 'sleep 72.25' >" + out.string()
                              + " 2>&1 </dev/null & echo $!");
  ASSERT_EQ(r.rc, 0) << r.out;
  pid_t pid = std::stoi(r.out);
  ASSERT_TRUE(
    eventually([&] { return running(home(), "sleep 72[.]25"); }, std::chrono::seconds(10)))
    << cws::test::slurp(out);
  ::kill(pid, SIGTERM);
  EXPECT_TRUE(eventually([&] { return ::kill(pid, 0) != 0; }, std::chrono::seconds(3)))
    << "xdsh did not end";
  EXPECT_TRUE(
    eventually([&] { return !running(home(), "sleep 72[.]25"); }, std::chrono::seconds(3)))
    << "the remote command outlived xdsh";
  EXPECT_NE(cws::test::slurp(out).find("Caught SIGTERM - terminating the child processes."),
            std::string::npos)
    << cws::test::slurp(out);
}

TEST_F(runtime_test, fan_out_work_in_flight_is_capped_in_total_and_per_user) {
  // root holds 5 nodes (its whole share) with a command that ends at call_timeout
  std::thread holder{[&] {
    cws::test::https_client c{d_->ca(), d_->port()};
    c.request("POST", d_->url("/nodes/rt[07-11]/nodeshell"), "{\"command\":\"sleep 72.5\"}");
  }};
  ASSERT_TRUE(eventually([&] { return in_flight() == 5; }, std::chrono::seconds(3)));
  // one more node of root's: refused at once, in the documented error shape, nothing run
  auto r = client.request("POST", d_->url("/nodes/rt12/nodeshell"), "{\"command\":\"true\"}");
  EXPECT_EQ(r.status, 503u) << r.body;
  EXPECT_NE(r.body.find("max_nodes_in_flight_per_user"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("\"errorcode\":\"2\""), std::string::npos) << r.body;
  if (user_ok_) {
    std::string who = std::string{"userName="} + test_user + "&userPW=userpw";
    // another user: within its own share, but past the total (5 + 4 > 8)
    r = client.request("POST", "/clusterws/nodes/rt[01-04]/nodeshell?" + who,
                       "{\"command\":\"true\"}");
    EXPECT_EQ(r.status, 503u) << r.body;
    EXPECT_NE(r.body.find("(max_nodes_in_flight)"), std::string::npos) << r.body;
    // within both: served
    r = client.request("POST", "/clusterws/nodes/rt[01-03]/nodeshell?" + who,
                       "{\"command\":\"true\"}");
    EXPECT_EQ(r.status, 201u) << r.body;
  }
  holder.join();
  EXPECT_TRUE(eventually([&] { return in_flight() == 0; }, std::chrono::seconds(3)));
  // freed: root is served again
  r = client.request("POST", d_->url("/nodes/rt12/nodeshell"), "{\"command\":\"true\"}");
  EXPECT_EQ(r.status, 201u) << r.body;
}

// -- N11: one peer holding every connection --------------------------------------------------

class connection_budget_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    std::ofstream{d_->home() / "clusterws.conf", std::ios::app}
      << "max_connections = 6\nmax_connections_per_client = 3\n"
         "local_max_connections = 6\nlocal_max_connections_per_user = 3\n";
    user_ok_ = cws::test::ensure_user(test_user);
    d_->start();
  }

  static void TearDownTestSuite() {
    EXPECT_EQ(d_->stop(), 0);
    delete d_;
    delete dir_;
  }

  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
  static bool user_ok_;
};

cws::test::temp_dir* connection_budget_test::dir_ = nullptr;
cws::test::daemon* connection_budget_test::d_ = nullptr;
bool connection_budget_test::user_ok_ = false;

TEST_F(connection_budget_test, one_local_user_over_its_share_locks_out_neither_others_nor_https) {
  auto path = announced_socket(*d_);
  ASSERT_FALSE(path.empty()) << cws::test::slurp(d_->log());
  // the attack: one uid (here root, this process) holds local connections, with no request
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(connect_unix(path));
    ASSERT_GE(held.back(), 0);
  }
  for (int fd : held) {
    EXPECT_FALSE(closed_within(fd, std::chrono::milliseconds(100)));
  }
  // one more of the same uid: closed at once
  int extra = connect_unix(path);
  ASSERT_GE(extra, 0);
  EXPECT_TRUE(closed_within(extra, std::chrono::seconds(2))) << "the uid's share is not capped";
  ::close(extra);
  // HTTPS is served: the local connections are not in its budget (max_connections = 6, and
  // 3 held plus 4 here would pass it)
  std::vector<std::unique_ptr<cws::test::https_client>> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<cws::test::https_client>(d_->ca(), d_->port()));
    EXPECT_EQ(clients.back()->get("/clusterws").status, 200u);
  }
  if (user_ok_) {
    // another uid is served on the local socket meanwhile
    const passwd* pw = ::getpwnam(test_user);
    ASSERT_NE(pw, nullptr);
    pid_t child = ::fork();
    if (child == 0) {
      if (::setgid(pw->pw_gid) != 0 || ::setuid(pw->pw_uid) != 0) {
        ::_exit(3);
      }
      int fd = connect_unix(path);
      if (fd < 0) {
        ::_exit(4);
      }
      auto req = plain_request("GET", "/clusterws", {});
      if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
        ::_exit(5);
      }
      char buf[64] = {};
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 3000) <= 0 || ::recv(fd, buf, sizeof buf - 1, 0) <= 0) {
        ::_exit(6);
      }
      ::_exit(std::strncmp(buf, "HTTP/1.1 200", 12) == 0 ? 0 : 7);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "another uid was refused";
  }
  for (int fd : held) {
    ::close(fd);
  }
}

TEST_F(connection_budget_test, one_address_over_its_share_is_refused_while_another_is_served) {
  {
    // the connections of the test before are gone (only this one is open)
    cws::test::https_client c{d_->ca(), d_->port()};
    ASSERT_TRUE(eventually([&] { return metric(c, *d_, "clusterws_http_connections") == 1; },
                           std::chrono::seconds(3)));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // one client address holds its share of HTTPS connections (TCP only: no TLS hello)
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(connect_tcp("127.0.0.1", d_->port()));
    ASSERT_GE(held.back(), 0);
  }
  for (int fd : held) {
    EXPECT_FALSE(closed_within(fd, std::chrono::milliseconds(100)));
  }
  int extra = connect_tcp("127.0.0.1", d_->port());
  ASSERT_GE(extra, 0);
  EXPECT_TRUE(closed_within(extra, std::chrono::seconds(2))) << "the address's share is not capped";
  ::close(extra);
  // another address is served (kept open, waiting for its TLS hello)
  int other = connect_tcp("127.0.0.2", d_->port());
  ASSERT_GE(other, 0);
  EXPECT_FALSE(closed_within(other, std::chrono::milliseconds(500)));
  ::close(other);
  // and so is the local socket, whose budget is its own
  auto path = announced_socket(*d_);
  int local = connect_unix(path);
  ASSERT_GE(local, 0);
  auto req = plain_request("GET", "/clusterws", {});
  ASSERT_EQ(::send(local, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  char buf[64] = {};
  pollfd p{local, POLLIN, 0};
  ASSERT_GT(::poll(&p, 1, 3000), 0);
  ASSERT_GT(::recv(local, buf, sizeof buf - 1, 0), 0);
  EXPECT_EQ(std::string(buf, 12), "HTTP/1.1 200");
  ::close(local);
  for (int fd : held) {
    ::close(fd);
  }
}

} // namespace
