// cws-delegation-link: the head's cost of a call delegated to 4 service nodes over CAF's real
// link (BASP on 127.0.0.1), with a stub transport on the service nodes that answers every
// node at once (200 bytes of output), against the same call run flat on the head's own (stub)
// transport. The service nodes live in a child process (4 actor systems: 4 links), so this
// process is the head alone: its CPU (all threads), its peak RSS, and the bytes its TCP
// sockets sent and received (TCP_INFO) are the head's. Prints one line per mode:
//   MODE nodes=N rounds=R cpu_us_per_node=.. wall_ms=.. first_ms=.. p50_ms=.. p99_ms=..
//   rss_peak_mib=.. link_bytes_per_node=..
// (docs/performance.md, "Service nodes"; bench/delegation.sh runs it).

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/io/middleman.hpp>
#include <caf/send.hpp>

#include <dirent.h>
#include <linux/tcp.h> // tcp_info with its byte counts (glibc's is older)
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <future>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include "actors/delegation_actor.hpp"
#include "actors/service_node_actor.hpp"
#include "actors/type_ids.hpp"
#include "api/delegation.hpp"
#include "api/sn_seal.hpp"

namespace {

using namespace cws;
using clock_type = std::chrono::steady_clock;

/// A target of a request (the fields nodeshell and copies use).
api::wire::target make_target(uint32_t index, std::string name, std::string address, uint16_t port,
                              std::string user) {
  api::wire::target t;
  t.index = index;
  t.name = std::move(name);
  t.address = std::move(address);
  t.port = port;
  t.user = std::move(user);
  return t;
}

struct link_config : caf::actor_system_config {
  explicit link_config(int threads) {
    set("logger.file-verbosity", caf::atom("quiet"));
    set("scheduler.max-threads", threads);
    actors::add_wire_types(*this);
    load<caf::io::middleman>();
  }
};

/// Every node answered at once with 200 bytes.
class instant_operation : public api::node_operation {
 public:
  explicit instant_operation(std::vector<std::string> nodes) : nodes_(std::move(nodes)) {
  }
  const std::vector<std::string>& nodes() const override {
    return nodes_;
  }
  void start(result_fn on_result, std::function<void()> on_done) override {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      base::node_result r;
      r.name = nodes_[i];
      r.rc = 0;
      r.out = std::string(200, 'x');
      on_result(i, std::move(r));
    }
    on_done();
  }
  void cancel() override {
  }

 private:
  std::vector<std::string> nodes_;
};

/// The service nodes' process: 4 actor systems (one link each), each publishing a service
/// node; their ports go to `out`; ends when `in` closes.
[[noreturn]] void service_nodes_process(int out, int in) {
  std::vector<std::unique_ptr<link_config>> cfgs;
  std::vector<std::unique_ptr<caf::actor_system>> systems;
  std::string ports;
  for (int k = 0; k < 4; ++k) {
    cfgs.push_back(std::make_unique<link_config>(1));
    systems.push_back(std::make_unique<caf::actor_system>(*cfgs.back()));
    actors::service_node_config c;
    c.name = "sn" + std::to_string(k + 1);
    c.bind = [](const api::wire::job_request& job, api::node_operation_ptr& op) {
      std::vector<std::string> names;
      for (const auto& t : job.targets) {
        names.push_back(t.name);
      }
      op = std::make_shared<instant_operation>(std::move(names));
      return api::api_result{};
    };
    auto sn = actors::spawn_service_node(*systems.back(), c);
    auto port = systems.back()->middleman().publish(sn, 0, "127.0.0.1");
    if (!port) {
      _exit(2);
    }
    ports += std::to_string(*port) + "\n";
  }
  (void)!::write(out, ports.data(), ports.size());
  ::close(out);
  char c;
  while (::read(in, &c, 1) > 0) {
  }
  _exit(0); // the systems' threads are not joined: the process ends here
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double rss_peak_mib() {
  std::ifstream in{"/proc/self/status"};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::stod(line.substr(6)) / 1024.0;
    }
  }
  return 0;
}

