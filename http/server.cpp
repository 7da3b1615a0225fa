#include "http/server.hpp"

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <csignal>

#include "base/log.hpp"
#include "base/log_burst.hpp"

namespace cws::http {

void configure_tls(ssl::context& tls, const std::filesystem::path& cert,
                   const std::filesystem::path& key) {
  tls.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2
                  | ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1
                  | ssl::context::single_dh_use | SSL_OP_NO_RENEGOTIATION
                  | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX* ctx = tls.native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // Mozilla "intermediate": forward secrecy and AEAD only (TLS 1.3 suites are all fine)
  SSL_CTX_set_cipher_list(ctx, "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                               "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                               "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305");
  // resumption (session cache and tickets) spares curl-style clients a full handshake
  static const unsigned char sid[] = "clusterws";
  SSL_CTX_set_session_id_context(ctx, sid, sizeof sid - 1);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
  // an idle kept-alive connection gives its ~34 KiB of record buffers back (as nginx does)
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
  tls.use_certificate_chain_file(cert.string());
  tls.use_private_key_file(key.string(), ssl::context::pem);
}

std::optional<long long> seconds_until_expiry(const std::filesystem::path& cert) {
  std::unique_ptr<FILE, int (*)(FILE*)> f{std::fopen(cert.c_str(), "r"), std::fclose};
  if (!f) {
    return std::nullopt;
  }
  std::unique_ptr<X509, void (*)(X509*)> x{PEM_read_X509(f.get(), nullptr, nullptr, nullptr),
                                           X509_free};
  if (!x) {
    return std::nullopt;
  }
  int days = 0;
  int seconds = 0;
  if (ASN1_TIME_diff(&days, &seconds, nullptr, X509_get0_notAfter(x.get())) != 1) {
    return std::nullopt;
  }
  return static_cast<long long>(days) * 86400 + seconds;
}

void warn_if_expiring(const std::filesystem::path& cert) {
  auto left = seconds_until_expiry(cert);
  if (left && *left < cert_warning_days * 86400LL) {
    base::log(base::log_level::warning,
              "the server certificate " + cert.string()
                + (*left <= 0 ? " has expired"
                              : " expires in " + std::to_string((*left + 43200) / 86400) + " days")
                + "; renew it: clusterctl pki renew, then reload the daemon");
  }
}

tcp::endpoint parse_endpoint(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) {
    throw std::invalid_argument("listen address must be ADDR:PORT, not '" + text + "'");
  }
  auto host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  beast::error_code ec;
  auto addr = net::ip::make_address(host, ec);
  unsigned long port = 0;
  try {
    port = std::stoul(text.substr(colon + 1));
  } catch (const std::exception&) {
    ec = net::error::invalid_argument;
  }
  if (ec || port > 65535) {
    throw std::invalid_argument("listen address must be ADDR:PORT, not '" + text + "'");
  }
  return {addr, static_cast<unsigned short>(port)};
}

server::server(server_config cfg, std::vector<net::io_context*> iocs, const actors::dispatcher& svc,
               audit_log* audit, metrics_sources sources)
    : iocs_(std::move(iocs)), ctx_(std::make_shared<session_context>()) {
  ctx_->cfg = std::move(cfg);
  ctx_->svc = &svc;
  ctx_->audit = audit;
  ctx_->sources = std::move(sources);
  signals_ = std::make_unique<net::signal_set>(*iocs_.front());
}

server::~server() {
  stop(); // (when none was made: a start that failed; nothing to drain)
  run();  // the stop's last step runs on an io thread and uses the server
}

tcp::endpoint server::start() {
  tls_ = std::make_shared<ssl::context>(ssl::context::tls_server);
  configure_tls(*tls_, ctx_->cfg.cert, ctx_->cfg.key);
  cert_loaded();
  listener_ = std::make_shared<listener>(iocs_, tls_, parse_endpoint(ctx_->cfg.listen), ctx_);
  listener_->run();
  start_local(iocs_);
  summary_timer_ = std::make_unique<steady_timer>(iocs_.front()->get_executor());
  summarise_logs();
  return listener_->local_endpoint();
}

