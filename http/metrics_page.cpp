#include "http/metrics_page.hpp"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <chrono>
#include <limits>
#include <string_view>

#include "http/resources.hpp"

namespace cws::http {

namespace {

using base::metric_type;
using base::metric_writer;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

std::string route_label(size_t route) {
  if (route < routes().size()) {
    return routes()[route].path;
  }
  return route == base_route() ? "/" : "other";
}

void http_metrics(metric_writer& p, const monitor& mon, size_t connections) {
  auto& requests = p.family("clusterws_http_requests_total",
                            "HTTP requests answered, by route (path template), method and status",
                            metric_type::counter);
  for (size_t r = 0; r < mon.route_count(); ++r) {
    for (size_t m = 0; m <= monitor::methods.size(); ++m) {
      for (size_t s = 0; s <= monitor::statuses.size(); ++s) {
        auto n = mon.requests(r, m, s);
        if (n == 0) {
          continue; // (a series appears with its first request)
        }
        metric_writer::add(
          requests, static_cast<double>(n),
          {{"method", m < monitor::methods.size() ? std::string{monitor::methods[m]} : "other"},
           {"route", route_label(r)},
           {"status",
            s < monitor::statuses.size() ? std::to_string(monitor::statuses[s]) : "other"}});
      }
    }
  }
  auto& latency = p.family("clusterws_http_request_duration_seconds",
                           "Time from a request's arrival to the end of its answer, by route",
                           metric_type::histogram);
  for (size_t r = 0; r < mon.route_count(); ++r) {
    if (mon.latency(r).read().cumulative.back() > 0) {
      metric_writer::add(latency, mon.latency(r), {{"route", route_label(r)}});
    }
  }
  p.gauge("clusterws_http_calls_in_flight",
          "Requests being worked on in the actor system (policy, store, fan-out)",
          static_cast<double>(mon.in_flight.value()));
  p.gauge("clusterws_http_connections", "Open client connections",
          static_cast<double>(connections));
  p.counter(
    "clusterws_http_connections_refused_total",
    "Connections closed at once: over max_connections, the local socket's budget or a peer's share",
    static_cast<double>(mon.refused_connections.value()));
  p.counter("clusterws_audit_write_failures_total",
            "Audit log lines (changes, nodeshells, refusal summaries) that could not be written",
            static_cast<double>(mon.audit_failures.value()));
  auto& tls = p.family("clusterws_tls_handshake_failures_total",
                       "Connections whose TLS handshake failed, by reason", metric_type::counter);
  const std::pair<monitor::tls_failure, const char*> reasons[]
    = {{monitor::tls_failure::plain_http, "plain_http"},
       {monitor::tls_failure::timeout, "timeout"},
       {monitor::tls_failure::handshake, "handshake"}};
  for (const auto& [why, name] : reasons) {
    metric_writer::add(tls, static_cast<double>(mon.tls_failures(why)), {{"reason", name}});
  }
}

/// `f` in prometheus-cpp's model.
MetricFamily prometheus_family(const base::metric_family& f) {
  MetricFamily out;
  out.name = f.name;
  out.help = f.help;
  out.type = f.type == metric_type::counter ? MetricType::Counter
             : f.type == metric_type::gauge ? MetricType::Gauge
                                            : MetricType::Histogram;
  for (const auto& s : f.samples) {
    ClientMetric m;
    for (const auto& [name, value] : s.labels) {
      m.label.push_back({name, value});
    }
    if (f.type == metric_type::counter) {
      m.counter.value = s.value;
    } else if (f.type == metric_type::gauge) {
      m.gauge.value = s.value;
    } else {
      const auto& h = s.buckets;
      for (size_t i = 0; i < h.bounds.size(); ++i) {
        m.histogram.bucket.push_back({h.cumulative[i], h.bounds[i]});
      }
      m.histogram.bucket.push_back({h.cumulative.back(), std::numeric_limits<double>::infinity()});
      m.histogram.sample_count = h.cumulative.back();
      m.histogram.sample_sum = h.sum;
    }
    out.metric.push_back(std::move(m));
  }
  return out;
}

} // namespace

std::string metrics_page(const monitor& http, size_t connections, const metrics_sources& src) {
  metric_writer p;
  p.gauge(
    "clusterws_start_time_seconds", "When the daemon started (Unix time)",
    static_cast<double>(
      std::chrono::duration_cast<std::chrono::seconds>(http.started.time_since_epoch()).count()));
  if (auto expiry = http.certificate_expiry.load(); expiry > 0) {
    p.gauge("clusterws_tls_certificate_expiry_seconds",
            "When the server certificate in use expires (Unix time)", static_cast<double>(expiry));
  }
  http_metrics(p, http, connections);
  if (src.registry) {
    src.registry->write(p);
  }
  std::vector<MetricFamily> families;
  families.reserve(p.families().size());
  for (const auto& f : p.families()) {
    families.push_back(prometheus_family(f));
  }
  return prometheus::TextSerializer{}.Serialize(families);
}

} // namespace cws::http
