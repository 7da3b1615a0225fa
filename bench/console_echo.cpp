// Keystroke echo round trip of bench/consoles.sh: one keystroke at a time into a console
// whose serial side echoes it, the time until it comes back, K times; prints
// "keys K p50-us A p99-us B max-us C lost L" and exits 0 when every keystroke came back.
//
//   cws-console-echo ws PORT CA PASSWORD NODE K
//       through the daemon's WebSocket console (GET /clusterws/nodes/NODE/console, TLS, the
//       cluster CA): a binary frame out, the echo in a binary frame
//   cws-console-echo pty K READY -- COMMAND [ARGS...]
//       through a terminal program on a pty (ipmitool ... sol activate; rcons NODE): waits
//       until its output holds READY, then for the echo of one unmeasured keystroke ('0',
//       20 s at most: READY may come before the program is attached, as rcons's help line
//       does), then types; ends it with "\r~." (ipmitool's escape) and, 2 s later, SIGTERM
//
// A keystroke not back within 2 s is lost (counted, and the next one is typed); after 10 lost
// in a row the rest are counted lost without typing them (a console that does not echo costs
// 20 s, not 2 s per key). Keys cycle through a-z: the serial side of the bench sends nothing
// else while this runs.

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include "tls_client.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
namespace net = boost::asio;
using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto key_limit = 2s;
constexpr long lost_in_a_row_limit = 10;

/// Prints the summary of `us` (round trips in microseconds) and returns the exit status.
int report(std::vector<double> us, long keys) {
  long lost = keys - static_cast<long>(us.size());
  std::sort(us.begin(), us.end());
  auto at = [&](double q) {
    return us.empty() ? 0.0 : us[std::min(us.size() - 1, static_cast<size_t>(q * us.size()))];
  };
  std::printf("keys %ld p50-us %.0f p99-us %.0f max-us %.0f lost %ld\n", keys, at(0.5), at(0.99),
              us.empty() ? 0.0 : us.back(), lost);
  return lost == 0 ? 0 : 1;
}

/// K keystrokes through `send`, each timed until `wait` (the received bytes so far) sees it.
std::vector<double> drive(long keys, const std::function<void(char)>& send,
                          const std::function<bool(char, clock_type::time_point)>& wait) {
  std::vector<double> us;
  long lost_in_a_row = 0;
  for (long i = 0; i < keys && lost_in_a_row < lost_in_a_row_limit; ++i) {
    char key = static_cast<char>('a' + i % 26);
    auto t0 = clock_type::now();
    send(key);
    if (wait(key, t0 + key_limit)) {
      us.push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
      lost_in_a_row = 0;
    } else if (++lost_in_a_row == lost_in_a_row_limit) {
      std::fprintf(stderr, "cws-console-echo: %ld keystrokes in a row not echoed: giving up\n",
                   lost_in_a_row);
    }
    std::this_thread::sleep_for(2ms); // one key at a time, as a typist
  }
  return us;
}

int run_ws(const std::string& port, const std::string& ca, const std::string& password,
           const std::string& node, long keys) {
  net::io_context ioc;
  auto tls = cws::bench::client_context(ca);
  websocket::stream<cws::bench::tls_stream> ws{ioc, tls};
  cws::bench::connect_tls(ws.next_layer(), cws::bench::local_endpoint(port));
  beast::get_lowest_layer(ws).socket().set_option(net::ip::tcp::no_delay(true));
  ws.handshake("127.0.0.1",
               "/clusterws/nodes/" + node + "/console?userName=root&userPW=" + password);
  beast::flat_buffer in;
  ws.read(in); // {"attached":"rw",...}
  auto attached = beast::buffers_to_string(in.data());
  if (attached.find(R"("attached":"rw")") == std::string::npos) {
    std::fprintf(stderr, "cws-console-echo: not the writer: %s\n", attached.c_str());
    return 2;
  }
  // the reads run on the io_context with a deadline per keystroke
  auto wait = [&](char key, clock_type::time_point until) {
    for (;;) {
      in.clear();
      bool done = false;
      beast::error_code ec;
      ws.async_read(in, [&](beast::error_code e, size_t) {
        ec = e;
        done = true;
      });
      ioc.restart();
      while (!done && clock_type::now() < until) {
        ioc.run_one_until(until);
      }
      if (!done) {
        // give the read up: the next keystroke starts a new one after this one ends
        beast::get_lowest_layer(ws).cancel();
        ioc.restart();
        while (!done) {
          ioc.run_one();
        }
        return false;
      }
      if (ec) {
        return false;
      }
      if (ws.got_binary() && beast::buffers_to_string(in.data()).find(key) != std::string::npos) {
        return true;
      }
    }
  };
  ws.binary(true);
  auto us = drive(
    keys, [&](char key) { ws.write(net::buffer(&key, 1)); }, wait);
  beast::error_code ec;
  ws.close(websocket::close_code::normal, ec);
  return report(us, keys);
}

