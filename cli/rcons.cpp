// rcons: xCAT's console command with conserver's habits (docs/consoles.md, "rcons"). It opens
// GET /clusterws/nodes/{node}/console as a WebSocket over clusterwsd's local socket, or over
// HTTPS to a conserver-host (TLS verified against the cluster CA, userName/password as the API
// takes them); policy command `rcons` decides, for root as for anyone. It puts the terminal in
// raw mode and carries bytes both ways; `^Ec` escapes (cli/rcons_escape.hpp) leave, force,
// spy and send a break. One session type serves both transports (templated on the stream).

#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pwd.h>
#include <simdjson.h>
#include <termios.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <cerrno>
#include <csignal>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "api/settings.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/local_client.hpp"
#include "cli/rcons_escape.hpp"

namespace cws::cli {

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using local_stream = net::local::stream_protocol::socket;
using tls_stream = beast::ssl_stream<beast::tcp_stream>;

constexpr const char* usage_text
  = "Usage: rcons <singlenode> [conserver-host[:port]] [-f] [-s] [--replay BYTES]\n"
    "             [--user NAME] [--cacert FILE] [--home DIR]\n"
    "       rcons [-h|--help|-v|--version]\n"
    "Opens the serial console of one node, held by clusterwsd (docs/consoles.md).\n"
    "    -f   take the console over read-write (its writer goes read-only)\n"
    "    -s   spy: read-only\n"
    "    --replay BYTES  show the console's last BYTES first (default 4096, 0: none)\n"
    "    --user NAME     the API user over HTTPS (default: your login name)\n"
    "    --cacert FILE   the CA that signed the daemon's certificate (default: the\n"
    "                    cluster CA, pki/ca-cert.pem in the clusterws home)\n"
    "Escapes (control-E c, then): . leave, f force read-write, s spy, a attach read-write,\n"
    "l0 send a break, ? help. Without conserver-host (or this host without a port) rcons\n"
    "uses the daemon's local socket; otherwise HTTPS to host:port (default port: the\n"
    "`listen' setting's), with the password from CLUSTERWS_PASSWORD or asked for.\n";

constexpr uint64_t default_replay = 4096;

/// conserver's `^Ec?` list, cut to what rcons does.
constexpr const char* help_text
  = "[help]\r\n"
    " .       disconnect                     a       attach read/write\r\n"
    " f       force attach read/write        s       spy mode (read only)\r\n"
    " l?      break sequence list            l0      send break\r\n"
    " ?       print this message             <cr>    ignore/abort command\r\n"
    " \\ooo    send character by octal code\r\n";

/// conserver's commands that rcons does not have.
constexpr std::string_view conserver_only = ";bcdegiLmnoPpRruvwxz!|\x12";

/// The terminal in raw mode while this lives (nothing when `fd` is no terminal).
class raw_terminal {
 public:
  explicit raw_terminal(int fd) : fd_(fd) {
    if (::isatty(fd) != 1 || ::tcgetattr(fd, &saved_) != 0) {
      return;
    }
    termios raw = saved_;
    ::cfmakeraw(&raw);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    active_ = ::tcsetattr(fd, TCSADRAIN, &raw) == 0;
  }
  ~raw_terminal() {
    restore();
  }
  raw_terminal(const raw_terminal&) = delete;
  raw_terminal& operator=(const raw_terminal&) = delete;

  void restore() {
    if (active_) {
      ::tcsetattr(fd_, TCSADRAIN, &saved_);
      active_ = false;
    }
  }

 private:
  int fd_;
  termios saved_{};
  bool active_ = false;
};

/// Writes all of `text` to `fd` (the terminal), waiting while it is full: a terminal read on
/// the event loop is O_NONBLOCK while rcons runs, and stdout is often the same description.
void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    auto n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, -1);
      continue;
    }
    if (n <= 0) {
      return; // the terminal is gone: nothing to tell
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
}

std::string_view field(simdjson::dom::element e, const char* key) {
  std::string_view v;
  return e[key].get(v) == simdjson::SUCCESS ? v : std::string_view{};
}

/// The first message of an error body ({"error":"..."} or {"error":["..."]}), else the body.
std::string error_of(const std::string& body, unsigned status) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(body).get(doc) == simdjson::SUCCESS) {
    std::string_view one;
    simdjson::dom::array list;
    if (doc["error"].get(one) == simdjson::SUCCESS) {
      return std::string{one};
    }
    if (doc["error"].get(list) == simdjson::SUCCESS && list.size() > 0
        && list.at(0).get(one) == simdjson::SUCCESS) {
      return std::string{one};
    }
  }
  return body.empty() ? "clusterwsd refused the console (HTTP " + std::to_string(status) + ")."
                      : body;
}

