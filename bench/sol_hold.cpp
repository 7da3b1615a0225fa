// Holds N Serial-over-LAN consoles to N BMCs (127.0.0.1:PORT0+i) and reports what that costs:
// threads, resident memory before and after, CPU while holding, bytes received. Two ways:
// `ours` (ipmi/sol.hpp: one thread, one poll loop, one UDP socket per console) and
// `libipmiconsole` (FreeIPMI's engine, as conman uses it). Used by bench/sol_hold.sh; the
// numbers are in docs/consoles.md ("Why our own SOL").
//
//   cws-sol-hold ours|libipmiconsole N PORT0 SECONDS

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "ipmi/session_setup.hpp"
#include "ipmi/sol.hpp"

#ifdef CWS_HAVE_IPMICONSOLE
#include <ipmiconsole.h>
#endif

namespace {

using namespace cws::ipmi;

/// BMC i's address: 127.0.0.1:PORT0+i, or with PORT0 623 (libipmiconsole 1.6.10 rejects a
/// "host:port" with "hostname invalid"), 127.31.i/250.i%250+1 at port 623.
std::string bmc_host(size_t i, unsigned short port0) {
  if (port0 == 623) {
    return "127.31." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1);
  }
  return "127.0.0.1";
}
unsigned short bmc_port(size_t i, unsigned short port0) {
  return static_cast<unsigned short>(port0 == 623 ? 623 : port0 + i);
}
using namespace std::chrono_literals;
using clk = std::chrono::steady_clock;

long status_field(const char* name) {
  std::ifstream in{"/proc/self/status"};
  std::string line;
  size_t n = std::strlen(name);
  while (std::getline(in, line)) {
    if (line.compare(0, n, name) == 0 && line.size() > n && line[n] == ':') {
      return std::atol(line.c_str() + n + 1);
    }
  }
  return -1;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec)
         + static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

struct report {
  size_t established = 0;
  size_t with_bytes = 0;
  unsigned long long bytes = 0;
  double setup_s = 0;
  double hold_cpu_s = 0;
  long rss_before = 0;
  long rss_after = 0;
};

void print(const char* mode, size_t n, const report& r, double seconds) {
  std::printf("mode=%s consoles=%zu established=%zu with_bytes=%zu bytes=%llu setup_s=%.2f "
              "threads=%ld rss_before_kib=%ld rss_after_kib=%ld per_console_kib=%.1f "
              "cpu_pct=%.2f hold_s=%.0f\n",
              mode, n, r.established, r.with_bytes, r.bytes, r.setup_s, status_field("Threads"),
              r.rss_before, r.rss_after,
              n ? static_cast<double>(r.rss_after - r.rss_before) / static_cast<double>(n) : 0.0,
              100.0 * r.hold_cpu_s / seconds, seconds);
}

// -- ours ------------------------------------------------------------------------------

struct ours_console {
  int fd = -1;
  std::optional<session_setup> setup;
  std::optional<sol> c;
  clk::time_point resend{};
  unsigned long long bytes = 0;
  bool active = false;
};

