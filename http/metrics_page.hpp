#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/metric_registry.hpp"
#include "http/monitor.hpp"

namespace cws::http {

/// What the metrics page shows besides the HTTP layer's own monitor: the families the
/// daemon's components write (daemon/component.hpp). Null: none.
struct metrics_sources {
  std::shared_ptr<const base::metric_registry> registry;
};

/// The Prometheus text exposition (format 0.0.4, prometheus-cpp's TextSerializer) of every
/// measurement: the HTTP layer's (requests, latency, calls in flight, connections, TLS
/// failures), then every family of `src.registry` in the order written (authentication,
/// commits, LMDB, the engines, fan-out nodes). docs/observability.md lists them.
std::string metrics_page(const monitor& http, size_t connections, const metrics_sources& src);

} // namespace cws::http
