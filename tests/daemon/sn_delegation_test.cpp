// A fan-out call that really runs on service nodes (docs/service-nodes.md), with real
// processes and no mocks: a head clusterwsd (sn_listen on 127.0.0.1) and three clusterwsd
// --service-node processes, each fronting its own loopback sshds (one per node, so each node's
// runs are counted apart: every command appends a line to a file named after its sshd's port)
// and the third also a farm of ipmi_sim BMCs. nodeshell and rpower through them answer as the
// head alone does; kill -9 of a service node in the middle of a run ends its unreported nodes
// `servicenode` and nothing runs twice; SIGSTOP is noticed within the dead time; a restarted
// service node registers again and the next call uses it. REST nodecopy through them writes
// every node's file byte for byte and answers as flat, and a copy past the head's sn_copy_max
// is refused for the delegated nodes only.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../store/temp_home.hpp"
#include "../support/bmc_farm.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"
#include "../support/metrics_sample.hpp"
#include "../support/sn_process.hpp"
#include "../support/sshd.hpp"

namespace {

using namespace std::chrono;
using cws::test::run_tool;
using cws::test::slurp;
namespace fs = std::filesystem;

constexpr int heartbeat_ms = 200;
constexpr int dead_after_ms = 1000;
/// Nodes per service node, each behind its own sshd.
constexpr int per_sn = 3;
/// The head's sn_copy_max: a copy past it is not sent to a service node.
constexpr int copy_max = 64 * 1024;

class sn_delegation_test : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new cws::test::temp_dir;
    auto home = dir_->path / "head";
    d_ = new cws::test::daemon(home, "rootpw");
    ASSERT_EQ(run_tool(home, "clusterctl sn init").rc, 0);
    std::ofstream{home / "clusterws.conf", std::ios::app}
      << "sn_listen = 127.0.0.1:0\nsn_heartbeat_ms = " << heartbeat_ms
      << "\nsn_dead_after_ms = " << dead_after_ms << "\nssh_connect_timeout = 5\n"
      << "sn_copy_max = " << copy_max << "\n";
    d_->start();
    counts_ = dir_->path / "counts";
    fs::create_directories(counts_);
    run_tool(home, "chdef -t site clustersite ipmitimeout=1 ipmiretries=2");
    for (int k = 1; k <= 3; ++k) {
      auto sn = "sn" + std::to_string(k);
      auto sn_home = dir_->path / sn;
      auto r = run_tool(home, "clusterctl sn add " + sn + " --out " + sn_home.string());
      ASSERT_EQ(r.rc, 0) << r.out;
      std::ofstream{sn_home / "clusterws.conf", std::ios::app}
        << "sn_redial_min_ms = 100\nsn_redial_max_ms = 400\nsn_connect_timeout_ms = 2000\n"
           "ssh_connect_timeout = 5\n";
      // root's key where clusterctl sn sync puts it: <sn home>/ssh/<user>/id_ed25519
      fs::create_directories(sn_home / "ssh" / "root");
      for (const char* f : {"id_ed25519", "id_ed25519.pub"}) {
        fs::copy_file(home / "ssh" / "root" / f, sn_home / "ssh" / "root" / f);
      }
      run_tool(home, "mkdef -t group g" + std::to_string(k) + " servicenode=" + sn);
      for (int i = 0; i < per_sn; ++i) {
        auto node = "n" + std::to_string(k) + std::to_string(i);
        add_node(node, "g" + std::to_string(k));
      }
      sns_[k - 1] = new cws::test::service_node(sn_home);
    }
    add_node("h0", "headnodes"); // no servicenode: the head runs it
    if (cws::test::have_ipmi_sim()) {
      // bmc0 and bmc1 behind sn3, bmc2 and bmc3 on the head
      farm_ = new cws::test::bmc_farm(dir_->path / "bmcs", 4);
      run_tool(home, "mkdef -t group bmcs mgt=ipmi bmcusername=admin bmcpassword=secret "
                     "servicenode=sn3");
      run_tool(home, "mkdef -t group headbmcs mgt=ipmi bmcusername=admin bmcpassword=secret");
      for (size_t i = 0; i < farm_->size(); ++i) {
        auto r = run_tool(home, "mkdef bmc" + std::to_string(i)
                                  + (i < 2 ? " groups=bmcs" : " groups=headbmcs")
                                  + " bmc=127.0.0.1 bmcport=" + std::to_string(farm_->port(i)));
        ASSERT_EQ(r.rc, 0) << r.out;
      }
    }
    for (auto* sn : sns_) {
      sn->start();
    }
    for (int k = 1; k <= 3; ++k) {
      ASSERT_TRUE(registered("sn" + std::to_string(k))) << slurp(sns_[k - 1]->log());
    }
  }

  static void TearDownTestSuite() {
    for (auto*& sn : sns_) {
      delete sn;
      sn = nullptr;
    }
    d_->stop();
    delete d_;
    delete farm_;
    for (auto* s : sshds_) {
      delete s;
    }
    sshds_.clear();
    delete dir_;
  }

  /// Node `node` in group `group` behind an sshd of its own.
  static void add_node(const std::string& node, const std::string& group) {
    auto* s = new cws::test::sshd(dir_->path / ("sshd-" + node));
    s->authorize("root", d_->home() / "ssh" / "root" / "id_ed25519.pub");
    s->start();
    sshds_.push_back(s);
    port_of_[node] = s->port();
    auto r
      = run_tool(d_->home(), "mkdef " + node + " groups=" + group
                               + ",sshnodes ip=127.0.0.1 sshport=" + std::to_string(s->port()));
    ASSERT_EQ(r.rc, 0) << r.out;
  }

  /// True once `name` shows registered in clusterctl sn list (at most 15 s).
  static bool registered(const std::string& name) {
    for (int i = 0; i < 300; ++i) {
      auto r = run_tool(d_->home(), "clusterctl sn list");
      std::istringstream in{r.out};
      std::string line;
      while (std::getline(in, line)) {
        std::istringstream words{line};
        std::string n, state;
        words >> n >> state;
        if (n == name && state == "registered") {
          return true;
        }
      }
      std::this_thread::sleep_for(milliseconds(50));
    }
    return false;
  }

  /// The command every node runs: one line appended to its count file (named after its
  /// sshd's port), then a sleep of the seconds in its delay file (none: 0), then `ok`.
  static std::string command() {
    auto c = counts_.string();
    return "P=$(echo $SSH_CONNECTION | cut -d' ' -f4); echo ran >> " + c + "/count.$P; sleep "
           + "$(cat " + c + "/delay.$P 2>/dev/null || echo 0); echo ok";
  }

  /// Times node `node` ran the command.
  static int runs(const std::string& node) {
    std::ifstream in{counts_ / ("count." + std::to_string(port_of_[node]))};
    int n = 0;
    std::string line;
    while (std::getline(in, line)) {
      ++n;
    }
    return n;
  }

  static void set_delay(const std::string& node, double seconds) {
    std::ofstream{counts_ / ("delay." + std::to_string(port_of_[node])), std::ios::trunc} << seconds
                                                                                          << "\n";
  }

  static void clear_delays() {
    for (const auto& [node, port] : port_of_) {
      fs::remove(counts_ / ("delay." + std::to_string(port)));
    }
  }

  static cws::test::reply shell(const std::string& nr, const std::string& extra = {}) {
    cws::test::https_client client{d_->ca(), d_->port()};
    return client.request("POST", d_->url("/nodes/" + nr + "/nodeshell", extra),
                          "{\"command\":\"" + command() + "\"}");
  }

  static cws::test::reply call(const std::string& method, const std::string& path,
                               const std::string& body = {}, const std::string& extra = {}) {
    cws::test::https_client client{d_->ca(), d_->port()};
    return client.request(method, d_->url(path, extra), body);
  }

  /// The head's SSH runs so far (its metrics page): a delegated node is not one of them.
  static double head_ssh_runs() {
    auto page = call("GET", "/metrics").body;
    auto n = cws::test::metric_sample(page, "clusterws_ssh_runs_total");
    return n < 0 ? 0 : n;
  }

  static inline cws::test::temp_dir* dir_ = nullptr;
  static inline cws::test::daemon* d_ = nullptr;
  static inline cws::test::bmc_farm* farm_ = nullptr;
  static inline cws::test::service_node* sns_[3] = {nullptr, nullptr, nullptr};
  static inline std::vector<cws::test::sshd*> sshds_;
  static inline std::map<std::string, unsigned short> port_of_;
  static inline fs::path counts_;
};

