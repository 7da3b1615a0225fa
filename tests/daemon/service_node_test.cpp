// Service nodes on one machine with real processes (docs/service-nodes.md): a head
// (clusterwsd with sn_listen on 127.0.0.1) and clusterwsd --service-node processes whose
// homes clusterctl sn add wrote. They dial the head over caf::openssl, register with the
// proof of their secret and trade heartbeats; refusals (no certificate, another CA, a wrong
// secret, another protocol version) and failures (SIGSTOP, kill -9, restart) are seen as the
// operator sees them: clusterctl sn list, the logs, the exit status.

#include <gtest/gtest.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/send.hpp>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <mutex>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/silent_port.hpp"
#include "../support/sn_process.hpp"
#include "actors/sn_agent.hpp"
#include "actors/type_ids.hpp"
#include "api/sn_seal.hpp"

namespace {

using cws::test::service_node;
using namespace std::chrono;
using cws::test::run_tool;
using cws::test::slurp;
namespace fs = std::filesystem;

constexpr int heartbeat_ms = 200;
constexpr int dead_after_ms = 1000;

class service_node_test : public ::testing::Test {
 protected:
  void SetUp() override {
    d = std::make_unique<cws::test::daemon>(home, "pw");
    auto r = run_tool(home, "clusterctl sn init");
    ASSERT_EQ(r.rc, 0) << r.out;
    std::ofstream{home / "clusterws.conf", std::ios::app}
      << "sn_listen = 127.0.0.1:0\nsn_heartbeat_ms = " << heartbeat_ms
      << "\nsn_dead_after_ms = " << dead_after_ms << "\n";
    d->start();
  }

  /// Writes service node `name`'s home (clusterctl sn add) with quick re-dials.
  fs::path add(const std::string& name) {
    auto out = dir.path / name;
    auto r = run_tool(home, "clusterctl sn add " + name + " --out " + out.string());
    EXPECT_EQ(r.rc, 0) << r.out;
    std::ofstream{out / "clusterws.conf", std::ios::app}
      << "sn_redial_min_ms = 100\nsn_redial_max_ms = 400\nsn_connect_timeout_ms = 2000\n";
    return out;
  }

  /// `name`'s state in clusterctl sn list (registered, down, never; "" when not listed).
  std::string state_of(const std::string& name) {
    auto r = run_tool(home, "clusterctl sn list");
    std::istringstream in{r.out};
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words{line};
      std::string n, state;
      words >> n >> state;
      if (n == name) {
        return state;
      }
    }
    return {};
  }

