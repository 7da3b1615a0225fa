// GET /clusterws/events against a real clusterwsd, read with `curl -N` as an administrator
// would: changes made over REST and by the tools in another process arrive as Server-Sent
// Events in commit order; Last-Event-ID resumes; filters and policy decide what a user sees;
// a client that does not read is cut off with a last event; a stop does not wait for streams.

#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

extern char** environ;

namespace {

using namespace std::chrono_literals;
using cws::test::run_tool;
using cws::test::slurp;

/// Starts `sh -c cmd` in the background; its pid (-1 if it could not start).
pid_t spawn_sh(std::string cmd) {
  std::string sh = "sh", c = "-c";
  char* argv[] = {sh.data(), c.data(), cmd.data(), nullptr};
  pid_t pid = -1;
  return posix_spawnp(&pid, "sh", nullptr, nullptr, argv, environ) == 0 ? pid : -1;
}

/// `curl -sN` reading an event stream into a file until stopped (by its pid).
class event_tail {
 public:
  event_tail(const cws::test::daemon& d, const std::filesystem::path& out, const std::string& url,
             const std::string& header = {})
      : out_(out) {
    std::vector<std::string> args{"curl", "-sN",        "--cacert", d.ca().string(),
                                  "-o",   out.string(), "-D",       out.string() + ".head"};
    if (!header.empty()) {
      args.insert(args.end(), {"-H", header});
    }
    args.push_back(url);
    std::vector<char*> argv;
    for (auto& a : args) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    if (posix_spawnp(&pid_, "curl", nullptr, nullptr, argv.data(), environ) != 0) {
      pid_ = -1;
    }
  }

  ~event_tail() {
    stop();
  }

  void stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }

  /// Waits (at most `limit`) until the stream holds `text`; the stream so far.
  std::string wait_for(const std::string& text, std::chrono::milliseconds limit = 10s) {
    auto end = std::chrono::steady_clock::now() + limit;
    auto got = slurp(out_);
    while (got.find(text) == std::string::npos && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(50ms);
      got = slurp(out_);
    }
    return got;
  }

  std::string head() const {
    return slurp(out_.string() + ".head");
  }

 private:
  std::filesystem::path out_;
  pid_t pid_ = -1;
};

class events_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    d_ = new cws::test::daemon(dir_->path / "home", "rootpw");
    std::ofstream{d_->home() / "clusterws.conf", std::ios::app}
      << "events_poll_ms = 100\nevents_heartbeat_s = 1\n";
    ASSERT_EQ(run_tool(home(), "mkdef 'cn[1-3]' groups=compute,all mgt=kvm").rc, 0);
    ASSERT_EQ(run_tool(home(), "mkdef sv1 groups=service,all mgt=kvm").rc, 0);
    ASSERT_EQ(run_tool(home(), "echo alicepw | clusterctl passwd alice --password-stdin").rc, 0);
    ASSERT_EQ(run_tool(home(), "echo bobpw | clusterctl passwd bob --password-stdin").rc, 0);
    // alice may list the compute nodes only; bob may list everything
    ASSERT_EQ(run_tool(home(), "mkdef -t policy -o 6 name=alice noderange=compute "
                               "commands=lsdef rule=allow")
                .rc,
              0);
    ASSERT_EQ(run_tool(home(), "mkdef -t policy -o 7 name=bob commands=lsdef rule=allow").rc, 0);
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

  static std::string events_path(const std::string& user, const std::string& pw,
                                 const std::string& extra = {}) {
    return "/clusterws/events?userName=" + user + "&userPW=" + pw + extra;
  }

  static std::string events_url(const std::string& user, const std::string& pw,
                                const std::string& extra = {}) {
    return "https://127.0.0.1:" + std::to_string(d_->port()) + events_path(user, pw, extra);
  }

  std::filesystem::path file(const std::string& name) {
    return dir_->path / name;
  }

  /// The ids of the events in `stream`, in order.
  static std::vector<std::string> ids(const std::string& stream) {
    std::vector<std::string> out;
    std::regex id{"(^|\n)id: ([0-9]+)\n"};
    for (auto it = std::sregex_iterator(stream.begin(), stream.end(), id);
         it != std::sregex_iterator(); ++it) {
      out.push_back((*it)[2]);
    }
    return out;
  }

  cws::test::https_client client{d_->ca(), d_->port()};
  static cws::test::temp_dir* dir_;
  static cws::test::daemon* d_;
};

cws::test::temp_dir* events_test::dir_ = nullptr;
cws::test::daemon* events_test::d_ = nullptr;

