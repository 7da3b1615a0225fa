#pragma once

#include <memory>

#include "http/beast.hpp"
#include "http/session.hpp"

namespace cws::http {

/// Accepts connections and starts a session for each, within `max_connections`.
class listener : public std::enable_shared_from_this<listener> {
 public:
  /// Binds and listens on `endpoint`.
  /// @throws boost::system::system_error when it cannot.
  listener(net::io_context& ioc, ssl::context& tls, tcp::endpoint endpoint, session_context& ctx);

  /// Starts accepting.
  void run();

  /// Stops accepting (sessions in progress go on).
  void stop();

  /// The bound endpoint (the port, if 0 was asked for).
  tcp::endpoint local_endpoint() const;

 private:
  void do_accept();
  void on_accept(beast::error_code ec, tcp::socket socket);

  net::io_context& ioc_;
  ssl::context& tls_;
  tcp::acceptor acceptor_;
  session_context& ctx_;
};

} // namespace cws::http
