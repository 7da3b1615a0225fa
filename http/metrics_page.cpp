#include "http/metrics_page.hpp"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <lmdb.h>
#include <unistd.h>

#include <chrono>
#include <limits>
#include <string_view>

#include "api/service_metrics.hpp"
#include "http/resources.hpp"
#include "ssh/engine.hpp"
#include "store/database.hpp"

namespace cws::http {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

using labels = std::vector<ClientMetric::Label>;

/// The families of one page, added to in order.
class page {
 public:
  MetricFamily& family(const char* name, const char* help, MetricType type) {
    families_.push_back({name, help, type, {}});
    return families_.back();
  }

  void counter(const char* name, const char* help, double value, labels l = {}) {
    add(family(name, help, MetricType::Counter), value, std::move(l));
  }

  void gauge(const char* name, const char* help, double value, labels l = {}) {
    add(family(name, help, MetricType::Gauge), value, std::move(l));
  }

  /// Adds one sample to the last family.
  static void add(MetricFamily& f, double value, labels l) {
    ClientMetric m;
    m.label = std::move(l);
    (f.type == MetricType::Counter ? m.counter.value : m.gauge.value) = value;
    f.metric.push_back(std::move(m));
  }

  static void add(MetricFamily& f, const base::histogram& h, labels l) {
    auto snap = h.read();
    ClientMetric m;
    m.label = std::move(l);
    for (size_t i = 0; i < snap.bounds.size(); ++i) {
      m.histogram.bucket.push_back({snap.cumulative[i], snap.bounds[i]});
    }
    m.histogram.bucket.push_back({snap.cumulative.back(), std::numeric_limits<double>::infinity()});
    m.histogram.sample_count = snap.cumulative.back();
    m.histogram.sample_sum = snap.sum;
    f.metric.push_back(std::move(m));
  }

  std::string text() const {
    return prometheus::TextSerializer{}.Serialize(families_);
  }