/// What the stdin thread posts to while the session lives (it outlives the session: it
/// blocks in read(2) until the process ends).
struct stdin_link {
  std::mutex mu;
  net::io_context* ioc = nullptr;
  std::function<void(std::string)> typed;
};

/// One console session: the WebSocket, the keystrokes from stdin (a thread of its own: stdin
/// may be a terminal, a pipe or a file), the signals, all on one io_context. `Stream` is the
/// transport under the WebSocket (the local socket or TLS over TCP).
template<class Stream>
class console_session {
 public:
  console_session(net::io_context& ioc, websocket::stream<Stream>& ws, int out)
      : ioc_(ioc), ws_(ws), out_(out), signals_(ioc, SIGINT, SIGTERM, SIGHUP), timer_(ioc) {
    // nop
  }

  /// Runs until the user leaves, the console server lets go or the daemon goes; the exit
  /// status (0: left with ^Ec. or at the end of the input).
  int run(bool spy) {
    writer_ = false;
    spying_ = spy;
    signals_.async_wait([this](beast::error_code ec, int sig) {
      if (!ec) {
        status_ = 128 + sig;
        leave("");
      }
    });
    read();
    if (::isatty(STDIN_FILENO) == 1) {
      // a terminal is read on this loop (one thread woken per key, not two): waited on for
      // readability, then read(2). Asio makes the descriptor O_NONBLOCK for the wait, and the
      // open file description is shared with stdout (write_all waits out EAGAIN) and with the
      // shell after us: its flags are put back as they were when the session ends.
      int flags = ::fcntl(STDIN_FILENO, F_GETFL);
      int fd = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0);
      if (fd >= 0) {
        {
          net::posix::stream_descriptor tty{ioc_, fd};
          wait_terminal(tty);
          ioc_.run();
        }
        if (flags >= 0 && ::fcntl(STDIN_FILENO, F_GETFL) != flags) {
          ::fcntl(STDIN_FILENO, F_SETFL, flags);
        }
        return status_;
      }
    }
    // pipes and files: a thread of their own (a regular file is always "readable" to epoll,
    // which refuses it)
    auto link = std::make_shared<stdin_link>();
    link->ioc = &ioc_;
    link->typed = [this](std::string keys) {
      typed(keys);
    };
    std::thread([link] { read_stdin(link); }).detach();
    ioc_.run();
    std::lock_guard<std::mutex> lock{link->mu};
    link->ioc = nullptr; // the thread posts nothing more
    return status_;
  }

  /// The message for stderr once the terminal is restored ("" for none).
  const std::string& error() const {
    return error_;
  }

 private:
  void say(std::string_view line) {
    write_all(out_, line);
  }

  void read() {
    ws_.async_read(in_, [this](beast::error_code ec, size_t) {
      if (ec) {
        closed(ec);
        return;
      }
      auto data = beast::buffers_to_string(in_.data());
      in_.consume(in_.size());
      if (!leaving_) {
        if (ws_.got_binary()) {
          say(data);
        } else {
          text(data);
        }
      }
      read();
    });
  }

  /// The socket ended: why, in conserver's words where it has them.
  void closed(beast::error_code ec) {
    if (!leaving_) {
      // a close frame came (the daemon may end the socket before our answer to it: then
      // the error is the write's, the reason is still the daemon's)
      if (ec == websocket::error::closed || ws_.reason().code != websocket::close_code::none) {
        auto code = ws_.reason().code;
        if (code == websocket::close_code::going_away) {
          say("\r\n[-- Console server shutting down --]\r\n");
        } else if (error_.empty() && !told_end_) {
          say("\r\n[-- disconnected: " + std::string{ws_.reason().reason.c_str()} + " --]\r\n");
        }
      } else {
        error_ = "clusterwsd closed the connection (" + ec.message() + ").";
      }
      status_ = 1;
    }
    signals_.cancel();
    timer_.cancel();
    ioc_.stop();
  }

  /// A text frame: the attach's answer, a notice, a detach or an error.
  void text(const std::string& data) {
    simdjson::dom::element doc;
    if (parser_.parse(data).get(doc) != simdjson::SUCCESS) {
      return;
    }
    std::string_view mode;
    if (doc["attached"].get(mode) == simdjson::SUCCESS) {
      attached(mode == "rw", field(doc, "holder"), field(doc, "bumped"), field(doc, "state"));
    } else if (auto kind = field(doc, "notice"); !kind.empty()) {
      notice(kind, field(doc, "text"), field(doc, "holder"));
    } else if (auto why = field(doc, "detached"); !why.empty()) {
      say("\r\n[-- disconnected: " + std::string{why} + " --]\r\n");
      told_end_ = true;
    } else if (auto e = field(doc, "error"); !e.empty()) {
      error_ = std::string{e};
    }
  }

  void attached(bool rw, std::string_view holder, std::string_view bumped, std::string_view state) {
    bool first = !answered_;
    answered_ = true;
    writer_ = rw;
    told_readonly_ = false;
    if (rw) {
      if (!bumped.empty()) {
        say("[bumped " + std::string{bumped} + "]\r\n");
      } else if (!first) {
        say("[attached]\r\n");
      }
    } else if (!holder.empty()) {
      say("[no, " + std::string{holder} + " is attached]\r\n");
    } else {
      say(first && !spying_ ? "[read-only]\r\n" : "[spying]\r\n");
    }
    if (!state.empty() && state != "up") {
      say("[-- console " + std::string{state} + ": its output follows once it is up --]\r\n");
    }
    if (first) {
      auto early = std::move(early_);
      for (const auto& keys : early) {
        typed(keys);
      }
    }
  }

  void notice(std::string_view kind, std::string_view text, std::string_view holder) {
    if (kind == "takenover") {
      writer_ = false;
      told_readonly_ = false;
      say("\r\n[forced to `spy' mode by " + std::string{holder} + "]\r\n");
    } else if (kind == "writer") {
      writer_ = true;
      say("\r\n[attached]\r\n");
    } else if (kind == "readonly") {
      if (holder.empty() && !told_readonly_) { // a keystroke refused (once, not per key)
        told_readonly_ = true;
        say("\r\n[read-only -- use ^E c ? for help]\r\n");
      }
    } else if (kind == "lost" || kind == "up") {
      // the console's own stream carries the note ([-- clusterws: console lost ... --])
    } else {
      say("\r\n[" + std::string{text} + "]\r\n");
    }
  }

  /// The terminal's next keys, read once it is readable (raw: read(2) then returns at once).
  void wait_terminal(net::posix::stream_descriptor& tty) {
    tty.async_wait(net::posix::stream_descriptor::wait_read, [this, &tty](beast::error_code ec) {
      if (ec) {
        return; // cancelled: the session is over
      }
      char buf[4096];
      ssize_t n;
      do {
        n = ::read(STDIN_FILENO, buf, sizeof buf);
      } while (n < 0 && errno == EINTR);
      if (n < 0 && errno == EAGAIN) {
        wait_terminal(tty); // someone else took them
        return;
      }
      typed(n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string{}); // "": the end
      if (n > 0) {
        wait_terminal(tty);
      }
    });
  }

  static void read_stdin(const std::shared_ptr<stdin_link>& link) {
    char buf[4096];
    while (true) {
      auto n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      std::string keys = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string{};
      {
        std::lock_guard<std::mutex> lock{link->mu};
        if (link->ioc == nullptr) {
          return;
        }
        net::post(*link->ioc, [link, keys = std::move(keys)] { link->typed(keys); });
      }
      if (n <= 0) {
        return;
      }
    }
  }

  /// Keystrokes (empty: the end of the input: leave as ^Ec. does).
  void typed(const std::string& keys) {
    if (leaving_) {
      return;
    }
    if (!answered_) { // the server takes keystrokes once attached: until then they wait
      early_.push_back(keys);
      return;
    }
    if (keys.empty()) {
      leave("");
      return;
    }
    std::vector<rcons_event> events;
    escape_.feed(keys, events);
    for (auto& e : events) {
      switch (e.action) {
        case rcons_action::send:
          if (writer_) {
            send(std::move(e.bytes), true);
          } else if (!told_readonly_) {
            told_readonly_ = true;
            say("[read-only -- use ^E c ? for help]\r\n");
          }
          break;
        case rcons_action::quit: leave("[disconnect]\r\n"); return;
        case rcons_action::force: send("force", false); break;
        case rcons_action::spy: send("ro", false); break;
        case rcons_action::attach: send("rw", false); break;
        case rcons_action::send_break:
          if (writer_) {
            send("break", false);
            say("[halt sent]\r\n");
          } else {
            say("[attach to send break]\r\n");
          }
          break;
        case rcons_action::break_list:
          say("[-- break sequences --]\r\n 0  a serial break (IPMI Serial-over-LAN)\r\n");
          break;
        case rcons_action::help: say(help_text); break;
        case rcons_action::ignored: say("[ignored]\r\n"); break;
        case rcons_action::unknown:
          if (e.bytes.size() == 1 && conserver_only.find(e.bytes[0]) != std::string_view::npos) {
            say("[not in rcons -- use `?']\r\n");
          } else {
            say("[unknown -- use `?']\r\n");
          }
          break;
      }
    }
  }

  /// Queues a frame: keystrokes (binary) or a command (text), one write at a time.
  void send(std::string data, bool binary) {
    out_queue_.push_back({std::move(data), binary});
    if (out_queue_.size() == 1) {
      pump();
    }
  }

  void pump() {
    if (out_queue_.empty()) {
      if (leaving_) {
        close();
      }
      return;
    }
    ws_.binary(out_queue_.front().second);
    ws_.async_write(net::buffer(out_queue_.front().first), [this](beast::error_code ec, size_t) {
      out_queue_.pop_front();
      if (ec) {
        out_queue_.clear(); // the read side reports why
        return;
      }
      pump();
    });
  }

  /// Leaves: what was typed goes first, then the close; at most 2 s for the daemon's answer.
  void leave(std::string_view line) {
    if (leaving_) {
      return;
    }
    say(line);
    leaving_ = true;
    if (out_queue_.empty()) {
      close();
    }
    timer_.expires_after(std::chrono::seconds(2));
    timer_.async_wait([this](beast::error_code ec) {
      if (!ec) {
        ioc_.stop();
      }
    });
  }

  void close() {
    ws_.async_close(websocket::close_code::normal, [this](beast::error_code) {
      // the pending read ends with `closed` once the daemon answers
    });
  }

  net::io_context& ioc_;
  websocket::stream<Stream>& ws_;
  int out_;
  net::signal_set signals_;
  net::steady_timer timer_;
  beast::flat_buffer in_;
  simdjson::dom::parser parser_;
  rcons_escape escape_;
  std::deque<std::pair<std::string, bool>> out_queue_;
  std::string error_;
  int status_ = 0;
  bool writer_ = false;
  bool spying_ = false;
  bool answered_ = false;
  bool leaving_ = false;
  bool told_readonly_ = false;
  bool told_end_ = false;
  std::vector<std::string> early_;
};

