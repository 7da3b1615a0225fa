// A bounded load test on loopback: hundreds of keep-alive connections at once, slow clients
// and clients that vanish mid-request, all while the service keeps answering; its memory stays
// bounded and does not grow from one round to the next.

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <sys/resource.h>
#include <thread>

#include "../store/temp_home.hpp"
#include "../support/daemon.hpp"
#include "../support/https_client.hpp"

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

TEST(load, many_connections_slow_and_vanishing_clients) {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
  cws::test::temp_dir dir;
  cws::test::daemon d{dir.path / "home", "rootpw"};
  std::ofstream{d.home() / "clusterws.conf", std::ios::app}
    << "request_timeout = 2\nlogin_backoff_after = 100000\n";
  cws::test::run_tool(d.home(), "mkdef 'node[0001-1000]' groups=all mgt=kvm");
  d.start();
  constexpr int conns = 200;
  long rss_after_first = 0;
  for (int round = 0; round < 2; ++round) {
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
    // keep-alive clients, all connected at once, each asking several times
    std::vector<std::unique_ptr<cws::test::https_client>> clients;
    for (int i = 0; i < conns; ++i) {
      clients.push_back(std::make_unique<cws::test::https_client>(d.ca(), d.port()));
    }
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int i = t; i < conns; i += 4) {
          for (int k = 0; k < 3; ++k) {
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
    EXPECT_EQ(ok.load(), conns * 3);
    EXPECT_EQ(failed.load(), 0);
    clients.clear();
    // still answering
    cws::test::https_client probe{d.ca(), d.port()};
    EXPECT_EQ(probe.get(d.url("/nodes/node0001")).status, 200u);
    auto rss = rss_kib(d.pid());
    EXPECT_LT(rss, 200 * 1024) << "daemon RSS " << rss << " KiB";
    if (round == 0) {
      rss_after_first = rss;
    } else {
      // the same load again must not keep what the first round used (leaks)
      EXPECT_LT(rss - rss_after_first, 32 * 1024) << rss_after_first << " -> " << rss << " KiB";
      std::printf("load test: %d keep-alive connections x 3 requests, 20 slow/vanishing clients, "
                  "2 rounds; daemon RSS %.1f -> %.1f MiB\n",
                  conns, static_cast<double>(rss_after_first) / 1024,
                  static_cast<double>(rss) / 1024);
    }
  }
  EXPECT_EQ(d.stop(), 0);
}

} // namespace
