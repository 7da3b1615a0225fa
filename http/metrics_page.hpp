#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "http/monitor.hpp"

namespace cws::api {
struct service_metrics;
} // namespace cws::api

namespace cws::ssh {
class engine;
} // namespace cws::ssh

namespace cws::store {
class database;
} // namespace cws::store

namespace cws::http {

/// What the metrics page reads besides the HTTP layer's own monitor; any may be null (then
/// its metrics are left out).
struct metrics_sources {
  std::shared_ptr<const api::service_metrics> service;
  std::shared_ptr<const store::database> db;
  std::shared_ptr<const ssh::engine> ssh;
};

/// The Prometheus text exposition (format 0.0.4, prometheus-cpp's TextSerializer) of every
/// measurement: requests, latency, calls in flight, connections, TLS failures, authentication,
/// commits, LMDB, the SSH pool, fan-out nodes. docs/observability.md lists them.
std::string metrics_page(const monitor& http, size_t connections, const metrics_sources& src);

} // namespace cws::http