int run_pty(long keys, const std::string& ready, char** argv) {
  int master = -1;
  termios raw{};
  cfmakeraw(&raw);
  pid_t pid = forkpty(&master, nullptr, &raw, nullptr);
  if (pid < 0) {
    std::perror("forkpty");
    return 2;
  }
  if (pid == 0) {
    execvp(argv[0], argv);
    std::perror(argv[0]);
    _exit(127);
  }
  std::string seen;
  auto read_until = [&](const std::function<bool()>& done, clock_type::time_point until) {
    while (!done()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock_type::now());
      if (left.count() <= 0) {
        return false;
      }
      pollfd p{master, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) != 1) {
        return false;
      }
      char buf[4096];
      auto n = ::read(master, buf, sizeof buf);
      if (n <= 0) {
        return false;
      }
      seen.append(buf, static_cast<size_t>(n));
    }
    return true;
  };
  int rc = 2;
  if (!read_until([&] { return seen.find(ready) != std::string::npos; }, clock_type::now() + 20s)) {
    std::fprintf(stderr, "cws-console-echo: no \"%s\" from %s; it said: %s\n", ready.c_str(),
                 argv[0], seen.c_str());
  } else {
    std::this_thread::sleep_for(200ms);
    read_until([] { return false; }, clock_type::now() + 50ms); // what came with the banner
    // one keystroke not measured: its echo says the program is attached and writes (rcons
    // shows READY before the daemon's answer, and keys typed before it wait for it)
    seen.clear();
    (void)!::write(master, "0", 1);
    if (!read_until([&] { return seen.find('0') != std::string::npos; }, clock_type::now() + 20s)) {
      std::fprintf(stderr, "cws-console-echo: no echo of a first keystroke from %s; it said: %s\n",
                   argv[0], seen.c_str());
    }
    read_until([] { return false; }, clock_type::now() + 50ms);
    auto us = drive(
      keys,
      [&](char key) {
        seen.clear();
        (void)!::write(master, &key, 1);
      },
      [&](char key, clock_type::time_point until) {
        return read_until([&] { return seen.find(key) != std::string::npos; }, until);
      });
    rc = report(us, keys);
  }
  (void)!::write(master, "\r~.", 3);
  for (int i = 0; i < 20; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) {
      pid = 0;
      break;
    }
    read_until([] { return false; }, clock_type::now() + 100ms);
  }
  if (pid != 0) {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
  }
  close(master);
  return rc;
}

} // namespace

int main(int argc, char** argv) {
  try {
    std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "ws" && argc == 7) {
      return run_ws(argv[2], argv[3], argv[4], argv[5], std::stol(argv[6]));
    }
    if (mode == "pty" && argc > 5 && std::string(argv[4]) == "--") {
      return run_pty(std::stol(argv[2]), argv[3], argv + 5);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cws-console-echo: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr, "usage: cws-console-echo ws PORT CA PASSWORD NODE K\n"
                       "       cws-console-echo pty K READY -- COMMAND [ARGS...]\n");
  return 2;
}
