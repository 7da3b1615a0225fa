#include "ssh/resolver.hpp"

#include <arpa/inet.h>
#include <map>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace cws::ssh {

void resolve_addresses(std::vector<job>& jobs) {
  std::map<std::string, std::string> cache;
  for (auto& j : jobs) {
    if (!j.address.empty()) {
      continue;
    }
    auto it = cache.find(j.node);
    if (it == cache.end()) {
      addrinfo hints{};
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* res = nullptr;
      std::string addr;
      if (getaddrinfo(j.node.c_str(), nullptr, &hints, &res) == 0 && res != nullptr) {
        char buf[INET6_ADDRSTRLEN] = {};
        const void* src
          = res->ai_family == AF_INET6
              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(res->ai_addr)->sin6_addr)
              : &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
        inet_ntop(res->ai_family, src, buf, sizeof buf);
        addr = buf;
        freeaddrinfo(res);
      }
      it = cache.emplace(j.node, addr).first;
    }
    j.address = it->second;
  }
}

} // namespace cws::ssh