/// The nodes of service node k.
std::string nodes_of(int k) {
  return "n" + std::to_string(k) + "0-n" + std::to_string(k) + std::to_string(per_sn - 1);
}

TEST_F(sn_delegation_test, nodeshell_through_three_service_nodes_answers_as_the_head_alone) {
  std::map<std::string, int> counted;
  for (const auto& [node, port] : port_of_) {
    counted[node] = runs(node);
  }
  auto before = head_ssh_runs();
  auto delegated = shell("sshnodes", "&format=detail");
  ASSERT_EQ(delegated.status, 201u) << delegated.body << slurp(d_->log());
  // the head ran only its own node: one SSH run (h0's), the rest ran on the service nodes
  EXPECT_EQ(head_ssh_runs() - before, 1) << slurp(d_->log());
  for (const auto& [node, port] : port_of_) {
    EXPECT_EQ(runs(node), counted[node] + 1) << node;
  }
  auto plain = shell("sshnodes");
  ASSERT_EQ(plain.status, 201u) << plain.body;
  // flat: the same call with no servicenode anywhere
  for (int k = 1; k <= 3; ++k) {
    run_tool(d_->home(), "chdef -t group g" + std::to_string(k) + " servicenode=");
  }
  auto flat = shell("sshnodes");
  for (int k = 1; k <= 3; ++k) {
    run_tool(d_->home(),
             "chdef -t group g" + std::to_string(k) + " servicenode=sn" + std::to_string(k));
  }
  EXPECT_EQ(flat.status, plain.status);
  EXPECT_EQ(flat.body, plain.body);
  EXPECT_NE(plain.body.find("\"n20\":[\" ok\"]"), std::string::npos) << plain.body;
  for (const auto& [node, port] : port_of_) {
    EXPECT_EQ(runs(node), counted[node] + 3) << node;
  }
}

/// Service node k's sample of `family` on the head's metrics page (`extra`: more labels).
std::string sn_series(const std::string& family, int k, const std::string& extra = {}) {
  return family + "{name=\"sn" + std::to_string(k) + "\"" + extra + "}";
}

