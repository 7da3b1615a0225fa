#include "https_client.hpp"

#include <functional>

namespace cws::test {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;

https_client::https_client(const std::filesystem::path& ca, unsigned short port, std::string host)
    : port_(port), host_(std::move(host)) {
  tls_.load_verify_file(ca.string());
  tls_.set_verify_mode(ssl::verify_peer);
}

https_client::~https_client() = default;

void https_client::connect() {
  stream_ = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(ioc_, tls_);
  stream_->set_verify_callback(ssl::host_name_verification(host_));
  beast::get_lowest_layer(*stream_).expires_after(std::chrono::seconds(30));
  beast::get_lowest_layer(*stream_).connect(net::ip::tcp::endpoint{
    net::ip::make_address(host_ == "localhost" ? "127.0.0.1" : host_), port_});
  stream_->handshake(ssl::stream_base::client);
  buffer_.clear();
  ++connects_;
}

bool https_client::closed_after_partial(const std::string& bytes, std::chrono::milliseconds wait) {
  connect();
  net::write(*stream_, net::buffer(bytes));
  // asynchronous: Beast's timeouts do not apply to synchronous reads
  beast::get_lowest_layer(*stream_).expires_after(wait);
  char c;
  beast::error_code ec;
  stream_->async_read_some(net::buffer(&c, 1), [&ec](beast::error_code e, size_t) { ec = e; });
  ioc_.restart();
  ioc_.run();
  stream_.reset();
  return ec && ec != beast::error::timeout;
}

std::string https_client::exchange(const std::string& bytes, std::chrono::milliseconds wait) {
  connect();
  net::write(*stream_, net::buffer(bytes));
  beast::get_lowest_layer(*stream_).expires_after(wait);
  std::string got;
  char chunk[4096];
  std::function<void(beast::error_code, size_t)> on_read = [&](beast::error_code ec, size_t n) {
    got.append(chunk, n);
    if (!ec) {
      stream_->async_read_some(net::buffer(chunk), on_read);
    }
  };
  stream_->async_read_some(net::buffer(chunk), on_read);
  ioc_.restart();
  ioc_.run();
  stream_.reset();
  return got;
}

reply https_client::request(const std::string& method, const std::string& target,
                            const std::string& body,
                            const std::map<std::string, std::string>& headers) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!stream_) {
      connect();
    }
    bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
    if (req.method() == bhttp::verb::unknown) {
      req.method_string(method);
    }
    req.set(bhttp::field::host, host_);
    if (!body.empty()) {
      req.set(bhttp::field::content_type, "application/json");
    }
    for (const auto& [k, v] : headers) {
      req.set(k, v);
    }
    req.body() = body;
    req.prepare_payload();
    beast::error_code ec;
    beast::get_lowest_layer(*stream_).expires_after(std::chrono::seconds(60));
    bhttp::write(*stream_, req, ec);
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(1ULL << 30);
    if (!ec) {
      bhttp::read(*stream_, buffer_, parser, ec);
    }
    if (ec && attempt == 0) {
      stream_.reset(); // the server closed a kept-alive connection: try once more
      continue;
    }
    if (ec) {
      throw beast::system_error{ec};
    }
    auto res = parser.release();
    reply out;
    out.status = res.result_int();
    out.body = res.body();
    for (const auto& f : res) {
      out.headers[std::string{f.name_string()}] = std::string{f.value()};
    }
    if (!res.keep_alive()) {
      stream_.reset();
    }
    return out;
  }
  return {};
}

} // namespace cws::test
