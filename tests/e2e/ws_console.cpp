// cws-ws-console: a WebSocket console client the end-to-end tests can drive
// (tests/e2e/console_vm_test.sh). It attaches to GET /clusterws/nodes/{node}/console over TLS,
// prints the console's bytes on stdout (the server's JSON notices on stderr), waits until
// WAIT appears, types LINE and a carriage return, and exits 0 once EXPECT appears after it:
//
//   cws-ws-console PORT CA_FILE TARGET WAIT LINE EXPECT [SECONDS]
//
// Exit 1 when EXPECT did not come within SECONDS (default 30), 2 on a usage or connection
// error.

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;

int main(int argc, char** argv) {
  if (argc < 7) {
    std::cerr << "usage: cws-ws-console PORT CA_FILE TARGET WAIT LINE EXPECT [SECONDS]\n";
    return 2;
  }
  auto port = static_cast<unsigned short>(std::atoi(argv[1]));
  std::string ca = argv[2];
  std::string target = argv[3];
  std::string wait = argv[4];
  std::string line = std::string{argv[5]} + "\r";
  std::string expect = argv[6];
  int seconds = argc > 7 ? std::atoi(argv[7]) : 30;
  try {
    net::io_context ioc;
    ssl::context tls{ssl::context::tls_client};
    tls.load_verify_file(ca);
    tls.set_verify_mode(ssl::verify_peer);
    websocket::stream<beast::ssl_stream<beast::tcp_stream>> ws{ioc, tls};
    ws.next_layer().set_verify_callback(ssl::host_name_verification("127.0.0.1"));
    beast::get_lowest_layer(ws).connect(
      net::ip::tcp::endpoint{net::ip::make_address("127.0.0.1"), port});
    beast::get_lowest_layer(ws).socket().set_option(net::ip::tcp::no_delay(true));
    ws.next_layer().handshake(ssl::stream_base::client);
    ws.handshake("127.0.0.1", target);

    std::string seen;
    bool sent = false;
    size_t sent_at = 0;
    bool found = false;
    beast::flat_buffer buf;
    std::function<void()> next = [&] {
      ws.async_read(buf, [&](beast::error_code ec, size_t) {
        if (ec) {
          std::cerr << "cws-ws-console: " << ec.message() << "\n";
          ioc.stop();
          return;
        }
        auto text = beast::buffers_to_string(buf.data());
        buf.consume(buf.size());
        if (ws.got_binary()) {
          std::cout << text << std::flush;
          seen += text;
        } else {
          std::cerr << "cws-ws-console: " << text << "\n";
        }
        if (!sent && seen.find(wait) != std::string::npos) {
          sent = true;
          sent_at = seen.size();
          ws.binary(true);
          ws.async_write(net::buffer(line), [](beast::error_code, size_t) {});
        }
        if (sent && seen.find(expect, sent_at) != std::string::npos) {
          found = true;
          ioc.stop();
          return;
        }
        next();
      });
    };
    next();
    ioc.run_for(std::chrono::seconds(seconds));
    std::cout << "\n";
    if (!found) {
      std::cerr << "cws-ws-console: " << (sent ? "'" + expect + "'" : "'" + wait + "'")
                << " did not come within " << seconds << " s\n";
    }
    return found ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "cws-ws-console: " << e.what() << "\n";
    return 2;
  }
}