report run_ours(size_t n, unsigned short port0, double seconds) {
  report r;
  r.rss_before = status_field("VmRSS");
  std::vector<ours_console> cons(n);
  auto start = clk::now();
  for (size_t i = 0; i < n; ++i) {
    auto& k = cons[i];
    k.fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    inet_pton(AF_INET, bmc_host(i, port0).c_str(), &a.sin_addr);
    a.sin_port = htons(bmc_port(i, port0));
    ::connect(k.fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    k.setup.emplace("admin", "password");
    auto p = k.setup->packet();
    (void)::send(k.fd, p.data(), p.size(), 0);
    k.resend = clk::now() + 1s;
  }
  auto flush = [](ours_console& k) {
    for (const auto& d : k.c->take_datagrams()) {
      (void)::send(k.fd, d.data(), d.size(), 0);
    }
    k.bytes += k.c->take_output().size();
    for (const auto& e : k.c->take_events()) {
      if (e.what == sol_event::kind::active) {
        k.active = true;
      }
    }
  };
  std::vector<pollfd> ps(n);
  auto hold_end = clk::time_point::max();
  double cpu0 = 0;
  bool holding = false;
  auto give_up = start + 30s;
  while (clk::now() < hold_end) {
    for (size_t i = 0; i < n; ++i) {
      ps[i] = {cons[i].fd, POLLIN, 0};
    }
    ::poll(ps.data(), ps.size(), 20);
    auto now = clk::now();
    size_t active = 0;
    for (size_t i = 0; i < n; ++i) {
      auto& k = cons[i];
      if ((ps[i].revents & POLLIN) != 0) {
        uint8_t buf[2048];
        ssize_t got;
        while ((got = ::recv(k.fd, buf, sizeof buf, 0)) > 0) {
          if (k.c) {
            k.c->feed(buf, static_cast<size_t>(got), now);
          } else if (k.setup) {
            auto p = k.setup->feed(buf, static_cast<size_t>(got));
            if (p == session_setup::progress::next) {
              auto d = k.setup->packet();
              (void)::send(k.fd, d.data(), d.size(), 0);
              k.resend = now + 1s;
            } else if (p == session_setup::progress::established) {
              k.c.emplace(k.setup->take(), sol_options{}, now);
              k.setup.reset();
            } else if (p == session_setup::progress::failed) {
              k.setup.reset();
            }
          }
        }
      }
      if (k.setup && now > k.resend) {
        auto d = k.setup->packet();
        (void)::send(k.fd, d.data(), d.size(), 0);
        k.resend = now + 1s;
      }
      if (k.c) {
        k.c->tick(now);
        flush(k);
      }
      active += k.active ? 1 : 0;
    }
    if (!holding && (active == n || now > give_up)) {
      holding = true;
      r.established = active;
      r.setup_s = std::chrono::duration<double>(now - start).count();
      cpu0 = cpu_seconds();
      hold_end
        = now + std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(seconds));
    }
  }
  r.hold_cpu_s = cpu_seconds() - cpu0;
  r.rss_after = status_field("VmRSS");
  for (auto& k : cons) {
    r.bytes += k.bytes;
    r.with_bytes += k.bytes > 0 ? 1 : 0;
  }
  print("ours", n, r, seconds);
  std::printf("ours: sizeof(sol)=%zu bytes; buffers bounded by max_keystrokes=%zu and "
              "max_output=%zu\n",
              sizeof(sol), sol_default_max_keystrokes, sol_default_max_output);
  std::fflush(stdout);
  for (auto& k : cons) {
    if (k.c) {
      k.c->close(clk::now());
      flush(k);
    }
    ::close(k.fd);
  }
  return r;
}

// -- libipmiconsole ------------------------------------------------------------------

