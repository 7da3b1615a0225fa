#include "http/listener.hpp"

#include <iostream>

namespace cws::http {

listener::listener(std::vector<net::io_context*> iocs, std::shared_ptr<ssl::context> tls,
                   tcp::endpoint endpoint, std::shared_ptr<session_context> ctx)
    : iocs_(std::move(iocs)), tls_(std::move(tls)), acceptor_(iocs_.front()->get_executor()),
      ctx_(std::move(ctx)) {
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(net::socket_base::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen(net::socket_base::max_listen_connections);
}

void listener::run() {
  do_accept();
}

void listener::stop() {
  net::post(acceptor_.get_executor(), [self = shared_from_this()] {
    beast::error_code ignored;
    self->acceptor_.close(ignored);
  });
}

void listener::set_tls(std::shared_ptr<ssl::context> tls) {
  net::post(acceptor_.get_executor(), [self = shared_from_this(), tls = std::move(tls)]() mutable {
    self->tls_ = std::move(tls);
  });
}

tcp::endpoint listener::local_endpoint() const {
  return acceptor_.local_endpoint();
}

void listener::do_accept() {
  auto& ioc = *iocs_[next_++ % iocs_.size()];
  acceptor_.async_accept(ioc.get_executor(),
                         beast::bind_front_handler(&listener::on_accept, shared_from_this()));
}

void listener::on_accept(beast::error_code ec, tcp_socket socket) {
  if (ec == net::error::operation_aborted || !acceptor_.is_open()) {
    return;
  }
  if (!ec) {
    // the local socket's connections have a budget of their own
    auto open = ctx_->connections.load() - ctx_->local_connections.load();
    auto client = peer_address(socket);
    if (open >= ctx_->cfg.max_connections
        || !ctx_->peers.take(client, ctx_->cfg.max_connections_per_client)) {
      beast::error_code ignored;
      socket.close(ignored); // over the limit: refuse rather than degrade everyone
      ctx_->mon.refused_connections.add();
    } else {
      socket.set_option(tcp::no_delay(true), ec);
      auto s = std::make_shared<session>(tcp_stream{std::move(socket)}, *tls_, ctx_, client);
      s->count_peer(std::move(client));
      s->run();
    }
  }
  do_accept();
}

} // namespace cws::http
