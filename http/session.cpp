#include "http/session.ipp"

namespace cws::http {

std::string peer_address(const tcp_socket& socket) {
  beast::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  if (ec) {
    return {};
  }
  auto addr = ep.address();
  if (addr.is_v6() && addr.to_v6().is_v4_mapped()) {
    addr = addr.to_v6().to_v4();
  }
  return addr.to_string();
}

template class basic_session<tcp_stream>;

} // namespace cws::http