#ifdef CWS_HAVE_IPMICONSOLE
report run_lib(size_t n, unsigned short port0, double seconds) {
  report r;
  if (ipmiconsole_engine_init(0, std::getenv("SOL_HOLD_DEBUG") ? IPMICONSOLE_DEBUG_STDERR : 0)
      < 0) {
    std::perror("ipmiconsole_engine_init");
    std::exit(1);
  }
  r.rss_before = status_field("VmRSS");
  char user[] = "admin";
  char pass[] = "password";
  ipmiconsole_ipmi_config ipmi{};
  ipmi.username = user;
  ipmi.password = pass;
  ipmi.privilege_level = IPMICONSOLE_PRIVILEGE_ADMIN;
  ipmi.cipher_suite_id = 3;
  // ipmi_sim needs these (shared/notes/consoles.md 1.5): without the channel payload skip
  // it crashes
  ipmi.workaround_flags = IPMICONSOLE_WORKAROUND_OPEN_SESSION_PRIVILEGE
                          | IPMICONSOLE_WORKAROUND_SKIP_CHANNEL_PAYLOAD_SUPPORT
                          | IPMICONSOLE_WORKAROUND_IGNORE_SOL_PAYLOAD_SIZE;
  ipmiconsole_protocol_config proto{};
  proto.session_timeout_len = -1;
  proto.retransmission_timeout_len = -1;
  proto.retransmission_backoff_count = -1;
  proto.keepalive_timeout_len = -1;
  proto.retransmission_keepalive_timeout_len = -1;
  proto.acceptable_packet_errors_count = -1;
  proto.maximum_retransmission_count = -1;
  ipmiconsole_engine_config eng{};
  eng.debug_flags = std::getenv("SOL_HOLD_DEBUG") ? IPMICONSOLE_DEBUG_STDERR : 0;
  std::vector<ipmiconsole_ctx_t> ctx(n);
  auto start = clk::now();
  for (size_t i = 0; i < n; ++i) {
    std::string host
      = port0 == 623 ? bmc_host(i, port0) : bmc_host(i, port0) + ":" + std::to_string(port0 + i);
    ctx[i] = ipmiconsole_ctx_create(host.c_str(), &ipmi, &proto, &eng);
    if (ctx[i] == nullptr) {
      std::fprintf(stderr, "console %zu: %s\n", i, std::strerror(errno));
    } else if (ipmiconsole_engine_submit(ctx[i], nullptr, nullptr) < 0) {
      std::fprintf(stderr, "console %zu: %s\n", i, ipmiconsole_ctx_errormsg(ctx[i]));
    }
  }
  std::vector<unsigned long long> bytes(n);
  auto drain = [&] {
    std::vector<pollfd> ps;
    std::vector<size_t> which;
    for (size_t i = 0; i < n; ++i) {
      if (ctx[i] != nullptr
          && ipmiconsole_ctx_status(ctx[i]) == IPMICONSOLE_CTX_STATUS_SOL_ESTABLISHED) {
        ps.push_back({ipmiconsole_ctx_fd(ctx[i]), POLLIN, 0});
        which.push_back(i);
      }
    }
    ::poll(ps.data(), ps.size(), 20);
    for (size_t j = 0; j < ps.size(); ++j) {
      if ((ps[j].revents & POLLIN) != 0) {
        char buf[4096];
        auto got = ::read(ps[j].fd, buf, sizeof buf);
        if (got > 0) {
          bytes[which[j]] += static_cast<unsigned long long>(got);
        }
      }
    }
    return ps.size();
  };
  auto give_up = start + 30s;
  size_t up = 0;
  while ((up = drain()) < n && clk::now() < give_up) {
  }
  r.established = up;
  r.setup_s = std::chrono::duration<double>(clk::now() - start).count();
  double cpu0 = cpu_seconds();
  auto end = clk::now()
             + std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(seconds));
  while (clk::now() < end) {
    drain();
  }
  r.hold_cpu_s = cpu_seconds() - cpu0;
  r.rss_after = status_field("VmRSS");
  for (auto b : bytes) {
    r.bytes += b;
    r.with_bytes += b > 0 ? 1 : 0;
  }
  print("libipmiconsole", n, r, seconds);
  std::fflush(stdout);
  for (auto* c : ctx) {
    if (c != nullptr) {
      ipmiconsole_ctx_destroy(c);
    }
  }
  ipmiconsole_engine_teardown(1);
  return r;
}
#endif

} // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: cws-sol-hold ours|libipmiconsole N PORT0 SECONDS\n");
    return 2;
  }
  std::string mode = argv[1];
  size_t n = std::strtoul(argv[2], nullptr, 10);
  auto port0 = static_cast<unsigned short>(std::atoi(argv[3]));
  double seconds = std::atof(argv[4]);
  if (mode == "ours") {
    run_ours(n, port0, seconds);
    return 0;
  }
#ifdef CWS_HAVE_IPMICONSOLE
  if (mode == "libipmiconsole") {
    run_lib(n, port0, seconds);
    return 0;
  }
#endif
  std::fprintf(stderr, "cws-sol-hold: unknown or unavailable mode %s\n", mode.c_str());
  return 2;
}
