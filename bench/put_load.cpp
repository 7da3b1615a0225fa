// The write load of bench/writes.sh: N node creates with PUT over C keep-alive connections
// (one thread each), every reply awaited. Prints "writes/s <rate> errors <n>".
// Usage: cws-put-load PORT CA PASSWORD N CONNS PREFIX

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "../tests/support/https_client.hpp"

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: cws-put-load PORT CA PASSWORD N CONNS PREFIX\n");
    return 2;
  }
  auto port = static_cast<unsigned short>(std::stoi(argv[1]));
  std::string ca = argv[2];
  std::string pw = argv[3];
  long n = std::stol(argv[4]);
  int conns = std::stoi(argv[5]);
  std::string prefix = argv[6];
  std::atomic<long> next{0};
  std::atomic<long> errors{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < conns; ++c) {
    threads.emplace_back([&] {
      cws::test::https_client client{ca, port};
      for (long i = next++; i < n; i = next++) {
        auto r = client.request(
          "PUT", "/clusterws/nodes/" + prefix + std::to_string(i) + "?userName=root&userPW=" + pw,
          R"({"groups":"bench","mgt":"kvm"})");
        if (r.status != 200) {
          ++errors;
        }
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("writes/s %.0f errors %ld\n", static_cast<double>(n) / s, errors.load());
  return errors == 0 ? 0 : 1;
}