TEST_F(events_test, rest_and_tool_changes_arrive_in_order_and_a_client_resumes) {
  event_tail root{*d_, file("root.ev"), events_url("root", "rootpw")};
  EXPECT_NE(root.wait_for(": keep-alive").find(": keep-alive"), std::string::npos);
  EXPECT_NE(root.head().find("Content-Type: text/event-stream"), std::string::npos) << root.head();
  // one change over REST (the daemon's own commit), one by a tool in another process
  ASSERT_EQ(client.request("PUT", d_->url("/nodes/ev1"), R"({"groups":"all","mgt":"kvm"})").status,
            200u);
  ASSERT_EQ(run_tool(home(), "chdef ev1 os=rhels9").rc, 0);
  ASSERT_EQ(run_tool(home(), "mkdef -t network -o evnet net=10.9.0.0 mask=255.255.0.0").rc, 0);
  auto got = root.wait_for("evnet");
  auto created = got.find(R"({"type":"node","name":"ev1","change":"created","attributes":)");
  auto changed = got.find(R"({"type":"node","name":"ev1","change":"changed","attributes":["os"]})");
  auto net = got.find(R"({"type":"network","name":"evnet","change":"created")");
  ASSERT_NE(created, std::string::npos) << got;
  ASSERT_NE(changed, std::string::npos) << got;
  ASSERT_NE(net, std::string::npos) << got;
  EXPECT_LT(created, changed);
  EXPECT_LT(changed, net);
  EXPECT_NE(got.find("event: changes\ndata: {\"seq\":"), std::string::npos) << got;
  auto seen = ids(got);
  ASSERT_EQ(seen.size(), 3u) << got;
  EXPECT_LT(std::stoull(seen[0]), std::stoull(seen[1]));
  EXPECT_LT(std::stoull(seen[1]), std::stoull(seen[2]));
  // heartbeats go on while nothing changes (events_heartbeat_s = 1)
  std::this_thread::sleep_for(1500ms);
  auto later = slurp(file("root.ev"));
  EXPECT_GT(std::count(later.begin(), later.end(), ':'), std::count(got.begin(), got.end(), ':'));
  root.stop();

  // a client that reconnects with the last id it saw gets what followed, from the log
  event_tail resumed{*d_, file("resumed.ev"), events_url("root", "rootpw"),
                     "Last-Event-ID: " + seen[0]};
  auto again = resumed.wait_for("evnet");
  EXPECT_EQ(ids(again), (std::vector<std::string>{seen[1], seen[2]})) << again;
  EXPECT_EQ(again.find("\"created\",\"attributes\":[\"groups\""), std::string::npos) << again;
}

TEST_F(events_test, policy_and_filters_decide_what_a_user_sees) {
  // alice's row covers the compute nodes: a stream of those is allowed, one of everything not
  auto refused = client.get(events_path("alice", "alicepw"));
  EXPECT_EQ(refused.status, 401u) << refused.body;
  event_tail alice{*d_, file("alice.ev"), events_url("alice", "alicepw", "&noderange=compute")};
  event_tail bob{*d_, file("bob.ev"), events_url("bob", "bobpw")};
  event_tail root{*d_, file("root2.ev"), events_url("root", "rootpw", "&types=passwd")};
  alice.wait_for(": keep-alive");
  bob.wait_for(": keep-alive");
  root.wait_for(": keep-alive");
  ASSERT_EQ(run_tool(home(), "chdef cn2,sv1 usercomment=seen").rc, 0);
  ASSERT_EQ(run_tool(home(), "echo newpw | clusterctl passwd carol --password-stdin").rc, 0);
  ASSERT_EQ(run_tool(home(), "chdef cn3 usercomment=last").rc, 0);
  auto a = alice.wait_for("cn3");
  EXPECT_NE(a.find(R"("name":"cn2")"), std::string::npos) << a;
  EXPECT_EQ(a.find("sv1"), std::string::npos) << a; // outside her noderange
  EXPECT_EQ(a.find("carol"), std::string::npos) << a;
  auto b = bob.wait_for("cn3");
  EXPECT_NE(b.find(R"("name":"sv1")"), std::string::npos) << b;
  EXPECT_EQ(b.find("carol"), std::string::npos) << b; // users' names are root's only
  auto r = root.wait_for("carol");
  EXPECT_NE(r.find(R"({"type":"passwd","name":"carol","change":"created")"), std::string::npos)
    << r;
  EXPECT_EQ(r.find("cn3"), std::string::npos) << r; // types=passwd
  // bad parameters are the request's fault
  auto bad = client.get(events_path("root", "rootpw", "&types=node,bogus"));
  EXPECT_EQ(bad.status, 400u);
  EXPECT_NE(bad.body.find("Unknown event type 'bogus'"), std::string::npos) << bad.body;
  bad = client.request("GET", events_path("root", "rootpw"), "", {{"Last-Event-ID", "x1"}});
  EXPECT_EQ(bad.status, 400u);
  EXPECT_NE(bad.body.find("must be a whole number"), std::string::npos) << bad.body;
  auto wrong = client.get(events_path("root", "rootpw", "&noderange=nosuch"));
  EXPECT_EQ(wrong.status, 403u) << wrong.body; // as GET /nodes/nosuch/nodels answers
  EXPECT_NE(wrong.body.find("nosuch"), std::string::npos) << wrong.body;
}