 private:
  std::vector<MetricFamily> families_;
};

std::string route_label(size_t route) {
  if (route < routes().size()) {
    return routes()[route].path;
  }
  return route == base_route() ? "/" : "other";
}

void http_metrics(page& p, const monitor& mon, size_t connections) {
  auto& requests = p.family("clusterws_http_requests_total",
                            "HTTP requests answered, by route (path template), method and status",
                            MetricType::Counter);
  for (size_t r = 0; r < mon.route_count(); ++r) {
    for (size_t m = 0; m <= monitor::methods.size(); ++m) {
      for (size_t s = 0; s <= monitor::statuses.size(); ++s) {
        auto n = mon.requests(r, m, s);
        if (n == 0) {
          continue; // (a series appears with its first request)
        }
        page::add(
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
                           MetricType::Histogram);
  for (size_t r = 0; r < mon.route_count(); ++r) {
    if (mon.latency(r).read().cumulative.back() > 0) {
      page::add(latency, mon.latency(r), {{"route", route_label(r)}});
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
                       "Connections whose TLS handshake failed, by reason", MetricType::Counter);
  const std::pair<monitor::tls_failure, const char*> reasons[]
    = {{monitor::tls_failure::plain_http, "plain_http"},
       {monitor::tls_failure::timeout, "timeout"},
       {monitor::tls_failure::handshake, "handshake"}};
  for (const auto& [why, name] : reasons) {
    page::add(tls, static_cast<double>(mon.tls_failures(why)), {{"reason", name}});
  }
}

void service_metrics(page& p, const api::service_metrics& s) {
  p.counter("clusterws_auth_failures_total",
            "Requests whose credentials were refused (throttled guesses included)",
            static_cast<double>(s.auth_failures.value()));
  p.counter("clusterws_auth_throttled_total",
            "Password guesses refused without a check (login backoff)",
            static_cast<double>(s.auth_throttled.value()));
  p.counter("clusterws_auth_hash_checks_total", "Password hashes computed",
            static_cast<double>(s.hash_checks.value()));
  p.counter("clusterws_auth_cache_hits_total", "Passwords accepted from the cache without a hash",
            static_cast<double>(s.auth_cache_hits.value()));
  p.counter("clusterws_policy_expansions_total",
            "Noderanges expanded for policy rows with a noderange",
            static_cast<double>(s.policy_expansions.value()));
  p.counter("clusterws_store_commits_total", "Write transactions committed (one per batch)",
            static_cast<double>(s.commits.value()));
  p.counter("clusterws_store_commit_failures_total",
            "Write transactions that failed to commit (none of their writes was written)",
            static_cast<double>(s.commit_failures.value()));
  page::add(p.family("clusterws_store_batch_writes", "Writes per committed transaction",
                     MetricType::Histogram),
            s.batch_writes, {});
  page::add(p.family("clusterws_store_commit_duration_seconds",
                     "Time of a committed transaction, its fsync included", MetricType::Histogram),
            s.commit_seconds, {});
  p.gauge("clusterws_fanout_nodes_in_flight", "Nodes of running fan-out calls not finished yet",
          static_cast<double>(s.nodes_in_flight.value()));
  auto& nodes
    = p.family("clusterws_fanout_nodes_total",
               "Nodes finished by fan-out calls (nodeshell), by result", MetricType::Counter);
  page::add(nodes, static_cast<double>(s.nodes_ok.value()), {{"result", "ok"}});
  page::add(nodes, static_cast<double>(s.nodes_nonzero.value()), {{"result", "nonzero"}});
  page::add(nodes, static_cast<double>(s.nodes_error.value()), {{"result", "error"}});
}

void lmdb_metrics(page& p, const store::database& db) {
  MDB_env* env = db.env().handle();
  MDB_envinfo info{};
  MDB_stat stat{};
  if (mdb_env_info(env, &info) != 0 || mdb_env_stat(env, &stat) != 0) {
    return;
  }
  p.gauge("clusterws_lmdb_map_size_bytes", "Size of the LMDB map (grows by doubling)",
          static_cast<double>(info.me_mapsize));
  p.gauge("clusterws_lmdb_map_used_bytes", "Bytes of the LMDB map in use (pages up to the last)",
          static_cast<double>((info.me_last_pgno + 1) * stat.ms_psize));
  // mdb_reader_list writes one line per reader slot (pid, thread, txnid; '-' when idle)
  int active = 0;
  mdb_reader_list(
    env,
    [](const char* line, void* ctx) -> int {
      // a slot holding a snapshot ends with its transaction id; the header, idle slots ('-')
      // and "(no active readers)" do not
      std::string_view l{line};
      while (!l.empty() && (l.back() == '\n' || l.back() == ' ')) {
        l.remove_suffix(1);
      }
      auto last = l.substr(l.find_last_of(' ') + 1);
      if (!last.empty() && last.find_first_not_of("0123456789") == std::string_view::npos) {
        ++*static_cast<int*>(ctx);
      }
      return 0;
    },
    &active);
  p.gauge("clusterws_lmdb_readers_active",
          "LMDB read snapshots open now, of every process on the database",
          static_cast<double>(active));
  p.gauge("clusterws_lmdb_reader_slots_used", "LMDB reader slots ever taken (of max_readers)",
          static_cast<double>(info.me_numreaders));
}

void ssh_metrics(page& p, const ssh::engine& ssh) {
  auto st = ssh.stats();
  p.gauge("clusterws_ssh_pool_connections", "Authenticated SSH connections pooled now",
          static_cast<double>(st.pooled));
  p.counter("clusterws_ssh_pool_hits_total", "Node commands run on a pooled connection",
            static_cast<double>(st.reuses));
  p.counter("clusterws_ssh_connects_total", "New SSH connections (logins)",
            static_cast<double>(st.connects));
}

} // namespace

std::string metrics_page(const monitor& http, size_t connections, const metrics_sources& src) {
  page p;
  p.gauge(
    "clusterws_start_time_seconds", "When the daemon started (Unix time)",
    static_cast<double>(
      std::chrono::duration_cast<std::chrono::seconds>(http.started.time_since_epoch()).count()));
  if (auto expiry = http.certificate_expiry.load(); expiry > 0) {
    p.gauge("clusterws_tls_certificate_expiry_seconds",
            "When the server certificate in use expires (Unix time)", static_cast<double>(expiry));
  }
  http_metrics(p, http, connections);
  if (src.service) {
    service_metrics(p, *src.service);
  }
  if (src.db) {
    lmdb_metrics(p, *src.db);
  }
  if (src.ssh) {
    ssh_metrics(p, *src.ssh);
  }
  return p.text();
}

} // namespace cws::http