/// True if `host` is this host (rcons then reaches the daemon over its local socket).
bool is_this_host(const std::string& host) {
  if (host == "localhost" || host == "127.0.0.1" || host == "::1") {
    return true;
  }
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) {
    return false;
  }
  std::string me = name;
  return host == me || host == me.substr(0, me.find('.'));
}

/// The WebSocket handshake, then the session with the terminal raw (restored on every way
/// out); the exit status.
template<class Stream>
int attach(net::io_context& ioc, websocket::stream<Stream>& ws, const std::string& host,
           const std::string& target, const std::string& authorization, bool spy, io& streams) {
  beast::error_code ec;
  websocket::response_type res;
  ws.set_option(websocket::stream_base::decorator([&authorization](websocket::request_type& req) {
    req.set(beast::http::field::user_agent, "rcons");
    if (!authorization.empty()) {
      req.set(beast::http::field::authorization, authorization);
    }
  }));
  // (the asynchronous handshake: Beast 1.74's synchronous one drops a refusal's response)
  ws.async_handshake(res, host, target, [&ec](beast::error_code e) { ec = e; });
  ioc.run();
  ioc.restart();
  if (ec) {
    streams.err << "Error: "
                << (res.result_int() != 0 && res.result_int() != 101
                      ? error_of(res.body(), res.result_int())
                      : "clusterwsd did not open the console (" + ec.message() + ").")
                << '\n';
    return 1;
  }
  ws.read_message_max(16 << 20);
  streams.out.flush();
  int status = 0;
  std::string error;
  {
    console_session<Stream> s{ioc, ws, STDOUT_FILENO}; // its signal set first: then the terminal
    raw_terminal raw{STDIN_FILENO};                    // restored on every way out of this block
    // (said once raw: what is typed from here on goes as typed)
    write_all(STDOUT_FILENO, "[Enter `^Ec?' for help]\r\n");
    status = s.run(spy);
    error = s.error();
  }
  if (!error.empty()) {
    streams.err << "Error: " << error << '\n';
  }
  return status;
}

