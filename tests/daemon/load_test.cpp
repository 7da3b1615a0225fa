// A bounded load test on loopback: thousands of keep-alive connections held at once, slow
// clients and clients that vanish mid-request, and a nodeshell over 200 nodes (a real sshd)
// running while the reads go on. Every request is answered; the connections are really held
// (counted in the daemon's descriptors); memory stays bounded and does not grow from one
// round to the next.

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <sys/resource.h>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"
#include "../support/sshd.hpp"

namespace {

/// The daemon's resident memory in KiB.
long rss_kib(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
  std::string key;
  long value = 0;
  while (in >> key) {
    if (key == "VmRSS:") {
      in >> value;
      return value;
    }
    in.ignore(1 << 12, '\n');
  }
  return 0;
}

/// The daemon's open descriptors.
size_t open_fds(pid_t pid) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e :
       std::filesystem::directory_iterator{"/proc/" + std::to_string(pid) + "/fd"}) {
    ++n;
  }
  return n;
}

size_t connects_of(const std::vector<std::unique_ptr<cws::test::https_client>>& clients) {
  size_t n = 0;
  for (const auto& c : clients) {
    n += static_cast<size_t>(c->connects());
  }
  return n;
}

TEST(load, thousands_of_connections_slow_clients_and_nodeshell_during_reads) {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "rootpw"};
  std::ofstream{d.home() / "clusterws.conf", std::ios::app}
    << "request_timeout = 120\nlogin_backoff_after = 100000\nssh_connect_timeout = 5\n"
       "max_connections_per_client = 10000\n"; // every client here is 127.0.0.1
  cws::test::run_tool(d.home(), "mkdef 'node[0001-1000]' groups=all mgt=kvm");
  cws::test::sshd farm{dir.path / "farm"};
  farm.authorize("root", d.home() / "ssh" / "root" / "id_ed25519.pub");
  cws::test::run_tool(d.home(), "mkdef 'sh[001-200]' groups=farm ip=127.0.0.1 sshport="
                                  + std::to_string(farm.port()));
  farm.start();
  d.start();
  constexpr int conns = 2000;
  constexpr int shell_nodes = 200;
  constexpr int rounds = 3;
  // a held TLS connection costs ~70-100 KiB (Asio's record buffers, OpenSSL's state)
  [[maybe_unused]] constexpr long max_kib_per_connection = 128; // not checked under ASan
  long rss_base = rss_kib(d.pid());
  long rss_held = 0; // in the first round, on a fresh heap
  std::vector<long> rss_after;
  size_t held = 0;
  for (int round = 0; round < rounds; ++round) {
    std::atomic<int> ok{0};
    std::atomic<int> failed{0};
    std::vector<std::thread> threads;

    // slow clients (half a request, then silence) and vanishing ones (half a request, gone)
    for (int i = 0; i < 20; ++i) {
      threads.emplace_back([&, i] {
        try {
          cws::test::https_client c{d.ca(), d.port()};
          c.closed_after_partial("GET /clusterws/nodes HTTP/1.1\r\nHost: x\r\n",
                                 std::chrono::milliseconds(i % 2 ? 3000 : 10));
        } catch (const std::exception&) {
          // a refused or reset connection is a fine outcome for these
        }
      });
    }
    // keep-alive clients, all connected at once and held, each asking several times
    std::vector<std::unique_ptr<cws::test::https_client>> clients;
    for (int i = 0; i < conns; ++i) {
      clients.push_back(std::make_unique<cws::test::https_client>(d.ca(), d.port()));
      clients.back()->connect();
    }
    held = open_fds(d.pid());
    EXPECT_GE(held, static_cast<size_t>(conns)) << "the daemon does not hold the connections";
    if (round == 0) {
      rss_held = rss_kib(d.pid());
    }
    // a nodeshell over 200 nodes whose first 64 (the fanout) wait until the reads are done:
    // for the file the test creates then (at most 60 s)
    auto release = dir.path / ("release" + std::to_string(round));
    std::atomic<bool> shell_done{false};
    cws::test::reply shell;
    std::thread shell_thread{[&] {
      cws::test::https_client c{d.ca(), d.port()};
      shell = c.request("POST", d.url("/nodes/farm/nodeshell"),
                        "{\"command\":\"i=0; while [ ! -e " + release.string()
                          + " ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; echo up\"}");
      shell_done = true;
    }};
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int i = t; i < conns; i += 4) {
          for (int k = 0; k < 2; ++k) {
            try {
              auto r = clients[static_cast<size_t>(i)]->get(
                d.url("/nodes/node" + std::string(k == 0 ? "[0001-0050]" : "0001")));
              (r.status == 200 ? ok : failed)++;
            } catch (const std::exception&) {
              ++failed;
            }
          }
        }
      });
    }
    for (auto& t : threads) {
      t.join();
    }
    bool reads_during_shell = !shell_done;
    std::ofstream{release} << "done\n";
    EXPECT_EQ(ok.load(), conns * 2);
    EXPECT_EQ(failed.load(), 0);
    EXPECT_EQ(connects_of(clients), static_cast<size_t>(conns)) << "connections were dropped";
    clients.clear();
    shell_thread.join();
    EXPECT_TRUE(reads_during_shell) << "the nodeshell ended before the reads did";
    EXPECT_EQ(shell.status, 201u) << shell.body.substr(0, 300);
    for (int n = 1; n <= shell_nodes; ++n) {
      char name[8];
      std::snprintf(name, sizeof name, "sh%03d", n);
      EXPECT_NE(shell.body.find(std::string{"\""} + name + "\":[\" up\"]"), std::string::npos)
        << name << " did not answer";
    }
    // still answering
    cws::test::https_client probe{d.ca(), d.port()};
    EXPECT_EQ(probe.get(d.url("/nodes/node0001")).status, 200u);
    rss_after.push_back(rss_kib(d.pid()));
  }
#ifndef __SANITIZE_ADDRESS__ // ASan's quarantine and shadow memory change every figure
  EXPECT_LT(rss_held - rss_base, conns * max_kib_per_connection)
    << "daemon RSS " << rss_base << " -> " << rss_held << " KiB";
  // The allocator keeps some of what a round freed, less each round; leaked sessions would
  // add all that a round's connections took (the sanitizer build checks leaks exactly).
  EXPECT_LT(rss_after[2] - rss_after[1], (rss_held - rss_base) / 4)
    << "RSS after each round: " << rss_after[0] << ", " << rss_after[1] << ", " << rss_after[2];
#endif
  std::printf("load test: %d keep-alive connections held at once (%zu daemon fds) x 2 requests, "
              "20 slow/vanishing clients, nodeshell over %d nodes meanwhile, %d rounds; daemon "
              "RSS %.0f MiB idle, %.0f MiB holding them, %.0f/%.0f/%.0f MiB after each round\n",
              conns, held, shell_nodes, rounds, rss_base / 1024.0, rss_held / 1024.0,
              rss_after[0] / 1024.0, rss_after[1] / 1024.0, rss_after[2] / 1024.0);
  EXPECT_EQ(d.stop(), 0);
}

} // namespace