TEST_F(events_test, clusterctl_events_tails_the_feed_over_the_local_socket) {
  auto out = file("tail.out");
  // as an administrator runs it: root through the daemon's local socket, until interrupted
  std::string cmd = "exec env PATH=" CLUSTERWS_BIN_DIR ":$PATH CLUSTERWS_HOME=" + home().string()
                    + " clusterctl events --types network > " + out.string() + " 2>&1";
  pid_t pid = spawn_sh(cmd);
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(500ms); // subscribed (the stream starts from now)
  ASSERT_EQ(run_tool(home(), "mkdef -t network -o tailnet net=10.8.0.0 mask=255.255.0.0").rc, 0);
  ASSERT_EQ(run_tool(home(), "chdef tailnode groups=all").rc, 0); // not a network: not shown
  ASSERT_EQ(run_tool(home(), "rmdef -t network -o tailnet").rc, 0);
  auto got = slurp(out);
  for (int i = 0; i < 200 && got.find("removed") == std::string::npos; ++i) {
    std::this_thread::sleep_for(50ms);
    got = slurp(out);
  }
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  std::regex lines{"^[0-9]+ network tailnet created mask,net\n[0-9]+ network tailnet removed "
                   "mask,net\n$"};
  EXPECT_TRUE(std::regex_match(got, lines)) << got;
  // a refusal is xCAT's error line
  auto bad = run_tool(home(), "clusterctl events --types bogus");
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.out.find("Error: Unknown event type 'bogus'"), std::string::npos) << bad.out;
}

