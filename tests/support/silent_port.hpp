#pragma once

#include <string>
#include <vector>

namespace cws::test {

/// A TCP port on a loopback address that never answers a SYN: a listener whose accept queue
/// is full and never accepted from, so the kernel drops every new SYN, as a dead node's
/// network does. The "dead nodes" of the nodestat tests, with no outside address involved.
class silent_port {
 public:
  /// Listens on `address`, on `port` (0: any free one), and fills its queue.
  explicit silent_port(const std::string& address = "127.0.0.1", unsigned short port = 0);
  ~silent_port();

  silent_port(const silent_port&) = delete;
  silent_port& operator=(const silent_port&) = delete;

  unsigned short port() const noexcept {
    return port_;
  }

 private:
  int listener_ = -1;
  std::vector<int> fillers_;
  unsigned short port_ = 0;
};

} // namespace cws::test
