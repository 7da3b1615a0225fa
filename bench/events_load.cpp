// The subscribers of bench/events.sh: S clients of GET /clusterws/events (Server-Sent Events
// over TLS), all driven by one thread from an event loop (like cws-put-load: a thread per
// client would spend the CPU it shares with the daemon on waking up). Each checks that event
// ids only grow and no reset comes, and counts the nodes named PREFIX... created; it is
// complete when it has seen N of them. Prints "ready" once every stream's head arrived (the
// writer may begin), then "subscribers S complete C in-order O resets R cpu-us U" (U: its own
// CPU time) and exits 0 when every subscriber saw all N in order, 1 otherwise (or after
// TIMEOUT seconds).
// Usage: cws-events-load PORT CA PASSWORD S N PREFIX TIMEOUT

#include <sys/resource.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "tls_client.hpp"

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;

/// What the subscribers share: what to look for and the counts.
struct shared {
  std::string password;
  std::string created; ///< `"name":"PREFIX` of a created node's change
  long expect = 0;
  long streams = 0; ///< subscribers whose stream head arrived
  long complete = 0;
  long out_of_order = 0;
  long resets = 0;
  long total = 0;
  net::io_context* ioc = nullptr;
};

/// One subscriber: sends the request, then reads the chunked stream line by line.
class subscriber : public std::enable_shared_from_this<subscriber> {
 public:
  subscriber(net::io_context& ioc, ssl::context& tls, shared& s) : stream_(ioc, tls), s_(s) {
  }

  void connect(const net::ip::tcp::endpoint& ep) {
    cws::bench::connect_tls(stream_, ep);
    req_
      = {bhttp::verb::get, "/clusterws/events?types=node&userName=root&userPW=" + s_.password, 11};
    req_.set(bhttp::field::host, "127.0.0.1");
    bhttp::write(stream_, req_);
  }

  void start() {
    parser_.body_limit(boost::none);
    on_chunk_ = [this](std::uint64_t, beast::string_view body, beast::error_code&) {
      take({body.data(), body.size()});
      return body.size();
    };
    parser_.on_chunk_body(on_chunk_); // kept by reference
    bhttp::async_read_header(stream_, buffer_, parser_,
                             [self = shared_from_this()](beast::error_code ec, size_t) {
                               if (ec || self->parser_.get().result() != bhttp::status::ok) {
                                 std::fprintf(stderr, "cws-events-load: no stream\n");
                                 return;
                               }
                               if (++self->s_.streams == self->s_.total) {
                                 std::printf("ready\n");
                                 std::fflush(stdout);
                               }
                               self->read();
                             });
  }

 private:
  void read() {
    bhttp::async_read_some(stream_, buffer_, parser_,
                           [self = shared_from_this()](beast::error_code ec, size_t) {
                             if (!ec && !self->done_) {
                               self->read();
                             }
                           });
  }

  void take(std::string_view body) {
    line_.append(body);
    size_t from = 0;
    for (auto nl = line_.find('\n'); nl != std::string::npos; nl = line_.find('\n', from)) {
      line(std::string_view{line_}.substr(from, nl - from));
      from = nl + 1;
    }
    line_.erase(0, from);
  }

  void line(std::string_view l) {
    if (l.rfind("id: ", 0) == 0) {
      auto id = std::stoull(std::string{l.substr(4)});
      if (id <= last_id_) {
        if (s_.out_of_order++ == 0) {
          std::fprintf(stderr, "cws-events-load: id %llu after %llu\n", id, last_id_);
        }
      }
      last_id_ = id;
    } else if (l == "event: reset") {
      ++s_.resets;
    } else if (l.rfind("data: ", 0) == 0) {
      for (auto at = l.find(s_.created); at != std::string_view::npos;
           at = l.find(s_.created, at + 1)) {
        // the change kind follows the name in the same object
        auto end = l.find('}', at);
        if (l.substr(at, end - at).find("\"change\":\"created\"") != std::string_view::npos) {
          ++seen_;
        }
      }
      if (seen_ >= s_.expect && !done_) {
        done_ = true;
        if (++s_.complete == s_.total) {
          s_.ioc->stop();
        }
      }
    }
  }

  cws::bench::tls_stream stream_;
  shared& s_;
  beast::flat_buffer buffer_;
  bhttp::request<bhttp::empty_body> req_;
  std::function<size_t(std::uint64_t, beast::string_view, beast::error_code&)> on_chunk_;
  bhttp::response_parser<bhttp::empty_body> parser_;
  std::string line_;
  unsigned long long last_id_ = 0;
  long seen_ = 0;
  bool done_ = false;
};

} // namespace

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: cws-events-load PORT CA PASSWORD S N PREFIX TIMEOUT\n");
    return 2;
  }
  try {
    auto ep = cws::bench::local_endpoint(argv[1]);
    auto tls = cws::bench::client_context(argv[2]);
    net::io_context ioc{1};
    shared s;
    s.password = argv[3];
    s.total = std::stol(argv[4]);
    s.expect = std::stol(argv[5]);
    s.created = std::string{"\"name\":\""} + argv[6];
    s.ioc = &ioc;
    std::vector<std::shared_ptr<subscriber>> all;
    for (long c = 0; c < s.total; ++c) {
      all.push_back(std::make_shared<subscriber>(ioc, tls, s));
      all.back()->connect(ep);
    }
    for (auto& c : all) {
      c->start();
    }
    net::steady_timer limit{ioc, std::chrono::seconds{std::stol(argv[7])}};
    limit.async_wait([&](beast::error_code ec) {
      if (!ec) {
        ioc.stop();
      }
    });
    ioc.run();
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    auto us = [](const timeval& t) {
      return t.tv_sec * 1000000L + t.tv_usec;
    };
    std::printf("subscribers %ld complete %ld in-order %s resets %ld cpu-us %ld\n", s.total,
                s.complete, s.out_of_order == 0 ? "yes" : "no", s.resets,
                us(self.ru_utime) + us(self.ru_stime));
    return s.complete == s.total && s.out_of_order == 0 && s.resets == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cws-events-load: %s\n", e.what());
    return 1;
  }
}