TEST(events_slow, a_client_that_does_not_read_is_cut_off_with_a_last_event) {
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "rootpw"};
  std::ofstream{d.home() / "clusterws.conf", std::ios::app}
    << "events_buffer_bytes = 65536\nevents_poll_ms = 100\n";
  d.start();
  // python's TLS client sends the request, reads the head, then stops reading until told;
  // a small receive buffer keeps what the kernel takes from the daemon small
  auto script = dir.path / "slow.py";
  std::ofstream{script}
    << "import socket, ssl, sys, time\n"
       "ctx = ssl.create_default_context(cafile=sys.argv[1])\n"
       "raw = socket.socket()\n"
       "raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)\n"
       "raw.connect(('127.0.0.1', int(sys.argv[2])))\n"
       "s = ctx.wrap_socket(raw, server_hostname='localhost')\n"
       "s.sendall(b'GET /clusterws/events?userName=root&userPW=rootpw HTTP/1.1\\r\\n'\n"
       "          b'Host: localhost\\r\\n\\r\\n')\n"
       "s.recv(100)\n"
       "open(sys.argv[3], 'w').write('reading\\n')\n"
       "while not __import__('os').path.exists(sys.argv[4]): time.sleep(0.05)\n"
       "data = b''\n"
       "s.settimeout(20)\n"
       "while True:\n"
       "    b = s.recv(65536)\n"
       "    if not b: break\n"
       "    data += b\n"
       "open(sys.argv[3], 'w').write(data.decode(errors='replace'))\n";
  auto out = dir.path / "slow.out";
  auto go = dir.path / "go";
  auto cmd = "python3 " + script.string() + " " + d.ca().string() + " " + std::to_string(d.port())
             + " " + out.string() + " " + go.string();
  pid_t pid = spawn_sh(cmd);
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 200 && slurp(out).empty(); ++i) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(slurp(out), "reading\n");
  // ~6 MB of events (three commits of 20,000 nodes each), more than the kernel's buffers hold
  for (int round = 0; round < 3; ++round) {
    auto r = run_tool(d.home(), "mkdef 'slow" + std::to_string(round)
                                  + "n[00001-20000]' groups=all,aaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    ASSERT_EQ(r.rc, 0) << r.out;
  }
  std::this_thread::sleep_for(1s); // the feed's look at the tools' commits
  std::ofstream{go} << "1";
  int status = 0;
  ::waitpid(pid, &status, 0);
  auto got = slurp(out);
  EXPECT_NE(got.find("event: reset\ndata: {\"reason\":\"the client did not take the events fast "
                     "enough (65536 bytes waiting): the stream ends\"}"),
            std::string::npos)
    << got.substr(0, 300) << " ... " << got.substr(got.size() > 300 ? got.size() - 300 : 0);
  EXPECT_NE(got.find("0\r\n\r\n"), std::string::npos); // the chunked answer ended, whole
  // the daemon is as it was: a new stream works, and the stop does not wait for it
  event_tail tail{d, dir.path / "after.ev",
                  "https://127.0.0.1:" + std::to_string(d.port())
                    + "/clusterws/events?userName=root&userPW=rootpw"};
  EXPECT_NE(tail.wait_for(": keep-alive").find(": keep-alive"), std::string::npos);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(d.stop(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s); // not the 5 s drain of a request
}

TEST(events_reset, a_client_that_resets_mid_burst_ends_its_stream_and_the_others_get_every_event) {
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "rootpw"};
  std::ofstream{d.home() / "clusterws.conf", std::ios::app}
    << "events_poll_ms = 100\nevents_heartbeat_s = 1\n";
  d.start();
  // a TLS client that takes a little of the stream, then resets its connection (SO_LINGER 0)
  // while the daemon is writing a burst to it: the write fails, and more events follow
  auto script = dir.path / "reset.py";
  std::ofstream{script}
    << "import socket, ssl, struct, sys, time\n"
       "ctx = ssl.create_default_context(cafile=sys.argv[1])\n"
       "raw = socket.socket()\n"
       "raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)\n"
       "raw.connect(('127.0.0.1', int(sys.argv[2])))\n"
       "s = ctx.wrap_socket(raw, server_hostname='localhost')\n"
       "s.sendall(b'GET /clusterws/events?userName=root&userPW=rootpw HTTP/1.1\\r\\n'\n"
       "          b'Host: localhost\\r\\n\\r\\n')\n"
       "s.recv(100)\n"
       "open(sys.argv[3], 'w').write('reading\\n')\n"
       "got = 0\n"
       "while got < 200000:\n"
       "    b = s.recv(65536)\n"
       "    if not b: break\n"
       "    got += len(b)\n"
       "s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))\n"
       "s.close()\n"
       "open(sys.argv[3], 'w').write('reset\\n')\n";
  auto out = dir.path / "reset.out";
  auto cmd = "python3 " + script.string() + " " + d.ca().string() + " " + std::to_string(d.port())
             + " " + out.string();
  auto url = "https://127.0.0.1:" + std::to_string(d.port())
             + "/clusterws/events?types=node&userName=root&userPW=rootpw";
  event_tail whole{d, dir.path / "whole.ev", url};
  ASSERT_NE(whole.wait_for(": keep-alive").find(": keep-alive"), std::string::npos);
  std::vector<pid_t> resetters;
  for (int i = 0; i < 4; ++i) {
    resetters.push_back(spawn_sh(cmd + "." + std::to_string(i)));
    ASSERT_GT(resetters.back(), 0);
  }
  for (int i = 0; i < 4; ++i) {
    auto o = out.string() + "." + std::to_string(i);
    for (int t = 0; t < 200 && slurp(o).empty(); ++t) {
      std::this_thread::sleep_for(50ms);
    }
    ASSERT_EQ(slurp(o), "reading\n");
  }
  // bursts of events while the resetting clients go, and after
  for (int round = 0; round < 4; ++round) {
    auto r = run_tool(d.home(), "mkdef 'rst" + std::to_string(round)
                                  + "n[0001-3000]' groups=all,aaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    ASSERT_EQ(r.rc, 0) << r.out;
  }
  for (auto pid : resetters) {
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  // the stream that kept reading got every creation; the daemon still answers
  auto got = whole.wait_for("\"name\":\"rst3n3000\"", 30s);
  for (int round = 0; round < 4; ++round) {
    for (auto n : {"0001", "1500", "3000"}) {
      auto name = "\"name\":\"rst" + std::to_string(round) + "n" + n + "\"";
      EXPECT_NE(got.find(name), std::string::npos) << name;
    }
  }
  whole.stop();
  cws::test::https_client c{d.ca(), d.port()};
  auto r = c.get("/clusterws/nodes/rst3n3000?userName=root&userPW=rootpw");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(d.stop(), 0);
}

} // namespace
