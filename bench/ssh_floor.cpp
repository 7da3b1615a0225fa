// The floor of what one node's sshd spends on a copy, measured with the same libssh2 client
// as the engine (bench/xdcp.sh): N connections one after another to 127.0.0.1:PORT, each
//   connect  handshake (curve25519) + public-key login, nothing else
//   sink     the same, then FILE's bytes into `exec cat >/dev/null` on an exec channel, with
//            at most LIMIT bytes not yet taken by sshd (its window adjusts) in flight
//   blast    the same without the limit: as fast as sshd's 2 MiB channel window allows
// Usage: cws-ssh-floor PORT KEY USER MODE FILE N [LIMIT]; exit status 1 on any failure.
// A connection that makes no progress for 30 s fails the run.

#include <libssh2.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace {

constexpr int stall_ms = 30000;

bool wait_socket(int fd, LIBSSH2_SESSION* s) {
  int dir = libssh2_session_block_directions(s);
  pollfd p{fd, 0, 0};
  p.events = static_cast<short>(((dir & LIBSSH2_SESSION_BLOCK_INBOUND) ? POLLIN : 0)
                                | ((dir & LIBSSH2_SESSION_BLOCK_OUTBOUND) ? POLLOUT : 0));
  if (p.events == 0) {
    p.events = POLLIN;
  }
  return ::poll(&p, 1, stall_ms) > 0;
}

/// Sends `data` on `c`, keeping at most `limit` bytes unacknowledged (0: no limit).
bool send_all(int fd, LIBSSH2_SESSION* s, LIBSSH2_CHANNEL* c, const std::string& data,
              unsigned long limit) {
  libssh2_session_set_blocking(s, 0);
  unsigned long initial = 0;
  unsigned long window0 = libssh2_channel_window_write_ex(c, &initial);
  for (size_t off = 0; off < data.size();) {
    unsigned long window = libssh2_channel_window_write_ex(c, &initial);
    // libssh2 1.10 does not report the initial window: the first reading is it
    unsigned long unacked = window0 > window ? window0 - window : 0;
    if (limit != 0 && unacked >= limit) {
      char sink[256];
      libssh2_channel_read(c, sink, sizeof sink); // takes in the window adjusts
      if (libssh2_channel_window_write_ex(c, &initial) == window && !wait_socket(fd, s)) {
        return false;
      }
      continue;
    }
    size_t n = data.size() - off;
    if (limit != 0) {
      n = std::min<size_t>(n, limit - unacked);
    }
    auto rc = libssh2_channel_write(c, data.data() + off, n);
    if (rc == LIBSSH2_ERROR_EAGAIN) {
      if (!wait_socket(fd, s)) {
        return false;
      }
      continue;
    }
    if (rc < 0) {
      return false;
    }
    off += static_cast<size_t>(rc);
  }
  libssh2_session_set_blocking(s, 1);
  return true;
}

bool one(int port, const char* key, const char* user, const std::string& mode,
         const std::string& data, unsigned long limit) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = false;
  LIBSSH2_SESSION* s = nullptr;
  LIBSSH2_CHANNEL* c = nullptr;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::perror("connect");
    ::close(fd);
    return false;
  }
  s = libssh2_session_init();
  libssh2_session_set_timeout(s, stall_ms);
  libssh2_session_method_pref(s, LIBSSH2_METHOD_KEX, "curve25519-sha256"); // as the engine
  if (libssh2_session_handshake(s, fd) != 0
      || libssh2_userauth_publickey_fromfile(s, user, nullptr, key, nullptr) != 0) {
    std::fprintf(stderr, "cws-ssh-floor: login failed\n");
  } else if (mode == "connect") {
    ok = true;
  } else if ((c = libssh2_channel_open_session(s)) == nullptr
             || libssh2_channel_exec(c, "exec cat >/dev/null") != 0) {
    std::fprintf(stderr, "cws-ssh-floor: cannot run cat\n");
  } else if (!send_all(fd, s, c, data, mode == "sink" ? limit : 0)) {
    std::fprintf(stderr, "cws-ssh-floor: the transfer failed or stalled\n");
  } else {
    libssh2_channel_send_eof(c);
    libssh2_channel_wait_eof(c);
    libssh2_channel_close(c);
    libssh2_channel_wait_closed(c);
    ok = libssh2_channel_get_exit_status(c) == 0;
  }
  if (c != nullptr) {
    libssh2_channel_free(c);
  }
  libssh2_session_disconnect(s, "done");
  libssh2_session_free(s);
  ::close(fd);
  return ok;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: cws-ssh-floor PORT KEY USER connect|sink|blast FILE N [LIMIT]\n");
    return 2;
  }
  std::string mode = argv[4];
  std::ifstream in{argv[5], std::ios::binary};
  std::string data{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
  int n = std::atoi(argv[6]);
  unsigned long limit = argc > 7 ? std::strtoul(argv[7], nullptr, 10) : 256 * 1024;
  if (!in.is_open() || n < 1 || n > 100000
      || (mode != "connect" && mode != "sink" && mode != "blast")) {
    std::fprintf(stderr, "cws-ssh-floor: bad FILE, N (1..100000) or MODE\n");
    return 2;
  }
  libssh2_init(0);
  for (int i = 0; i < n; ++i) {
    if (!one(std::atoi(argv[1]), argv[2], argv[3], mode, data, limit)) {
      return 1;
    }
  }
  libssh2_exit();
  return 0;
}