/// Bytes sent and received by every TCP socket of this process so far (TCP_INFO).
std::pair<uint64_t, uint64_t> tcp_bytes() {
  uint64_t sent = 0;
  uint64_t received = 0;
  DIR* d = ::opendir("/proc/self/fd");
  if (d == nullptr) {
    return {0, 0};
  }
  while (auto* e = ::readdir(d)) {
    int fd = std::atoi(e->d_name);
    struct stat st {};
    if (fd <= 2 || ::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
      continue;
    }
    tcp_info info{};
    socklen_t len = sizeof info;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0
        && len >= offsetof(tcp_info, tcpi_bytes_received) + sizeof info.tcpi_bytes_received) {
      sent += info.tcpi_bytes_acked;
      received += info.tcpi_bytes_received;
    }
  }
  ::closedir(d);
  return {sent, received};
}

struct round_result {
  double cpu = 0;
  double wall_ms = 0;
  double first_ms = 0;
  std::vector<double> done_ms;
};

/// One call of `names` (delegated when `sns` is not empty, else flat on the head's stub).
round_result run_round(caf::actor_system& sys, const std::vector<std::string>& names,
                       const std::vector<std::string>& values,
                       const std::vector<api::wire::target>& targets,
                       const std::unordered_map<std::string, actors::sn_executor_actor>& sns) {
  round_result out;
  auto before = process_cpu_seconds();
  auto t0 = clock_type::now();
  api::service_nodes known;
  for (const auto& [name, h] : sns) {
    known.known[name] = true;
  }
  auto plan = api::plan_delegation(
    names, sns.empty() ? std::vector<std::string>(names.size()) : values, known);
  api::api_call call;
  call.op = api::operation::nodeshell;
  call.command = "uptime";
  auto job = api::wire::make_request(1, call, targets);
  size_t head_fanout = 0;
  auto run = actors::make_delegated_run(names, job, plan, sns, {}, 64, head_fanout);
  if (!plan.head.empty()) {
    std::vector<std::string> head_names;
    for (auto i : plan.head) {
      head_names.push_back(names[i]);
    }
    run.head = std::make_shared<instant_operation>(std::move(head_names));
  }
  // the link's seal: the share's bytes and an HMAC under the service node's secret
  std::string secret = api::make_sn_secret();
  run.seal = [&sys, secret](api::wire::share_request& s) {
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    if (!sink(s)) {
      auto seal = api::seal_sn_request(secret, s.service_node, s.job.id, api::sn_now_ms() + 60000,
                                       std::string_view{buf.data(), buf.size()});
      s.sealed = api::to_text(seal);
    }
  };
  auto op = actors::delegate(sys, std::move(run));
  std::mutex mu;
  std::vector<double> done_ms;
  done_ms.reserve(names.size());
  std::promise<void> done;
  op->start(
    [&](size_t, base::node_result) {
      std::lock_guard<std::mutex> lock{mu};
      done_ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
    },
    [&done] { done.set_value(); });
  done.get_future().wait();
  out.wall_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  op.reset();
  out.cpu = process_cpu_seconds() - before;
  std::lock_guard<std::mutex> lock{mu};
  out.done_ms = std::move(done_ms);
  out.first_ms
    = out.done_ms.empty() ? 0 : *std::min_element(out.done_ms.begin(), out.done_ms.end());
  return out;
}