/// The API password: CLUSTERWS_PASSWORD, else asked for on the terminal without echo.
/// @throws std::runtime_error when there is neither.
std::string password_for(const std::string& user) {
  if (const char* p = ::getenv("CLUSTERWS_PASSWORD"); p != nullptr) {
    return p;
  }
  int tty = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (tty < 0) {
    throw std::runtime_error("No terminal to ask " + user
                             + "'s password on: set CLUSTERWS_PASSWORD.");
  }
  termios saved{};
  bool quiet = ::tcgetattr(tty, &saved) == 0;
  if (quiet) { // echo off before the prompt: nothing typed after it is shown
    termios t = saved;
    t.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    t.c_lflag |= ICANON;
    ::tcsetattr(tty, TCSANOW, &t);
  }
  write_all(tty, user + "'s password: ");
  std::string password;
  char c = 0;
  while (true) {
    auto n = ::read(tty, &c, 1);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0 || c == '\n' || c == '\r') {
      break;
    }
    password.push_back(c);
  }
  if (quiet) {
    ::tcsetattr(tty, TCSANOW, &saved);
  }
  write_all(tty, "\n");
  ::close(tty);
  return password;
}

/// `Basic base64(user:password)`.
std::string basic_authorization(const std::string& user, const std::string& password) {
  std::string plain = user + ":" + password;
  std::string out(4 * ((plain.size() + 2) / 3) + 1, '\0');
  auto n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                           reinterpret_cast<const unsigned char*>(plain.data()),
                           static_cast<int>(plain.size()));
  out.resize(static_cast<size_t>(n));
  OPENSSL_cleanse(plain.data(), plain.size());
  return "Basic " + out;
}