  /// Waits (at most `wait`) until `name` is in `state`; how long it took, or -1 ms.
  milliseconds until_state(const std::string& name, const std::string& state,
                           milliseconds wait = milliseconds(15000)) {
    auto start = steady_clock::now();
    while (steady_clock::now() - start < wait) {
      if (state_of(name) == state) {
        return duration_cast<milliseconds>(steady_clock::now() - start);
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    return milliseconds(-1);
  }

  cws::test::temp_dir dir;
  fs::path home = dir.path / "head";
  std::unique_ptr<cws::test::daemon> d;
};

TEST_F(service_node_test, a_head_and_two_service_nodes_register_and_show_in_sn_list) {
  service_node sn1{add("sn1")};
  service_node sn2{add("sn2")};
  // the event stream, tailed while they join and leave
  auto events = dir.path / "events.txt";
  run_tool(home, "(timeout 8 clusterctl events > " + events.string() + " 2>&1 </dev/null &)");
  std::this_thread::sleep_for(milliseconds(500));
  sn1.start();
  sn2.start();
  EXPECT_GE(until_state("sn1", "registered").count(), 0) << slurp(sn1.log()) << slurp(d->log());
  EXPECT_GE(until_state("sn2", "registered").count(), 0) << slurp(sn2.log());
  auto list = run_tool(home, "clusterctl sn list");
  EXPECT_NE(list.out.find("NAME"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("LAST HEARTBEAT"), std::string::npos) << list.out;
  EXPECT_NE(slurp(d->log()).find("service node sn1 registered"), std::string::npos);
  EXPECT_NE(slurp(sn1.log()).find("registered with the head"), std::string::npos);
  // the head's HTTPS side is unchanged, and a service node has no HTTP listener
  EXPECT_EQ(slurp(sn1.log()).find("listening on"), std::string::npos) << slurp(sn1.log());
  EXPECT_EQ(sn1.stop(), 0);
  EXPECT_EQ(sn2.stop(), 0);
  EXPECT_GE(until_state("sn1", "down").count(), 0);
  for (int i = 0; i < 200 && slurp(events).find("servicenode sn1 left") == std::string::npos; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  auto seen = slurp(events);
  EXPECT_NE(seen.find("servicenode sn1 joined"), std::string::npos) << seen;
  EXPECT_NE(seen.find("servicenode sn2 joined"), std::string::npos) << seen;
  EXPECT_NE(seen.find("servicenode sn1 left"), std::string::npos) << seen;
}

TEST_F(service_node_test, a_service_node_without_its_certificate_or_secret_is_refused_at_start) {
  auto h = add("sn1");
  fs::remove(h / "pki" / "sn-cert.pem");
  service_node sn1{h};
  sn1.start();
  EXPECT_EQ(sn1.exited_within(milliseconds(10000)), 1);
  EXPECT_NE(slurp(sn1.log()).find("never anonymous TLS"), std::string::npos) << slurp(sn1.log());
  auto h2 = add("sn2");
  fs::remove(h2 / "pki" / "sn-secret");
  service_node sn2{h2};
  sn2.start();
  EXPECT_EQ(sn2.exited_within(milliseconds(10000)), 1);
  EXPECT_NE(slurp(sn2.log()).find("no secret"), std::string::npos) << slurp(sn2.log());
}

TEST_F(service_node_test, a_head_with_sn_listen_and_no_service_node_cas_refuses_to_start) {
  cws::test::daemon other{dir.path / "other", "pw"};
  std::ofstream{dir.path / "other" / "clusterws.conf", std::ios::app}
    << "sn_listen = 127.0.0.1:0\n";
  EXPECT_THROW(other.start(), std::runtime_error);
  EXPECT_NE(slurp(other.log()).find("run clusterctl sn init"), std::string::npos)
    << slurp(other.log());
}

TEST_F(service_node_test, a_service_node_trusting_another_ca_never_registers) {
  auto h = add("sn1");
  // the cluster CA (the HTTPS server's) is not the head's link CA
  fs::copy_file(home / "pki" / "ca-cert.pem", h / "pki" / "head-ca.pem",
                fs::copy_options::overwrite_existing);
  service_node sn1{h};
  sn1.start();
  std::this_thread::sleep_for(milliseconds(2500));
  EXPECT_EQ(state_of("sn1"), "never");
  EXPECT_NE(slurp(sn1.log()).find("no link to the head"), std::string::npos) << slurp(sn1.log());
  EXPECT_EQ(slurp(d->log()).find("service node sn1 registered"), std::string::npos);
}

TEST_F(service_node_test, a_service_node_presenting_a_certificate_of_another_ca_never_registers) {
  auto h = add("sn1");
  // the HTTPS server's certificate (the cluster CA's), or one of the head CA's: neither is a
  // service-node certificate, though both are valid certificates of this cluster
  fs::copy_file(home / "pki" / "server-cert.pem", h / "pki" / "sn-cert.pem",
                fs::copy_options::overwrite_existing);
  fs::copy_file(home / "pki" / "server-key.pem", h / "pki" / "sn-key.pem",
                fs::copy_options::overwrite_existing);
  auto h2 = add("sn2");
  fs::copy_file(home / "pki" / "sn" / "head-cert.pem", h2 / "pki" / "sn-cert.pem",
                fs::copy_options::overwrite_existing);
  fs::copy_file(home / "pki" / "sn" / "head-key.pem", h2 / "pki" / "sn-key.pem",
                fs::copy_options::overwrite_existing);
  service_node sn1{h};
  service_node sn2{h2};
  sn1.start();
  sn2.start();
  std::this_thread::sleep_for(milliseconds(2500));
  EXPECT_EQ(state_of("sn1"), "never");
  EXPECT_EQ(state_of("sn2"), "never");
  EXPECT_NE(slurp(sn1.log()).find("no link to the head"), std::string::npos) << slurp(sn1.log());
  EXPECT_NE(slurp(sn2.log()).find("no link to the head"), std::string::npos) << slurp(sn2.log());
  EXPECT_EQ(slurp(d->log()).find("registered"), std::string::npos) << slurp(d->log());
}

TEST_F(service_node_test, a_wrong_secret_is_refused_and_the_service_node_stops) {
  auto h = add("sn1");
  std::ofstream{h / "pki" / "sn-secret", std::ios::trunc} << cws::api::make_sn_secret() << "\n";
  service_node sn1{h};
  sn1.start();
  EXPECT_EQ(sn1.exited_within(milliseconds(10000)), 1) << slurp(sn1.log());
  EXPECT_NE(slurp(sn1.log()).find("did not prove its secret"), std::string::npos)
    << slurp(sn1.log());
  EXPECT_NE(slurp(d->log()).find("did not prove its secret"), std::string::npos);
  EXPECT_EQ(state_of("sn1"), "never");
}

TEST_F(service_node_test, a_removed_service_node_is_dropped_and_refused_when_it_dials_again) {
  service_node sn1{add("sn1")};
  sn1.start();
  ASSERT_GE(until_state("sn1", "registered").count(), 0) << slurp(sn1.log());
  ASSERT_EQ(run_tool(home, "clusterctl sn remove sn1").rc, 0);
  EXPECT_EQ(sn1.exited_within(milliseconds(10000)), 1) << slurp(sn1.log());
  EXPECT_NE(slurp(sn1.log()).find("not known to this head"), std::string::npos) << slurp(sn1.log());
  EXPECT_NE(run_tool(home, "clusterctl sn remove sn1").rc, 0);
}

/// The CAF side of a service node in this process, claiming another protocol version.
struct link_config : caf::actor_system_config {
  explicit link_config(const fs::path& pki) {
    set("logger.file-verbosity", caf::atom("quiet"));
    set("scheduler.max-threads", 2);
    cws::actors::add_wire_types(*this);
    load<caf::io::middleman>();
    load<caf::openssl::manager>();
    openssl_certificate = (pki / "sn-cert.pem").string();
    openssl_key = (pki / "sn-key.pem").string();
    openssl_cafile = (pki / "head-ca.pem").string();
  }
};

TEST_F(service_node_test, a_protocol_version_mismatch_is_refused_naming_both_versions) {
  auto h = add("sn1");
  auto port = std::stoi(slurp(home / "pki" / "sn" / "port"));
  link_config cfg{h / "pki"};
  caf::actor_system sys{cfg};
  std::mutex m;
  std::condition_variable cv;
  std::string why;
  cws::actors::sn_agent_config ac;
  ac.name = "sn1";
  auto secret_text = slurp(h / "pki" / "sn-secret");
  ac.secret = secret_text.substr(0, secret_text.find('\n'));
  ac.host = "127.0.0.1";
  ac.port = static_cast<uint16_t>(port);
  // a version-1 service node (before the heartbeat's format, the wire targets and copies in
  // shares changed) is refused
  static_assert(cws::api::sn_protocol_version == 2, "a test pins the version");
  ac.version = 1;
  ac.on_refused = [&](const std::string& w) {
    std::lock_guard<std::mutex> lock{m};
    why = w;
    cv.notify_all();
  };
  auto agent = cws::actors::spawn_sn_agent(sys, ac);
  {
    std::unique_lock<std::mutex> lock{m};
    cv.wait_for(lock, seconds(10), [&] { return !why.empty(); });
  }
  caf::anon_send_exit(agent, caf::exit_reason::user_shutdown);
  std::string theirs = "protocol version 1 of service node 'sn1'";
  std::string ours = "is not the head's protocol version 2";
  EXPECT_NE(why.find(theirs), std::string::npos) << why;
  EXPECT_NE(why.find(ours), std::string::npos) << why;
  EXPECT_NE(slurp(d->log()).find(theirs), std::string::npos) << slurp(d->log());
  EXPECT_EQ(state_of("sn1"), "never");
}

TEST_F(service_node_test, a_stopped_service_node_is_marked_down_within_the_dead_time) {
  service_node sn1{add("sn1")};
  sn1.start();
  ASSERT_GE(until_state("sn1", "registered").count(), 0) << slurp(sn1.log());
  kill(sn1.pid(), SIGSTOP);
  auto took = until_state("sn1", "down", milliseconds(10000));
  kill(sn1.pid(), SIGCONT);
  ASSERT_GE(took.count(), 0) << slurp(d->log());
  // dead time, plus one heartbeat tick, plus the polls of clusterctl sn list
  EXPECT_LE(took.count(), dead_after_ms + heartbeat_ms + 1000) << took.count();
  std::cout << "SIGSTOP: down after " << took.count() << " ms (dead time " << dead_after_ms
            << " ms)\n";
  EXPECT_NE(slurp(d->log()).find("service node sn1 left"), std::string::npos);
  // resumed, it finds the head silent (or its link gone), dials again and registers
  EXPECT_GE(until_state("sn1", "registered").count(), 0) << slurp(sn1.log());
}

TEST_F(service_node_test, a_killed_service_node_is_down_at_once_and_registers_again_on_restart) {
  auto h = add("sn1");
  service_node sn1{h};
  sn1.start();
  ASSERT_GE(until_state("sn1", "registered").count(), 0) << slurp(sn1.log());
  sn1.stop(SIGKILL);
  auto took = until_state("sn1", "down", milliseconds(10000));
  ASSERT_GE(took.count(), 0);
  EXPECT_LE(took.count(), dead_after_ms + 1000) << took.count();
  service_node again{h};
  again.start();
  EXPECT_GE(until_state("sn1", "registered").count(), 0) << slurp(again.log());
}

} // namespace

namespace {

/// A TCP connection to 127.0.0.1:`port` that then says nothing (or `bytes`), closed at the end.
int stalled_peer(int port, const std::string& bytes = {}) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  if (!bytes.empty()) {
    (void)!::write(fd, bytes.data(), bytes.size());
  }
  return fd;
}

TEST_F(service_node_test, unreachable_or_stalled_peers_do_not_stall_the_other_service_nodes) {
  auto port = std::stoi(slurp(home / "pki" / "sn" / "port"));
  // peers at the head's link port that never finish a TLS handshake, or send rubbish
  std::vector<int> stalled;
  for (int i = 0; i < 4; ++i) {
    stalled.push_back(stalled_peer(port));
  }
  stalled.push_back(stalled_peer(port, std::string(64, '\x16')));
  for (int fd : stalled) {
    ASSERT_GE(fd, 0);
  }
  // sn3 dials an address that never answers (its SYNs dropped): it keeps dialing on its own
  cws::test::silent_port dark;
  auto h3 = add("sn3");
  {
    auto conf = slurp(h3 / "clusterws.conf");
    auto at = conf.find("sn_head = ");
    ASSERT_NE(at, std::string::npos);
    conf.replace(at, conf.find('\n', at) - at,
                 "sn_head = 127.0.0.1:" + std::to_string(dark.port()));
    auto t = conf.find("sn_connect_timeout_ms = 2000");
    ASSERT_NE(t, std::string::npos);
    conf.replace(t, 28, "sn_connect_timeout_ms = 500");
    std::ofstream{h3 / "clusterws.conf", std::ios::trunc} << conf;
  }
  service_node sn3{h3};
  sn3.start();
  std::this_thread::sleep_for(milliseconds(300));
  service_node sn1{add("sn1")};
  service_node sn2{add("sn2")};
  auto start = steady_clock::now();
  sn1.start();
  sn2.start();
  EXPECT_GE(until_state("sn1", "registered", milliseconds(8000)).count(), 0)
    << slurp(sn1.log()) << slurp(d->log());
  EXPECT_GE(until_state("sn2", "registered", milliseconds(8000)).count(), 0) << slurp(sn2.log());
  std::cout << "registered beside 5 stalled peers and a dark service node in "
            << duration_cast<milliseconds>(steady_clock::now() - start).count() << " ms\n";
  // and they stay registered: their heartbeats (proven under their secrets) keep them up
  // past twice the dead time
  std::this_thread::sleep_for(milliseconds(2 * dead_after_ms + heartbeat_ms));
  EXPECT_EQ(state_of("sn1"), "registered") << slurp(d->log());
  EXPECT_EQ(state_of("sn2"), "registered") << slurp(d->log());
  EXPECT_EQ(state_of("sn3"), "never");
  EXPECT_EQ(sn3.exited_within(milliseconds(10)), -1) << "still dialing, not refused";
  EXPECT_NE(
    slurp(sn3.log()).find("no link to the head at 127.0.0.1:" + std::to_string(dark.port())),
    std::string::npos)
    << slurp(sn3.log());
  EXPECT_EQ(slurp(d->log()).find("dropped a service-node heartbeat"), std::string::npos)
    << slurp(d->log());
  for (int fd : stalled) {
    ::close(fd);
  }
}

} // namespace