TEST_F(sn_delegation_test,
       the_head_s_metrics_count_each_service_node_s_shares_batches_nodes_in_flight_and_link_bytes) {
  auto before = call("GET", "/metrics").body;
  // n10 sleeps: while it does, sn1 has one node in flight (its other two reported at once)
  set_delay("n10", 2);
  auto running = std::async(std::launch::async, [] { return shell("sshnodes"); });
  double in_flight = -1;
  auto until = steady_clock::now() + seconds(5);
  while (steady_clock::now() < until && in_flight != 1) {
    auto page = call("GET", "/metrics").body;
    in_flight
      = cws::test::metric_sample(page, sn_series("clusterws_service_node_nodes_in_flight", 1));
    std::this_thread::sleep_for(milliseconds(50));
  }
  auto r = running.get();
  clear_delays();
  ASSERT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(in_flight, 1);
  // 100 KB of output from each of sn2's three nodes comes back over sn2's link
  auto big = call("POST", "/nodes/" + nodes_of(2) + "/nodeshell",
                  R"({"command":"head -c 100000 /dev/zero | tr '\\0' x"})");
  ASSERT_EQ(big.status, 201u) << big.body;
  auto after = call("GET", "/metrics").body;
  for (int k = 1; k <= 3; ++k) {
    EXPECT_EQ(
      cws::test::metric_growth(before, after, sn_series("clusterws_service_node_shares_total", k)),
      k == 2 ? 2 : 1)
      << after;
    auto batches = cws::test::metric_growth(before, after,
                                            sn_series("clusterws_service_node_batches_total", k));
    EXPECT_GE(batches, k == 2 ? 2 : 1) << after;
    EXPECT_LE(batches, k == 2 ? 2 * per_sn : per_sn) << after;
    EXPECT_EQ(
      cws::test::metric_sample(after, sn_series("clusterws_service_node_nodes_in_flight", k)), 0)
      << after;
    EXPECT_GT(cws::test::metric_growth(
                before, after,
                sn_series("clusterws_service_node_link_bytes_total", k, ",direction=\"sent\"")),
              0)
      << after;
  }
  EXPECT_GE(cws::test::metric_growth(
              before, after,
              sn_series("clusterws_service_node_link_bytes_total", 2, ",direction=\"received\"")),
            3 * 100000)
    << after;
  EXPECT_LT(cws::test::metric_growth(
              before, after,
              sn_series("clusterws_service_node_link_bytes_total", 1, ",direction=\"received\"")),
            100000)
    << after;
}

/// Writes `text` to `p` with mode `mode`.
void spit(const fs::path& p, const std::string& text, fs::perms mode) {
  fs::create_directories(p.parent_path());
  std::ofstream{p, std::ios::binary | std::ios::trunc} << text;
  fs::permissions(p, mode);
}

/// Clears (`on` false) or puts back each group's servicenode.
void set_service_nodes(const fs::path& home, bool on) {
  for (int k = 1; k <= 3; ++k) {
    run_tool(home, "chdef -t group g" + std::to_string(k)
                     + " servicenode=" + (on ? "sn" + std::to_string(k) : std::string{}));
  }
}

TEST_F(sn_delegation_test, nodestat_through_the_service_nodes_answers_as_the_head_alone) {
  auto before = call("GET", "/metrics").body;
  auto delegated = call("GET", "/nodes/sshnodes/nodestat");
  auto after = call("GET", "/metrics").body;
  // h0 is the head's one probe run; the service nodes probed the rest
  EXPECT_EQ(cws::test::metric_growth(before, after, "clusterws_probe_nodes_total{result=\"ok\"}"),
            1);
  for (int k = 1; k <= 3; ++k) {
    run_tool(d_->home(), "chdef -t group g" + std::to_string(k) + " servicenode=");
  }
  auto flat = call("GET", "/nodes/sshnodes/nodestat");
  for (int k = 1; k <= 3; ++k) {
    run_tool(d_->home(),
             "chdef -t group g" + std::to_string(k) + " servicenode=sn" + std::to_string(k));
  }
  EXPECT_EQ(delegated.status, flat.status);
  EXPECT_EQ(delegated.body, flat.body);
  EXPECT_NE(delegated.body.find("sshd"), std::string::npos) << delegated.body;
}

