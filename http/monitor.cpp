#include "http/monitor.hpp"

#include "http/resources.hpp"

namespace cws::http {

monitor::monitor() : routes_(no_route() + 1) {
  requests_.reset(new base::counter[routes_ * method_slots * status_slots]);
  for (size_t i = 0; i < routes_; ++i) {
    // seconds, observed in microseconds: 0.5 ms up to a minute
    latency_.push_back(std::make_unique<base::histogram>(
      std::initializer_list<uint64_t>{500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000,
                                      500000, 1000000, 2500000, 10000000, 60000000},
      1e-6));
  }
}

void monitor::answered(size_t route, std::string_view method, unsigned status,
                       std::chrono::steady_clock::duration elapsed) noexcept {
  if (route >= routes_) {
    route = routes_ - 1;
  }
  size_t m = 0;
  while (m < methods.size() && methods[m] != method) {
    ++m;
  }
  size_t s = 0;
  while (s < statuses.size() && statuses[s] != status) {
    ++s;
  }
  requests_[(route * method_slots + m) * status_slots + s].add();
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count();
  latency_[route]->observe(us > 0 ? static_cast<uint64_t>(us) : 0);
}

void monitor::tls_failed(tls_failure why, std::string_view client, std::string_view detail) {
  tls_failures_[static_cast<size_t>(why)].add();
  tls_log_.note(std::string{client} + ": " + std::string{detail});
}

void monitor::unavailable(std::string_view method, std::string_view path, std::string_view why) {
  unavailable_log_.note(std::string{method} + " " + std::string{path} + ": " + std::string{why});
}

uint64_t monitor::requests(size_t route, size_t m, size_t s) const noexcept {
  return requests_[(route * method_slots + m) * status_slots + s].value();
}

const base::histogram& monitor::latency(size_t route) const noexcept {
  return *latency_[route];
}

uint64_t monitor::tls_failures(tls_failure why) const noexcept {
  return tls_failures_[static_cast<size_t>(why)].value();
}

} // namespace cws::http
