#pragma once

#include <memory>
#include <vector>

#include "http/beast.hpp"
#include "http/session.hpp"

namespace cws::http {

/// Accepts connections and starts a session for each, within `max_connections`.
class listener : public std::enable_shared_from_this<listener> {
 public:
  /// Binds and listens on `endpoint`, accepting on the first of `iocs`; the sessions are spread
  /// over all of them in turn.
  /// @throws boost::system::system_error when it cannot.
  listener(std::vector<net::io_context*> iocs, std::shared_ptr<ssl::context> tls,
           tcp::endpoint endpoint, std::shared_ptr<session_context> ctx);

  /// Starts accepting.
  void run();

  /// Stops accepting (sessions in progress go on).
  void stop();

  /// New connections use `tls` from now on (a reloaded certificate); a session keeps the
  /// context it began with (OpenSSL counts its references).
  void set_tls(std::shared_ptr<ssl::context> tls);

  /// The bound endpoint (the port, if 0 was asked for).
  tcp::endpoint local_endpoint() const;

 private:
  void do_accept();
  void on_accept(beast::error_code ec, tcp_socket socket);

  std::vector<net::io_context*> iocs_;
  size_t next_ = 0;
  std::shared_ptr<ssl::context> tls_;
  net::basic_socket_acceptor<tcp, io_executor> acceptor_;
  std::shared_ptr<session_context> ctx_;
};

} // namespace cws::http
