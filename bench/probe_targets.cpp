// The "nodes" of bench/nodestat.sh, all on loopback: one listener on OPEN_ADDR that accepts
// and closes every connection at once (the live nodes' sshd, one per node on a real cluster),
// and on DEAD_ADDR a silent listener per PORT: its accept queue full and never accepted from,
// so every SYN is dropped, as a dead node's network does. Prints the open port, then
// `ready`; runs until killed.
// Usage: cws-probe-targets OPEN_ADDR DEAD_ADDR PORT...

#include <arpa/inet.h>
#include <cstdio>
#include <cstdlib>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace {

sockaddr_in address(const char* ip, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
    std::fprintf(stderr, "not an IPv4 address: %s\n", ip);
    std::exit(2);
  }
  return a;
}

int listener(sockaddr_in& a, int backlog) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(fd, backlog) != 0) {
    std::perror("listen");
    std::exit(1);
  }
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return fd;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: cws-probe-targets OPEN_ADDR DEAD_ADDR PORT...\n");
    return 2;
  }
  auto open_addr = address(argv[1], 0);
  int open_fd = listener(open_addr, 4096);
  std::vector<int> keep;
  for (int i = 3; i < argc; ++i) {
    auto a = address(argv[2], std::atoi(argv[i]));
    keep.push_back(listener(a, 0));
    // fill the queue: connect until a connect is no longer taken in (a backlog of 0 holds one)
    for (int n = 0; n < 16; ++n) {
      int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a);
      pollfd p{c, POLLOUT, 0};
      if (poll(&p, 1, 200) != 1) {
        close(c);
        break;
      }
      keep.push_back(c);
    }
  }
  std::printf("%d\nready\n", ntohs(open_addr.sin_port));
  std::fflush(stdout);
  for (;;) {
    int c = accept(open_fd, nullptr, nullptr);
    if (c >= 0) {
      close(c);
    }
  }
}
