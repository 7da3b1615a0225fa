#pragma once

// What the load clients of the benchmarks (cws-put-load, cws-events-load) share: the daemon's
// address on 127.0.0.1, a TLS context that trusts its CA only, and a blocking connect with
// the TLS handshake (done before the measured part begins).

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>

#include <string>

namespace cws::bench {

namespace beast = boost::beast;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;

using tls_stream = beast::ssl_stream<beast::tcp_stream>;

/// The daemon on 127.0.0.1 at `port` (decimal text).
inline net::ip::tcp::endpoint local_endpoint(const std::string& port) {
  return {net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(std::stoi(port))};
}

/// A TLS client context that trusts the certificates in `ca_file` only.
inline ssl::context client_context(const std::string& ca_file) {
  ssl::context tls{ssl::context::tls_client};
  tls.load_verify_file(ca_file);
  tls.set_verify_mode(ssl::verify_peer);
  return tls;
}

/// Connects `stream` to `ep` and completes the TLS handshake, the daemon's certificate
/// checked for the address (throws on failure).
inline void connect_tls(tls_stream& stream, const net::ip::tcp::endpoint& ep) {
  stream.set_verify_callback(ssl::host_name_verification(ep.address().to_string()));
  beast::get_lowest_layer(stream).connect(ep);
  stream.handshake(ssl::stream_base::client);
}

} // namespace cws::bench
