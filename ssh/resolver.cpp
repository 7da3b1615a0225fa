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

resolver::resolver() : thread_([this] { loop(); }) {
  // nop
}

resolver::~resolver() {
  stop();
}

void resolver::add(std::vector<job>& jobs, done_fn done) {
  {
    std::lock_guard<std::mutex> guard{mu_};
    queue_.push_back({&jobs, std::move(done)});
  }
  cv_.notify_one();
}

void resolver::stop() {
  {
    std::lock_guard<std::mutex> guard{mu_};
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
  }
  queue_.clear();
}

void resolver::loop() {
  for (;;) {
    work w{};
    {
      std::unique_lock<std::mutex> lock{mu_};
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) {
        return;
      }
      w = std::move(queue_.front());
      queue_.pop_front();
    }
    resolve_addresses(*w.jobs);
    w.done();
  }
}

} // namespace cws::ssh
