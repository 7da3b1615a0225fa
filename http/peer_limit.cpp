#include "http/peer_limit.hpp"

namespace cws::http {

bool peer_limit::take(const std::string& peer, size_t max) {
  std::lock_guard lock{mu_};
  auto& n = open_[peer];
  if (n >= max) {
    if (n == 0) {
      open_.erase(peer);
    }
    return false;
  }
  ++n;
  return true;
}

void peer_limit::give(const std::string& peer) {
  std::lock_guard lock{mu_};
  auto it = open_.find(peer);
  if (it != open_.end() && --it->second == 0) {
    open_.erase(it); // a peer with no connection costs nothing
  }
}

size_t peer_limit::count(const std::string& peer) const {
  std::lock_guard lock{mu_};
  auto it = open_.find(peer);
  return it == open_.end() ? 0 : it->second;
}

} // namespace cws::http