void server::start_local(const std::vector<net::io_context*>& iocs) {
  if (ctx_->cfg.local_socket.empty()) {
    return;
  }
  try {
    local_ = std::make_shared<local_listener>(iocs, ctx_->cfg.local_socket, ctx_);
  } catch (const std::exception& e) {
    if (ctx_->cfg.local_socket_required) {
      throw;
    }
    base::log(base::log_level::warning,
              std::string{e.what()} + "; non-root tools cannot reach this daemon");
    return;
  }
  local_->run();
  base::log(base::log_level::notice, "local tools connect to " + ctx_->cfg.local_socket.string());
}

void server::summarise_logs() {
  summary_timer_->expires_after(ctx_->cfg.log_summary);
  summary_timer_->async_wait([this](beast::error_code ec) {
    base::log_burst::flush_all(ctx_->cfg.log_summary);
    if (!ec) {
      summarise_logs();
    }
  });
}

void server::handle_signals() {
  signals_->add(SIGINT);
  signals_->add(SIGTERM);
  signals_->add(SIGHUP);
  wait_for_signal();
}

void server::run() {
  finished_future_.wait();
}

void server::wait_for_signal() {
  signals_->async_wait([this](beast::error_code ec, int sig) {
    if (ec) {
      return; // cancelled by stop()
    }
    if (sig != SIGHUP) {
      stop();
      return;
    }
    // logrotate's postrotate: continue the audit log in a new file
    if (ctx_->audit != nullptr) {
      if (ctx_->audit->reopen()) {
        base::log(base::log_level::notice, "audit log reopened");
      } else {
        base::log(base::log_level::error, "cannot reopen the audit log");
      }
    }
    reload_tls();
    if (on_reload_) {
      on_reload_();
    }
    wait_for_signal();
  });
}

void server::reload_tls() {
  try {
    auto next = std::make_shared<ssl::context>(ssl::context::tls_server);
    configure_tls(*next, ctx_->cfg.cert, ctx_->cfg.key);
    tls_ = next;
    if (listener_) {
      listener_->set_tls(std::move(next));
    }
    base::log(base::log_level::notice, "certificate " + ctx_->cfg.cert.string() + " loaded");
    cert_loaded();
  } catch (const std::exception& e) {
    base::log(base::log_level::error, "kept the certificate in use: cannot load "
                                        + ctx_->cfg.cert.string() + " with "
                                        + ctx_->cfg.key.string() + ": " + e.what());
  }
}

void server::cert_loaded() {
  warn_if_expiring(ctx_->cfg.cert);
  auto left = seconds_until_expiry(ctx_->cfg.cert);
  ctx_->mon.certificate_expiry = left ? std::chrono::duration_cast<std::chrono::seconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                            .count()
                                          + *left
                                      : 0;
}

void server::stop() {
  if (stopped_.exchange(true)) {
    return; // (a second signal)
  }
  net::post(*iocs_.front(), [this] {
    if (on_stop_) {
      on_stop_();
    }
    if (listener_) {
      listener_->stop();
    }
    if (local_) {
      local_->stop(); // (removes the socket: tools see "not running" at once)
    }
    beast::error_code ignored;
    signals_->cancel(ignored);
    if (summary_timer_) {
      summary_timer_->cancel(); // (its handler writes the last summaries)
    }
    ctx_->draining = true;
    ctx_->upgraded.stop_all(); // each WebSocket sends its close; the drain waits for those
    drain_timer_ = std::make_unique<steady_timer>(iocs_.front()->get_executor());
    drain(50);
  });
}

void server::finish() {
  // the io objects go on their own thread; sessions left see `stopped` from their next event
  // on and touch neither the actors nor the audit log again
  drain_timer_.reset();
  summary_timer_.reset();
  signals_.reset();
  listener_.reset();
  local_.reset();
  ctx_->stopped = true;
  // once every io thread ran a handler queued after the flag, none is still inside a session
  // handler that read it unset: then the actors and the audit log may go
  auto left = std::make_shared<std::atomic<size_t>>(iocs_.size());
  for (auto* ioc : iocs_) {
    net::post(*ioc, [this, left] {
      if (--*left == 0) {
        finished_.set_value();
      }
    });
  }
}

void server::drain(int rounds) {
  // requests in progress get up to 5 s; idle keep-alive connections are not waited for
  if (rounds == 0 || ctx_->connections.load() <= ctx_->idle.load()) {
    finish();
    return;
  }
  drain_timer_->expires_after(std::chrono::milliseconds(100));
  drain_timer_->async_wait([this, rounds](beast::error_code) { drain(rounds - 1); });
}

} // namespace cws::http
