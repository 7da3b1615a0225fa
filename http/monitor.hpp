#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/log_burst.hpp"
#include "base/metric.hpp"

namespace cws::http {

/// What the HTTP layer reports: counters for the metrics page (http/metrics_page.hpp) and
/// the log lines of its failures. Counting a request is a few relaxed atomic adds: no lock,
/// no allocation on the request path.
class monitor {
 public:
  /// The methods and statuses requests are counted by; anything else counts as "other".
  static constexpr std::array<std::string_view, 4> methods{"GET", "PUT", "POST", "DELETE"};
  static constexpr std::array<unsigned, 12> statuses{200, 201, 400, 401, 403, 404,
                                                     405, 413, 431, 500, 501, 503};

  /// Why a connection ended before its TLS handshake finished.
  enum class tls_failure : uint8_t {
    plain_http, ///< plain HTTP on the HTTPS port (answered 400)
    timeout,    ///< no handshake within handshake_timeout
    handshake,  ///< the handshake failed (protocol, cipher, certificate, reset)
  };
  static constexpr size_t tls_failure_count = 3;

  monitor();

  /// A request of `method` on `route` (routed::route) answered `status` after `elapsed`.
  void answered(size_t route, std::string_view method, unsigned status,
                std::chrono::steady_clock::duration elapsed) noexcept;

  /// A TLS handshake failed: counted, and logged (bursts summarised).
  void tls_failed(tls_failure why, std::string_view client, std::string_view detail);

  /// A request was answered 503: logged (bursts summarised). `path` has no query.
  void unavailable(std::string_view method, std::string_view path, std::string_view why);

  // -- reading (the metrics page) -------------------------------------------------

  /// Requests of route `route`, method index `m` (methods.size(): other), status index `s`
  /// (statuses.size(): other).
  uint64_t requests(size_t route, size_t m, size_t s) const noexcept;

  /// The latency histogram of route `route`.
  const base::histogram& latency(size_t route) const noexcept;

  uint64_t tls_failures(tls_failure why) const noexcept;

  /// Routes counted: the resource table's rows, the base path, the rest (resources.hpp).
  size_t route_count() const noexcept {
    return routes_;
  }

  /// Calls in the actor system now (authorizing, reading, writing, running nodes).
  base::gauge in_flight;
  /// Connections closed at once: over max_connections, the local budget or a peer's share.
  base::counter refused_connections;
  /// Audit log lines (changes, nodeshells, refusal summaries) that could not be written.
  base::counter audit_failures;
  /// When the service started.
  const std::chrono::system_clock::time_point started = std::chrono::system_clock::now();
  /// When the server certificate in use expires (Unix time; 0: unknown). Set at start.
  std::atomic<int64_t> certificate_expiry{0};

 private:
  static constexpr size_t method_slots = methods.size() + 1;
  static constexpr size_t status_slots = statuses.size() + 1;
  size_t routes_;
  std::unique_ptr<base::counter[]> requests_;
  std::vector<std::unique_ptr<base::histogram>> latency_;
  std::array<base::counter, tls_failure_count> tls_failures_;
  base::log_burst tls_log_{base::log_level::warning, "TLS handshake failed"};
  base::log_burst unavailable_log_{base::log_level::error, "answered 503"};
};

} // namespace cws::http