/// The Unix login name of the caller (the default API user).
std::string login_name() {
  if (auto* pw = ::getpwuid(::geteuid()); pw != nullptr) {
    return pw->pw_name;
  }
  return "root";
}

/// The port of the `listen` setting in this home's clusterws.conf (its default when the file
/// cannot be read: a user on another host).
std::string default_port(const store::home& home) {
  std::string listen = "127.0.0.1:8443";
  try {
    listen = api::load_settings(home.config()).text("listen");
  } catch (const std::exception&) {
    // the built-in default
  }
  return listen.substr(listen.rfind(':') + 1);
}

/// rcons over HTTPS to `host:port`: TLS verified against `cacert` (and the host name), the
/// API's credentials on the upgrade request.
int over_https(const std::string& host, const std::string& port, const std::string& user,
               const std::filesystem::path& cacert, const std::string& target, bool spy,
               io& streams) {
  net::ssl::context tls{net::ssl::context::tls_client};
  tls.set_options(net::ssl::context::no_sslv2 | net::ssl::context::no_sslv3
                  | net::ssl::context::no_tlsv1 | net::ssl::context::no_tlsv1_1);
  beast::error_code ec;
  tls.load_verify_file(cacert.string(), ec);
  if (ec) {
    streams.err << "Error: cannot read the CA certificate " << cacert.string() << " ("
                << ec.message() << "): give the cluster CA with --cacert FILE.\n";
    return 1;
  }
  tls.set_verify_mode(net::ssl::verify_peer);
  tls.set_verify_callback(net::ssl::host_name_verification(host));
  auto password = password_for(user);
  auto authorization = basic_authorization(user, password);
  OPENSSL_cleanse(password.data(), password.size());
  net::io_context ioc{1};
  websocket::stream<tls_stream> ws{ioc, tls};
  net::ip::tcp::resolver resolver{ioc};
  auto found = resolver.resolve(host, port, ec);
  if (!ec) {
    beast::get_lowest_layer(ws).expires_after(std::chrono::seconds(30));
    beast::get_lowest_layer(ws).connect(found, ec);
  }
  if (ec) {
    streams.err << "Error: cannot reach clusterwsd at " << host << ':' << port << " ("
                << ec.message() << ").\n";
    return 1;
  }
  auto literal = net::ip::make_address(host, ec);
  if (ec) { // SNI names a host, never an address (RFC 6066)
    ec = {};
    ::SSL_set_tlsext_host_name(ws.next_layer().native_handle(), host.c_str());
  }
  ws.next_layer().handshake(net::ssl::stream_base::client, ec);
  if (ec) {
    streams.err << "Error: TLS with " << host << ':' << port << " failed (" << ec.message()
                << "): is its certificate signed by the CA in " << cacert.string() << "?\n";
    return 1;
  }
  beast::get_lowest_layer(ws).expires_never(); // a console stays open as long as it is used
  auto authority = (literal.is_v6() ? "[" + host + "]" : host) + ':' + port; // the Host header
  auto status = attach(ioc, ws, authority, target, authorization, spy, streams);
  OPENSSL_cleanse(authorization.data(), authorization.size());
  return status;
}

} // namespace