void report(const char* mode, size_t nodes, const std::vector<round_result>& rounds,
            uint64_t link_bytes) {
  double cpu = 0;
  double wall = 0;
  double first = 0;
  std::vector<double> all;
  for (const auto& r : rounds) {
    cpu += r.cpu;
    wall += r.wall_ms;
    first += r.first_ms;
    all.insert(all.end(), r.done_ms.begin(), r.done_ms.end());
  }
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    return all.empty() ? 0.0 : all[std::min(all.size() - 1, static_cast<size_t>(p * all.size()))];
  };
  auto n = static_cast<double>(rounds.size());
  std::printf("%s nodes=%zu rounds=%zu cpu_us_per_node=%.2f wall_ms=%.1f first_ms=%.2f "
              "p50_ms=%.1f p99_ms=%.1f rss_peak_mib=%.1f link_bytes_per_node=%.0f\n",
              mode, nodes, rounds.size(), cpu * 1e6 / (n * static_cast<double>(nodes)), wall / n,
              first / n, pct(0.5), pct(0.99), rss_peak_mib(),
              static_cast<double>(link_bytes) / (n * static_cast<double>(nodes)));
  std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
  size_t nodes = argc > 1 ? std::stoul(argv[1]) : 10000;
  size_t rounds = argc > 2 ? std::stoul(argv[2]) : 20;
  int to_head[2];
  int to_sns[2];
  if (::pipe(to_head) != 0 || ::pipe(to_sns) != 0) {
    return 1;
  }
  pid_t child = ::fork(); // before any thread: the service nodes' process
  if (child == 0) {
    ::close(to_head[0]);
    ::close(to_sns[1]);
    service_nodes_process(to_head[1], to_sns[0]);
  }
  ::close(to_head[1]);
  ::close(to_sns[0]);
  std::string ports;
  char buf[256];
  for (ssize_t n; (n = ::read(to_head[0], buf, sizeof buf)) > 0;) {
    ports.append(buf, static_cast<size_t>(n));
  }
  link_config cfg{2};
  int rc = 0;
  {
    caf::actor_system sys{cfg};
    std::unordered_map<std::string, actors::sn_executor_actor> sns;
    size_t k = 0;
    for (size_t at = 0, nl; (nl = ports.find('\n', at)) != std::string::npos; at = nl + 1) {
      auto port = static_cast<uint16_t>(std::stoi(ports.substr(at, nl - at)));
      auto h = sys.middleman().remote_actor<actors::sn_executor_actor>("127.0.0.1", port);
      if (!h) {
        std::cerr << "cannot reach service node " << k + 1 << ": " << sys.render(h.error()) << "\n";
        rc = 1;
        break;
      }
      sns["sn" + std::to_string(++k)] = *h;
    }
    if (rc == 0 && sns.size() == 4) {
      std::vector<std::string> names;
      std::vector<std::string> values;
      std::vector<api::wire::target> targets;
      for (uint32_t i = 0; i < nodes; ++i) {
        names.push_back("node" + std::to_string(i));
        values.push_back("sn" + std::to_string(1 + (i / 250) % 4));
        targets.push_back(make_target(i, names.back(), "10.2.0.1", 22, "alice"));
      }
      std::unordered_map<std::string, actors::sn_executor_actor> none;
      run_round(sys, names, values, targets, none); // warm-up
      std::vector<round_result> flat;
      for (size_t r = 0; r < rounds; ++r) {
        flat.push_back(run_round(sys, names, values, targets, none));
      }
      report("flat", nodes, flat, 0);
      run_round(sys, names, values, targets, sns); // warm-up
      auto [sent0, received0] = tcp_bytes();
      std::vector<round_result> delegated;
      for (size_t r = 0; r < rounds; ++r) {
        delegated.push_back(run_round(sys, names, values, targets, sns));
      }
      auto [sent1, received1] = tcp_bytes();
      report("delegated", nodes, delegated, (sent1 - sent0) + (received1 - received0));
      std::printf("link bytes: head sent %.0f and received %.0f per node\n",
                  static_cast<double>(sent1 - sent0) / static_cast<double>(rounds * nodes),
                  static_cast<double>(received1 - received0) / static_cast<double>(rounds * nodes));
    }
  }
  ::close(to_sns[1]);
  int status = 0;
  ::waitpid(child, &status, 0);
  return rc;
}
