#pragma once

#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "actors/dispatcher.hpp"
#include "http/beast.hpp"
#include "http/listener.hpp"
#include "http/local_listener.hpp"
#include "http/server_config.hpp"
#include "http/session.hpp"

namespace cws::http {

/// Parses `ADDR:PORT` (`[v6]:PORT`); throws std::invalid_argument naming it otherwise.
tcp::endpoint parse_endpoint(const std::string& text);

/// The HTTPS server: TLS context, listeners and the sessions, on the io threads of the
/// actor system (http/io_scheduler).
class server {
 public:
  /// Serves on `iocs` (each run by one thread until after the server is gone: the io
  /// scheduler's). `svc` (and `audit`, if given) must outlive the server. The metrics page
  /// reads `sources` besides the server's own counters.
  server(server_config cfg, std::vector<net::io_context*> iocs, const actors::dispatcher& svc,
         audit_log* audit = nullptr, metrics_sources sources = {});
  ~server();

  /// Loads the certificate, binds and starts accepting, on the local socket too (when
  /// configured; one that cannot be made is a warning unless `local_socket_required`).
  /// Returns the bound endpoint.
  /// @throws std::exception when the certificate or the address is unusable.
  tcp::endpoint start();

  /// From now on SIGINT and SIGTERM stop the server and SIGHUP reloads (audit log,
  /// certificate, on_reload). Call it before the server is announced (port file, systemd
  /// READY): a signal sent then must find the handler, not the default action.
  void handle_signals();

  /// Waits until a stop() finished.
  void run();

  /// Stops accepting, lets requests in progress finish (a few seconds at most), then ends run().
  /// Sessions left (idle keep-alive ones, or calls past the drain) do nothing more: they
  /// close at their next event or go with the io threads.
  void stop();

  /// The first io thread's context (accepting, signals): for timers run beside the server,
  /// such as the systemd watchdog, which then stop with it.
  net::io_context& main_context() {
    return *iocs_.front();
  }

  /// `fn` runs on the first io thread at each SIGHUP, after the audit log and the
  /// certificate were loaded again (the daemon reads its settings again there).
  void on_reload(std::function<void()> fn) {
    on_reload_ = std::move(fn);
  }

  /// `fn` runs on the first io thread when a stop begins (a signal or stop()).
  void on_stop(std::function<void()> fn) {
    on_stop_ = std::move(fn);
  }

 private:
  void drain(int rounds);
  /// The end of a stop: every session stands still, then run() returns.
  void finish();
  /// Opens the local socket (server_config::local_socket).
  void start_local(const std::vector<net::io_context*>& iocs);
  void wait_for_signal();
  /// Every log_summary period: the summaries of bursts of failures (base/log_burst.hpp).
  void summarise_logs();

  /// One io_context per io thread (the first also accepts and handles signals).
  std::vector<net::io_context*> iocs_;
  std::promise<void> finished_;
  std::shared_future<void> finished_future_ = finished_.get_future().share();
  std::atomic<bool> stopped_{false};
  /// Loads the certificate and key again (SIGHUP); the old ones stay if they cannot be read.
  void reload_tls();
  /// After a certificate was loaded: warn if it expires soon; its expiry for the metrics.
  void cert_loaded();

  std::shared_ptr<ssl::context> tls_;
  /// Shared with the sessions, which may outlive the server (see stop()).
  std::shared_ptr<session_context> ctx_;
  std::shared_ptr<listener> listener_;
  std::shared_ptr<local_listener> local_;
  std::unique_ptr<net::signal_set> signals_;
  std::unique_ptr<steady_timer> drain_timer_;
  std::unique_ptr<steady_timer> summary_timer_;
  std::function<void()> on_stop_;
  std::function<void()> on_reload_;
};

/// Configures `tls` for a server: TLS 1.2 and 1.3 only, forward-secret AEAD ciphers, session
/// resumption, certificate and key from PEM files.
void configure_tls(ssl::context& tls, const std::filesystem::path& cert,
                   const std::filesystem::path& key);

/// Parses `ADDR:PORT` or `[V6ADDR]:PORT`.
/// @throws std::invalid_argument when malformed.
tcp::endpoint parse_endpoint(const std::string& text);

/// Days before its expiry from which the daemon warns about the server certificate (at start
/// and at each reload).
constexpr int cert_warning_days = 30;

/// Seconds until certificate `cert` (PEM, the first in the file) expires (negative once it
/// has); nullopt if it cannot be read.
std::optional<long long> seconds_until_expiry(const std::filesystem::path& cert);

/// Logs a warning when `cert` expires within cert_warning_days.
void warn_if_expiring(const std::filesystem::path& cert);

} // namespace cws::http
