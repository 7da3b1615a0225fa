// The write load of bench/writes.sh: N node creates with PUT over C keep-alive TLS connections,
// each with one request in flight and the next sent only after its reply. Like wrk, one thread
// drives every connection from an event loop: a thread per connection would spend the CPU it
// shares with the daemon on waking up (twice the CPU per write, measured).
// Prints "requests/s <rate> errors <n>"; the rate counts from the first request (connections and
// TLS handshakes are set up before).
// With METHOD GET, the same connections read the nodes PREFIX0..PREFIX<N-1> instead (made by
// an earlier PUT run): the service's rate for the same client with no write at all, which no
// durable write can exceed.
// Usage: cws-put-load PORT CA PASSWORD N CONNS PREFIX [PUT|GET]

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "tls_client.hpp"

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;

/// What the connections share: the next node to create and the counts.
struct load {
  std::string password;
  std::string prefix;
  long n = 0;
  bool read = false; ///< GET instead of PUT
  long next = 0;
  long errors = 0;
};

/// One keep-alive connection: PUT, wait for the reply, PUT the next node, until none is left.
class connection : public std::enable_shared_from_this<connection> {
 public:
  connection(net::io_context& ioc, ssl::context& tls, load& l) : stream_(ioc, tls), load_(l) {
  }

  void connect(const net::ip::tcp::endpoint& ep) {
    cws::bench::connect_tls(stream_, ep);
  }

  void send_next() {
    long i = load_.next++;
    if (i >= load_.n) {
      return; // the connection closes when the last reference goes
    }
    req_ = {load_.read ? bhttp::verb::get : bhttp::verb::put,
            "/clusterws/nodes/" + load_.prefix + std::to_string(i)
              + "?userName=root&userPW=" + load_.password,
            11};
    req_.set(bhttp::field::host, "127.0.0.1");
    if (!load_.read) {
      req_.set(bhttp::field::content_type, "application/json");
      req_.body() = R"({"groups":"bench","mgt":"kvm"})";
    }
    req_.prepare_payload();
    bhttp::async_write(stream_, req_, [self = shared_from_this()](beast::error_code ec, size_t) {
      ec ? self->fail() : self->read_reply();
    });
  }

 private:
  void read_reply() {
    res_ = {};
    bhttp::async_read(stream_, buffer_, res_,
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) {
                          return self->fail();
                        }
                        if (self->res_.result() != bhttp::status::ok) {
                          ++self->load_.errors;
                        }
                        self->send_next();
                      });
  }

  void fail() {
    // the request in flight counts as failed; the other connections take the nodes left
    // (those left when every connection is lost count as failed in main)
    ++load_.errors;
    std::fprintf(stderr, "cws-put-load: connection lost\n");
  }

  cws::bench::tls_stream stream_;
  load& load_;
  beast::flat_buffer buffer_;
  bhttp::request<bhttp::string_body> req_;
  bhttp::response<bhttp::string_body> res_;
};

} // namespace

int main(int argc, char** argv) {
  std::string method = argc == 8 ? argv[7] : "PUT";
  if ((argc != 7 && argc != 8) || (method != "PUT" && method != "GET")) {
    std::fprintf(stderr, "usage: cws-put-load PORT CA PASSWORD N CONNS PREFIX [PUT|GET]\n");
    return 2;
  }
  try {
    auto ep = cws::bench::local_endpoint(argv[1]);
    auto tls = cws::bench::client_context(argv[2]);
    load l{argv[3], argv[6], std::stol(argv[4])};
    l.read = method == "GET";
    int conns = std::stoi(argv[5]);
    net::io_context ioc{1};
    std::vector<std::shared_ptr<connection>> all;
    for (int c = 0; c < conns; ++c) {
      all.push_back(std::make_shared<connection>(ioc, tls, l));
      all.back()->connect(ep);
    }
    auto start = std::chrono::steady_clock::now();
    for (auto& c : all) {
      c->send_next();
    }
    all.clear(); // each connection now lives as long as its pending operation
    ioc.run();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    long unsent = l.n - std::min(l.next, l.n);
    std::printf("requests/s %.0f errors %ld\n", static_cast<double>(l.n - unsent) / s,
                l.errors + unsent);
    return l.errors + unsent == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cws-put-load: %s\n", e.what());
    return 1;
  }
}