int rcons(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "fsh", {"home", "replay", "user", "cacert"}, {"help"}, {}});
  if (args.has("help") || args.has("h") || args.positional.empty()) {
    streams.out << usage_text; // (xCAT's rcons without a node too, exit 0)
    return 0;
  }
  if (args.has("f") && args.has("s")) {
    throw usage_error("The -f flag can not be used with the -s flag.");
  }
  if (args.positional.size() > 2) {
    throw usage_error("Unexpected argument '" + args.positional[2] + "'.");
  }
  const auto& node = args.positional.front();
  if (node.find_first_of(",/[]*^+ ") != std::string::npos) {
    throw usage_error("rcons opens one node's console: '" + node + "' is not a node name.");
  }
  uint64_t replay = default_replay;
  if (auto r = args.value("replay"); !r.empty()) {
    unsigned long long n = 0;
    if (!base::parse_unsigned(r, n)) {
      throw usage_error("--replay ('" + r + "') must be a whole number of bytes.");
    }
    replay = n;
  }
  std::string target = "/clusterws/nodes/" + url_encode(node)
                       + "/console?replay=" + std::to_string(replay)
                       + (args.has("s")   ? "&mode=ro"
                          : args.has("f") ? "&force=1"
                                          : "");
  auto home = store::home::resolve(args.value("home"));
  if (args.positional.size() == 2) {
    // conserver-host: HOST, HOST:PORT, [V6]:PORT; this host without a port is the local socket
    std::string host = args.positional[1];
    std::string port;
    if (host.front() == '[') {
      auto close = host.find(']');
      if (close == std::string::npos || (close + 1 < host.size() && host[close + 1] != ':')) {
        throw usage_error("conserver-host '" + host + "' must be HOST[:PORT] or [V6]:PORT.");
      }
      port = close + 1 < host.size() ? host.substr(close + 2) : "";
      host = host.substr(1, close - 1);
    } else if (auto colon = host.find(':');
               colon != std::string::npos && host.find(':', colon + 1) == std::string::npos) {
      port = host.substr(colon + 1);
      host = host.substr(0, colon);
    }
    unsigned long long n = 0;
    if (host.empty()
        || (!port.empty() && (!base::parse_unsigned(port, n) || n == 0 || n > 65535))) {
      throw usage_error("conserver-host '" + args.positional[1]
                        + "' must be HOST[:PORT] (a port from 1 to 65535).");
    }
    bool https = !port.empty() || !is_this_host(host) || !args.value("user").empty()
                 || !args.value("cacert").empty();
    if (https) {
      auto user = args.value("user").empty() ? login_name() : args.value("user");
      auto cacert = args.value("cacert").empty() ? home.pki() / "ca-cert.pem"
                                                 : std::filesystem::path{args.value("cacert")};
      return over_https(host, port.empty() ? default_port(home) : port, user, cacert, target,
                        args.has("s"), streams);
    }
  } else if (!args.value("user").empty() || !args.value("cacert").empty()) {
    throw usage_error("--user and --cacert are for a conserver-host (rcons over HTTPS).");
  }
  int fd = connect_local(local_socket_path(home),
                         "It holds the consoles: start it (systemctl start clusterwsd).");
  net::io_context ioc{1};
  websocket::stream<local_stream> ws{ioc};
  beast::error_code ec;
  beast::get_lowest_layer(ws).assign(net::local::stream_protocol{}, fd, ec);
  if (ec) {
    ::close(fd);
    streams.err << "Error: " << ec.message() << '\n';
    return 1;
  }
  return attach(ioc, ws, "localhost", target, "", args.has("s"), streams);
}

} // namespace cws::cli
