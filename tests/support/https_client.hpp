#pragma once

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace cws::test {

/// A reply as the tests see it.
struct reply {
  unsigned status = 0;
  std::string body;
  std::map<std::string, std::string> headers;
};

/// A blocking HTTPS/1.1 client that validates the server with the cluster CA (and the
/// certificate's name), keeping its connection alive between requests.
class https_client {
 public:
  https_client(const std::filesystem::path& ca, unsigned short port,
               std::string host = "127.0.0.1");
  ~https_client();

  /// Sends one request; reconnects if the server closed the connection.
  reply request(const std::string& method, const std::string& target, const std::string& body = {},
                const std::map<std::string, std::string>& headers = {});

  reply get(const std::string& target) {
    return request("GET", target);
  }

  /// Opens a fresh connection, writes `bytes` as they are (e.g. half a request) and waits up to
  /// `wait`: true if the server closed the connection meanwhile.
  bool closed_after_partial(const std::string& bytes, std::chrono::milliseconds wait);

  /// Opens a fresh connection, writes `bytes` as they are and returns everything the server
  /// sends until it closes the connection (or `wait` passes).
  std::string exchange(const std::string& bytes,
                       std::chrono::milliseconds wait = std::chrono::seconds(10));

  /// Connections opened so far.
  int connects() const noexcept {
    return connects_;
  }

  /// Opens a connection (TCP and TLS handshake) now, e.g. to hold it before any request.
  void connect();

 private:
  boost::asio::io_context ioc_;
  boost::asio::ssl::context tls_{boost::asio::ssl::context::tls_client};
  std::unique_ptr<boost::beast::ssl_stream<boost::beast::tcp_stream>> stream_;
  boost::beast::flat_buffer buffer_;
  unsigned short port_;
  std::string host_;
  int connects_ = 0;
};

} // namespace cws::test