TEST_F(sn_delegation_test, rpower_through_a_service_node_answers_as_the_head_alone) {
  if (farm_ == nullptr) {
    GTEST_SKIP() << "ipmi_sim (package openipmi) is not installed";
  }
  farm_->set_power(1, true);
  auto before = farm_->log(0);
  auto r = call("PUT", "/nodes/bmc0/power", R"({"action":"on"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(farm_->power(0), "1");
  auto stat = call("GET", "/nodes/bmcs/power");
  EXPECT_EQ(stat.body, R"({"bmc0":{"power":"on"},"bmc1":{"power":"on"}})"
                       "\n")
    << stat.body << slurp(sns_[2]->log());
  r = call("PUT", "/nodes/bmcs/power", R"({"action":"off"})");
  EXPECT_EQ(r.status, 200u) << r.body;
  auto delegated = call("GET", "/nodes/bmcs/power", {}, "&format=detail");
  run_tool(d_->home(), "chdef -t group bmcs servicenode=");
  auto flat = call("GET", "/nodes/bmcs/power", {}, "&format=detail");
  run_tool(d_->home(), "chdef -t group bmcs servicenode=sn3");
  EXPECT_EQ(delegated.body, flat.body);
  EXPECT_NE(flat.body.find("off"), std::string::npos) << flat.body;
  // the BMC password went to the service node in the sealed share; no log holds it
  EXPECT_EQ(slurp(sns_[2]->log()).find("secret"), std::string::npos);
  EXPECT_EQ(slurp(d_->log()).find("secret"), std::string::npos);
}

TEST_F(sn_delegation_test, staged_power_on_keeps_its_interval_across_the_head_and_a_service_node) {
  if (farm_ == nullptr) {
    GTEST_SKIP() << "ipmi_sim (package openipmi) is not installed";
  }
  // one BMC a second, counted over the whole call: bmc0 and bmc1 (sn3) are waves 0 and 1,
  // bmc2 and bmc3 (the head) waves 2 and 3; counted per engine, the head's would be 0 and 1
  run_tool(d_->home(), "chdef -t site clustersite syspowerinterval=1 syspowermaxnodes=1");
  std::vector<size_t> seen;
  for (size_t i = 0; i < farm_->size(); ++i) {
    farm_->set_power(i, false);
    seen.push_back(farm_->power_on_times(i).size());
  }
  auto r = call("PUT", "/nodes/bmc0-bmc3/power", R"({"action":"on"})");
  run_tool(d_->home(), "chdef -t site clustersite syspowerinterval=0 syspowermaxnodes=");
  EXPECT_EQ(r.status, 200u) << r.body;
  std::vector<std::pair<double, size_t>> on; // (when, which BMC)
  for (size_t i = 0; i < farm_->size(); ++i) {
    auto times = farm_->power_on_times(i);
    ASSERT_EQ(times.size(), seen[i] + 1) << "bmc" << i << " " << r.body;
    on.emplace_back(times.back(), i);
  }
  std::sort(on.begin(), on.end());
  for (size_t k = 0; k < on.size(); ++k) {
    EXPECT_EQ(on[k].second, k) << "wave " << k; // noderange order, across both
    if (k > 0) {
      // the interval, less the jitter of a loaded machine (IPMI sessions, ipmi_sim's fork)
      EXPECT_GE(on[k].first - on[k - 1].first, 0.8) << "between waves " << k - 1 << " and " << k;
      EXPECT_LE(on[k].first - on[k - 1].first, 1.5) << "between waves " << k - 1 << " and " << k;
    }
  }
}

TEST_F(sn_delegation_test, nodecopy_through_the_service_nodes_writes_each_file_once_as_flat) {
  auto src = d_->home() / "copy" / "app.conf"; // under copy_root (REST nodecopy)
  std::string text = "line one\n";
  for (int i = 0; i < 2000; ++i) {
    text += static_cast<char>('a' + i % 26);
  }
  spit(src, text, fs::perms(0640));
  auto target = dir_->path / "copied";
  fs::create_directories(target);
  auto body = "{\"src\":[\"" + src.string() + "\"],\"target\":\"" + target.string() + "\"}";
  auto before = head_ssh_runs();
  auto r = call("POST", "/nodes/sshnodes/nodecopy", body, "&format=detail");
  ASSERT_EQ(r.status, 201u) << r.body << slurp(d_->log());
  // the head copied only its own node; every node answers once, copied
  EXPECT_EQ(head_ssh_runs() - before, 1) << slurp(d_->log());
  for (const auto& [node, port] : port_of_) {
    auto at = r.body.find("\"" + node + "\":{\"rc\":0");
    EXPECT_NE(at, std::string::npos) << r.body;
    EXPECT_EQ(r.body.find("\"" + node + "\":{", at + 1), std::string::npos) << r.body;
  }
  EXPECT_EQ(slurp(target / "app.conf"), text);
  EXPECT_EQ(fs::status(target / "app.conf").permissions(), fs::perms(0640));
  auto plain = call("POST", "/nodes/sshnodes/nodecopy", body);
  // the same copy flat: the same answer, the same file
  fs::remove(target / "app.conf");
  set_service_nodes(d_->home(), false);
  auto flat = call("POST", "/nodes/sshnodes/nodecopy", body);
  set_service_nodes(d_->home(), true);
  EXPECT_EQ(flat.status, plain.status);
  EXPECT_EQ(flat.body, plain.body);
  EXPECT_EQ(plain.body, "[]\n");
  EXPECT_EQ(slurp(target / "app.conf"), text);
}

/// Times `path` is opened while `run` runs (inotify: IN_OPEN between IN_CLOSE_NOWRITE, so
/// two opens in a row are never folded into one event).
int opens_during(const fs::path& path, const std::function<void()>& run) {
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0 || inotify_add_watch(fd, path.c_str(), IN_OPEN | IN_CLOSE_NOWRITE) < 0) {
    return -1;
  }
  run();
  int opens = 0;
  alignas(inotify_event) char buf[4096];
  for (;;) {
    auto n = ::read(fd, buf, sizeof buf);
    if (n <= 0) {
      break;
    }
    for (ssize_t at = 0; at < n;) {
      auto* e = reinterpret_cast<inotify_event*>(buf + at);
      opens += (e->mask & IN_OPEN) != 0 ? 1 : 0;
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
  }
  ::close(fd);
  return opens;
}

TEST_F(sn_delegation_test, a_delegated_nodecopy_reads_each_source_file_once) {
  auto src = d_->home() / "copy" / "once.conf";
  spit(src, "read once\n", fs::perms(0644));
  auto target = dir_->path / "copied-once";
  fs::create_directories(target);
  auto body = "{\"src\":[\"" + src.string() + "\"],\"target\":\"" + target.string() + "\"}";
  // the head's node (h0) and the three service nodes' nodes, from one read of the file
  cws::test::reply r;
  auto opens = opens_during(src, [&] { r = call("POST", "/nodes/sshnodes/nodecopy", body); });
  EXPECT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(r.body, "[]\n");
  EXPECT_EQ(opens, 1);
  // every node on service nodes: one read too
  opens = opens_during(src, [&] { r = call("POST", "/nodes/" + nodes_of(1) + "/nodecopy", body); });
  EXPECT_EQ(r.body, "[]\n");
  EXPECT_EQ(opens, 1);
  EXPECT_EQ(slurp(target / "once.conf"), "read once\n");
}

TEST_F(sn_delegation_test, a_copy_past_sn_copy_max_is_refused_for_the_delegated_nodes_only) {
  auto src = d_->home() / "copy" / "big.bin";
  spit(src, std::string(copy_max + 1, 'x'), fs::perms(0644));
  auto target = dir_->path / "copied-big";
  fs::create_directories(target);
  auto r = call("POST", "/nodes/sshnodes/nodecopy",
                "{\"src\":[\"" + src.string() + "\"],\"target\":\"" + target.string() + "\"}",
                "&format=detail");
  ASSERT_EQ(r.status, 201u) << r.body;
  EXPECT_NE(r.body.find("\"h0\":{\"rc\":0"), std::string::npos) << r.body;
  for (const auto& [node, port] : port_of_) {
    if (node == "h0") {
      continue;
    }
    auto at = r.body.find("\"" + node + "\":{");
    ASSERT_NE(at, std::string::npos) << r.body;
    auto entry = r.body.substr(at, r.body.find('}', at) - at);
    EXPECT_NE(entry.find("servicenode"), std::string::npos) << entry;
    EXPECT_NE(
      entry.find("service node sn" + node.substr(1, 1)
                 + " was not sent the request: the files to copy are 65537 bytes, more "
                   "than sn_copy_max (65536 bytes) a service node is sent; nothing was run"),
      std::string::npos)
      << entry;
  }
  // the head's own node was copied
  EXPECT_EQ(fs::file_size(target / "big.bin"), static_cast<uintmax_t>(copy_max + 1));
}

/// The lines of `text`, sorted (nodes end in any order).
std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in{text};
  for (std::string l; std::getline(in, l);) {
    lines.push_back(l);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

/// While it lives, the head's clusterws.conf points root's tools at `local_socket` (nothing
/// listens there: the daemon looks down to them, the running one is untouched) and holds
/// `extra`; the file as it was afterwards.
class tools_see_no_daemon {
 public:
  tools_see_no_daemon(const fs::path& home, const fs::path& socket, const std::string& extra = {})
      : conf_(home / "clusterws.conf"), saved_(slurp(conf_)) {
    std::ofstream{conf_, std::ios::app} << "local_socket = " << socket.string() << "\n" << extra;
  }
  ~tools_see_no_daemon() {
    std::ofstream{conf_, std::ios::trunc} << saved_;
  }
  tools_see_no_daemon(const tools_see_no_daemon&) = delete;
  tools_see_no_daemon& operator=(const tools_see_no_daemon&) = delete;

 private:
  fs::path conf_;
  std::string saved_;
};

TEST_F(sn_delegation_test,
       root_s_xdsh_goes_through_the_daemon_which_delegates_to_the_service_nodes) {
  clear_delays();
  auto script = dir_->path / "count.sh";
  spit(script, command() + "\n", fs::perms(0755));
  auto xdsh = "xdsh sshnodes sh " + script.string();
  std::map<std::string, int> counted;
  for (const auto& [node, port] : port_of_) {
    counted[node] = runs(node);
  }
  const std::string ok = "clusterws_ssh_nodes_total{result=\"ok\"}";
  auto before = call("GET", "/metrics").body;
  auto through = cws::test::run_tool_streams(d_->home(), xdsh);
  auto after = call("GET", "/metrics").body;
  EXPECT_EQ(through.rc, 0) << through.err;
  EXPECT_EQ(through.err, "");
  // the head's daemon ran h0 only; the service nodes ran the other nine
  EXPECT_EQ(cws::test::metric_growth(before, after, ok), 1) << slurp(d_->log());
  for (const auto& [node, port] : port_of_) {
    EXPECT_EQ(runs(node), counted[node] + 1) << node;
  }
  EXPECT_EQ(sorted_lines(through.out).size(), port_of_.size()) << through.out;
  EXPECT_NE(through.out.find("n20: ok\n"), std::string::npos) << through.out;
  // the daemon audited root's call as any other
  EXPECT_NE(slurp(d_->home() / "audit.log").find(script.string()), std::string::npos);

  // no daemon on the socket: from this process, with the warning, the same output
  auto nowhere = dir_->path / "nowhere.sock";
  {
    tools_see_no_daemon down{d_->home(), nowhere};
    before = call("GET", "/metrics").body;
    auto local = cws::test::run_tool_streams(d_->home(), xdsh);
    after = call("GET", "/metrics").body;
    EXPECT_EQ(local.rc, 0) << local.err;
    EXPECT_EQ(local.err, "Warning: clusterwsd is not reachable on " + nowhere.string()
                           + " (nothing listens there); running from this host, service nodes "
                             "not used.\n");
    EXPECT_EQ(sorted_lines(local.out), sorted_lines(through.out));
    EXPECT_EQ(cws::test::metric_growth(before, after, ok), 0);
    for (const auto& [node, port] : port_of_) {
      EXPECT_EQ(runs(node), counted[node] + 2) << node;
    }
  }
  // ... or, with sn_cli_fallback = fail, refused: nothing runs
  {
    tools_see_no_daemon down{d_->home(), nowhere, "sn_cli_fallback = fail\n"};
    auto refused = cws::test::run_tool_streams(d_->home(), xdsh);
    EXPECT_EQ(refused.rc, 1);
    EXPECT_NE(refused.err.find("Error: clusterwsd is not reachable on " + nowhere.string()
                               + " (nothing listens there); xdsh was not run: this head has "
                                 "service nodes and sn_cli_fallback = fail."),
              std::string::npos)
      << refused.err;
    EXPECT_EQ(refused.out, "");
    for (const auto& [node, port] : port_of_) {
      EXPECT_EQ(runs(node), counted[node] + 2) << node;
    }
  }
  // -e copies a script from this host: in-process, said so
  auto e = cws::test::run_tool_streams(d_->home(), "xdsh h0 -e " + script.string());
  EXPECT_EQ(e.rc, 0) << e.err;
  EXPECT_EQ(e.err, "Warning: xdsh -e does not go through clusterwsd: running from this host, "
                   "service nodes not used.\n");
  EXPECT_EQ(e.out, "h0: ok\n");
}

TEST_F(sn_delegation_test, without_sn_listen_root_s_xdsh_runs_in_its_own_process_as_before) {
  auto conf = d_->home() / "clusterws.conf";
  auto saved = slurp(conf);
  auto text = saved;
  auto at = text.find("sn_listen = 127.0.0.1:0\n");
  ASSERT_NE(at, std::string::npos);
  text.erase(at, std::string{"sn_listen = 127.0.0.1:0\n"}.size());
  std::ofstream{conf, std::ios::trunc} << text;
  auto before = call("GET", "/metrics").body;
  auto r = cws::test::run_tool_streams(d_->home(), "xdsh n10,h0 echo hi");
  auto after = call("GET", "/metrics").body;
  std::ofstream{conf, std::ios::trunc} << saved;
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(sorted_lines(r.out), (std::vector<std::string>{"h0: hi", "n10: hi"}));
  EXPECT_EQ(cws::test::metric_growth(before, after, "clusterws_ssh_runs_total"), 0);
}

TEST_F(sn_delegation_test, root_s_xdcp_goes_through_the_daemon_from_outside_copy_root) {
  auto src = dir_->path / "src" / "tool.conf"; // not under copy_root: root's own file
  std::string text = "root's file\n";
  spit(src, text, fs::perms(0600));
  auto target = dir_->path / "xdcp-copied";
  fs::create_directories(target);
  const std::string ok = "clusterws_ssh_nodes_total{result=\"ok\"}";
  auto before = call("GET", "/metrics").body;
  auto r = cws::test::run_tool_streams(d_->home(),
                                       "xdcp sshnodes -p " + src.string() + " " + target.string());
  auto after = call("GET", "/metrics").body;
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(cws::test::metric_growth(before, after, ok), 1) << slurp(d_->log());
  EXPECT_EQ(slurp(target / "tool.conf"), text);
  EXPECT_EQ(fs::status(target / "tool.conf").permissions(), fs::perms(0600)); // -p
  // a failing copy: the same lines and exit status as from this process
  auto bad = "xdcp n10,h0 " + src.string() + " /nonexistent/dir/x";
  auto through = cws::test::run_tool_streams(d_->home(), bad);
  tools_see_no_daemon down{d_->home(), dir_->path / "nowhere.sock"};
  auto local = cws::test::run_tool_streams(d_->home(), bad);
  EXPECT_EQ(through.rc, 2);
  EXPECT_EQ(local.rc, through.rc);
  EXPECT_EQ(sorted_lines(local.out), sorted_lines(through.out));
  auto warning = local.err.substr(0, local.err.find('\n') + 1);
  EXPECT_EQ(warning.rfind("Warning: clusterwsd is not reachable on ", 0), 0u) << local.err;
  EXPECT_EQ(sorted_lines(local.err.substr(warning.size())), sorted_lines(through.err));
}

TEST_F(sn_delegation_test, root_s_nodestat_goes_through_the_daemon_which_delegates) {
  const std::string ok = "clusterws_probe_nodes_total{result=\"ok\"}";
  auto before = call("GET", "/metrics").body;
  auto through = cws::test::run_tool_streams(d_->home(), "nodestat sshnodes");
  auto after = call("GET", "/metrics").body;
  EXPECT_EQ(through.rc, 0) << through.err;
  EXPECT_EQ(through.err, "");
  // h0 is the head's one probe; the service nodes probed the rest
  EXPECT_EQ(cws::test::metric_growth(before, after, ok), 1);
  EXPECT_NE(through.out.find("n10: sshd\n"), std::string::npos) << through.out;
  auto missing = cws::test::run_tool_streams(d_->home(), "nodestat n10,nosuch");
  tools_see_no_daemon down{d_->home(), dir_->path / "nowhere.sock"};
  auto local = cws::test::run_tool_streams(d_->home(), "nodestat sshnodes");
  EXPECT_EQ(local.rc, 0);
  EXPECT_EQ(local.out, through.out); // the same lines in the same (noderange) order
  auto local_missing = cws::test::run_tool_streams(d_->home(), "nodestat n10,nosuch");
  EXPECT_EQ(local_missing.rc, missing.rc);
  EXPECT_EQ(local_missing.out, missing.out);
  EXPECT_EQ(local_missing.err.substr(local_missing.err.find('\n') + 1), missing.err);
}

TEST_F(sn_delegation_test, root_s_rpower_goes_through_the_daemon_to_the_bmcs_service_node) {
  if (farm_ == nullptr) {
    GTEST_SKIP() << "ipmi_sim (package openipmi) is not installed";
  }
  farm_->set_power(0, false);
  farm_->set_power(1, false);
  const std::string ipmi = "clusterws_ipmi_nodes_total{result=\"ok\"}";
  auto before = call("GET", "/metrics").body;
  auto on = cws::test::run_tool_streams(d_->home(), "rpower bmcs on");
  auto stat = cws::test::run_tool_streams(d_->home(), "rpower bmcs stat");
  auto inv = cws::test::run_tool_streams(d_->home(), "rinv bmcs guid deviceid");
  auto after = call("GET", "/metrics").body;
  EXPECT_EQ(on.rc, 0) << on.err;
  EXPECT_EQ(on.err, "");
  EXPECT_EQ(sorted_lines(on.out), (std::vector<std::string>{"bmc0: on", "bmc1: on"}));
  EXPECT_EQ(farm_->power(0), "1");
  EXPECT_EQ(farm_->power(1), "1");
  // the head's IPMI engine sent nothing: sn3 did; the head audited the change
  EXPECT_EQ(cws::test::metric_growth(before, after, ipmi), 0);
  EXPECT_NE(slurp(d_->home() / "audit.log").find("/nodes/bmcs/power"), std::string::npos);
  tools_see_no_daemon down{d_->home(), dir_->path / "nowhere.sock"};
  before = call("GET", "/metrics").body;
  auto local = cws::test::run_tool_streams(d_->home(), "rpower bmcs stat");
  after = call("GET", "/metrics").body;
  EXPECT_EQ(local.rc, stat.rc);
  EXPECT_EQ(sorted_lines(local.out), sorted_lines(stat.out));
  EXPECT_EQ(sorted_lines(stat.out), (std::vector<std::string>{"bmc0: on", "bmc1: on"}));
  // keywords travel in the path (`guid;deviceid`): the same lines as from this process
  auto local_inv = cws::test::run_tool_streams(d_->home(), "rinv bmcs guid deviceid");
  EXPECT_EQ(local_inv.rc, inv.rc);
  EXPECT_EQ(sorted_lines(local_inv.out), sorted_lines(inv.out));
  EXPECT_NE(inv.out.find("bmc0: "), std::string::npos) << inv.out << inv.err;
  EXPECT_NE(local.err.find("Warning: clusterwsd is not reachable"), std::string::npos);
  EXPECT_EQ(cws::test::metric_growth(before, after, ipmi), 0);
}

TEST_F(sn_delegation_test, kill_9_of_a_service_node_mid_run_ends_only_its_unreported_nodes) {
  clear_delays();
  // sn2: n20 answers at once, n21 and n22 are still running when sn2 dies
  set_delay("n21", 5);
  set_delay("n22", 5);
  for (int k : {1, 3}) {
    for (int i = 0; i < per_sn; ++i) {
      set_delay("n" + std::to_string(k) + std::to_string(i), 1.5);
    }
  }
  std::map<std::string, int> before;
  for (const auto& [node, port] : port_of_) {
    before[node] = runs(node);
  }
  auto start = steady_clock::now();
  auto pending = std::async(std::launch::async, [] { return shell("sshnodes", "&format=detail"); });
  // the slow ones started (they counted their run), and n20 ended
  for (int i = 0; i < 200 && (runs("n21") == before["n21"] || runs("n22") == before["n22"]); ++i) {
    std::this_thread::sleep_for(milliseconds(25));
  }
  std::this_thread::sleep_for(milliseconds(300));
  sns_[1]->stop(SIGKILL);
  auto r = pending.get();
  auto took = duration_cast<milliseconds>(steady_clock::now() - start);
  clear_delays();
  const std::string lost = "service node sn2 became unreachable after the command was sent; it "
                           "may have run";
  for (const char* node : {"n21", "n22"}) {
    auto at = r.body.find(std::string{"\""} + node + "\":{");
    ASSERT_NE(at, std::string::npos) << r.body;
    auto entry = r.body.substr(at, r.body.find('}', at) - at);
    EXPECT_NE(entry.find("\"error\":\"servicenode\""), std::string::npos) << entry;
    EXPECT_NE(entry.find(lost), std::string::npos) << entry;
  }
  EXPECT_NE(r.body.find(R"("n20":{"rc":0)"), std::string::npos) << r.body;
  for (const char* node : {"n10", "n11", "n12", "n30", "n31", "n32", "h0"}) {
    EXPECT_NE(r.body.find(std::string{"\""} + node + "\":{\"rc\":0"), std::string::npos)
      << node << ": " << r.body;
  }
  // the call did not wait for sn2's sleeping nodes
  EXPECT_LT(took.count(), 4500) << took.count();
  std::this_thread::sleep_for(milliseconds(500));
  for (const auto& [node, port] : port_of_) {
    EXPECT_EQ(runs(node), before[node] + 1) << node << " ran again elsewhere";
  }
  // restarted, it registers again and the next call runs on it
  sns_[1]->start();
  ASSERT_TRUE(registered("sn2")) << slurp(sns_[1]->log());
  auto again = shell(nodes_of(2), "&format=detail");
  EXPECT_EQ(again.status, 201u) << again.body << slurp(sns_[1]->log());
  for (int i = 0; i < per_sn; ++i) {
    auto node = "n2" + std::to_string(i);
    EXPECT_EQ(runs(node), before[node] + 2) << node;
  }
}

TEST_F(sn_delegation_test, a_stopped_service_node_s_nodes_end_within_the_dead_time) {
  clear_delays();
  for (int i = 0; i < per_sn; ++i) {
    set_delay("n1" + std::to_string(i), 1);
  }
  auto pending
    = std::async(std::launch::async, [] { return shell(nodes_of(1) + ",h0", "&format=detail"); });
  for (int i = 0; i < 200 && runs("n12") == 0; ++i) {
    std::this_thread::sleep_for(milliseconds(25));
  }
  kill(sns_[0]->pid(), SIGSTOP);
  auto stopped = steady_clock::now();
  auto r = pending.get();
  auto took = duration_cast<milliseconds>(steady_clock::now() - stopped);
  kill(sns_[0]->pid(), SIGCONT);
  clear_delays();
  std::cout << "SIGSTOP: the call ended " << took.count() << " ms after it (dead time "
            << dead_after_ms << " ms)\n";
  EXPECT_NE(r.body.find("service node sn1 became unreachable"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find(R"("h0":{"rc":0)"), std::string::npos) << r.body;
  // the dead time, a heartbeat tick and room for a loaded machine
  EXPECT_LE(took.count(), dead_after_ms + heartbeat_ms + 1500) << took.count();
  // resumed, it dials again and registers
  EXPECT_TRUE(registered("sn1")) << slurp(sns_[0]->log());
}

} // namespace

namespace {

/// The jobs of `operation` in state `state` in GET /jobs's answer `body`.
int jobs_in(const std::string& body, const std::string& operation, const std::string& state) {
  std::string needle = "\"operation\":\"" + operation + "\",\"state\":\"" + state + "\"";
  int n = 0;
  for (auto at = body.find(needle); at != std::string::npos; at = body.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

/// Waits up to `limit` for `pred`.
bool within(const std::function<bool()>& pred, milliseconds limit) {
  auto end = steady_clock::now() + limit;
  while (steady_clock::now() < end) {
    if (pred()) {
      return true;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return pred();
}

/// Starts `cmd` (a root tool) in the background of a shell; its pid. In the background sh
/// ignores SIGINT: SIGTERM is Ctrl-C's stand-in here (the tools take both alike).
pid_t start_tool(const fs::path& home, const std::string& cmd, const fs::path& out) {
  auto r = run_tool(home, cmd + " >" + out.string() + " 2>&1 </dev/null & echo $!");
  return r.rc == 0 ? std::stoi(r.out) : -1;
}

} // namespace

TEST_F(sn_delegation_test, cancel_on_close_is_refused_with_async_and_on_calls_not_on_nodes) {
  auto both
    = call("PUT", "/nodes/n10/power", "{\"action\":\"stat\"}", "&async=1&cancel_on_close=1");
  EXPECT_EQ(both.status, 400u) << both.body;
  EXPECT_NE(both.body.find("async=1 and cancel_on_close=1 do not go together"), std::string::npos)
    << both.body;
  auto list = call("GET", "/nodes/n10/nodels", {}, "&cancel_on_close=1");
  EXPECT_EQ(list.status, 400u) << list.body;
  EXPECT_NE(list.body.find("cancel_on_close=1 is for operations that run on nodes."),
            std::string::npos)
    << list.body;
}

TEST_F(sn_delegation_test, an_interrupted_xdsh_through_the_daemon_cancels_its_job_and_the_command) {
  set_delay("n10", 41.25);
  auto before = call("GET", "/jobs").body;
  int runs_before = runs("n10");
  auto out = dir_->path / "xdsh-interrupted.out";
  auto script = dir_->path / "interrupted.sh";
  spit(script, command() + "\n", fs::perms(0755));
  pid_t pid = start_tool(d_->home(), "xdsh n10 sh " + script.string(), out);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(within([&] { return runs("n10") > runs_before; }, seconds(10))) << slurp(out);
  ::kill(pid, SIGTERM);
  EXPECT_TRUE(within([&] { return ::kill(pid, 0) != 0; }, seconds(3))) << "xdsh did not end";
  // the daemon sees the connection go (within a second) and cancels: the job reads cancelled
  // and sn1 ended the command on n10, long before its 41 s
  EXPECT_TRUE(within(
    [&] {
      return jobs_in(call("GET", "/jobs").body, "nodeshell", "cancelled")
             == jobs_in(before, "nodeshell", "cancelled") + 1;
    },
    seconds(5)))
    << call("GET", "/jobs").body << slurp(d_->log());
  EXPECT_TRUE(
    within([&] { return run_tool(d_->home(), "pgrep -x -f 'sleep 41.25'").rc != 0; }, seconds(3)))
    << "the command outlived its cancelled call";
  EXPECT_NE(slurp(d_->log()).find("closed the connection; its job is cancelled"),
            std::string::npos);
  clear_delays();
}

TEST_F(sn_delegation_test, an_interrupted_rpower_through_the_daemon_cancels_its_job) {
  // a BMC that never answers: a UDP socket nobody reads, behind sn3
  int hole = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(hole, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(hole, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(hole, reinterpret_cast<sockaddr*>(&addr), &len);
  auto r = run_tool(d_->home(), "mkdef hole0 groups=holes mgt=ipmi bmcusername=admin "
                                "bmcpassword=secret servicenode=sn3 bmc=127.0.0.1 bmcport="
                                  + std::to_string(ntohs(addr.sin_port)));
  ASSERT_EQ(r.rc, 0) << r.out;
  // each try waits 20 s: only a cancel ends the call within the test's seconds
  run_tool(d_->home(), "chdef -t site clustersite ipmitimeout=20");
  auto before = call("GET", "/jobs").body;
  auto out = dir_->path / "rpower-interrupted.out";
  pid_t pid = start_tool(d_->home(), "rpower hole0 stat", out);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(within(
    [&] {
      auto now = call("GET", "/jobs").body;
      return jobs_in(now, "power", "running") > jobs_in(before, "power", "running");
    },
    seconds(10)))
    << call("GET", "/jobs").body << slurp(out);
  auto sent = steady_clock::now();
  ::kill(pid, SIGTERM);
  EXPECT_TRUE(within([&] { return ::kill(pid, 0) != 0; }, seconds(3))) << "rpower did not end";
  EXPECT_TRUE(within(
    [&] {
      return jobs_in(call("GET", "/jobs").body, "power", "cancelled")
             == jobs_in(before, "power", "cancelled") + 1;
    },
    seconds(5)))
    << call("GET", "/jobs").body << slurp(d_->log());
  duration<double> took = steady_clock::now() - sent;
  EXPECT_LT(took.count(), 5.0);
  run_tool(d_->home(), "chdef -t site clustersite ipmitimeout=1");
  run_tool(d_->home(), "rmdef hole0");
  ::close(hole);
}
