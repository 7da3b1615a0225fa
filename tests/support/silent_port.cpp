#include "silent_port.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

namespace cws::test {

silent_port::silent_port(const std::string& address, unsigned short port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0
      || ::listen(listener_, 0) != 0) {
    throw std::runtime_error("silent_port: " + address + ": " + std::strerror(errno));
  }
  socklen_t len = sizeof a;
  getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  // connect until a connect is no longer accepted into the queue (bounded: a backlog of 0
  // holds one connection)
  for (int i = 0; i < 16; ++i) {
    int c = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a);
    pollfd p{c, POLLOUT, 0};
    if (::poll(&p, 1, 200) != 1) {
      ::close(c); // its SYN was dropped: the queue is full
      return;
    }
    fillers_.push_back(c);
  }
  throw std::runtime_error("silent_port: the accept queue never filled");
}

silent_port::~silent_port() {
  for (int c : fillers_) {
    ::close(c);
  }
  ::close(listener_);
}

} // namespace cws::test
