// rcons: xCAT's console command with conserver's habits (docs/consoles.md, "rcons"). It opens
// GET /clusterws/nodes/{node}/console as a WebSocket over clusterwsd's local socket (policy
// command `rcons` decides, for root as for anyone), puts the terminal in raw mode, and carries
// bytes both ways; `^Ec` escapes (cli/rcons_escape.hpp) leave, force, spy and send a break.

#include <simdjson.h>
#include <termios.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <cerrno>
#include <csignal>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

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

constexpr const char* usage_text
  = "Usage: rcons <singlenode> [conserver-host] [-f] [-s] [--replay BYTES] [--home DIR]\n"
    "       rcons [-h|--help|-v|--version]\n"
    "Opens the serial console of one node, held by clusterwsd (docs/consoles.md).\n"
    "    -f   take the console over read-write (its writer goes read-only)\n"
    "    -s   spy: read-only\n"
    "    --replay BYTES  show the console's last BYTES first (default 4096, 0: none)\n"
    "Escapes (control-E c, then): . leave, f force read-write, s spy, a attach read-write,\n"
    "l0 send a break, ? help. conserver-host: this host only (the daemon's local socket).\n";

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

/// Writes all of `text` to `fd` (the terminal: blocking).
void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    auto n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) {
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
std::string error_of(const std::string& body) {
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
  return body.empty() ? std::string{"clusterwsd refused the console"} : body;
}

/// What the stdin thread posts to while the session lives (it outlives the session: it
/// blocks in read(2) until the process ends).
struct stdin_link {
  std::mutex mu;
  net::io_context* ioc = nullptr;
  std::function<void(std::string)> typed;
};

/// One console session: the WebSocket, the keystrokes from stdin (a thread of its own: stdin
/// may be a terminal, a pipe or a file), the signals, all on one io_context.
class console_session {
 public:
  console_session(net::io_context& ioc, websocket::stream<local_stream>& ws, int out)
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
  websocket::stream<local_stream>& ws_;
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

/// True if `host` is this host (rcons reaches the daemon over its local socket only).
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

} // namespace

int rcons(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "fsh", {"home", "replay"}, {"help"}, {}});
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
  if (args.positional.size() == 2 && !is_this_host(args.positional[1])) {
    streams.err << "Error: rcons reaches clusterwsd over its local socket only: run it on "
                << args.positional[1] << ", or with no conserver-host here.\n";
    return 1;
  }
  uint64_t replay = default_replay;
  if (auto r = args.value("replay"); !r.empty()) {
    unsigned long long n = 0;
    if (!base::parse_unsigned(r, n)) {
      throw usage_error("--replay ('" + r + "') must be a whole number of bytes.");
    }
    replay = n;
  }
  auto home = store::home::resolve(args.value("home"));
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
  std::string target = "/clusterws/nodes/" + url_encode(node)
                       + "/console?replay=" + std::to_string(replay)
                       + (args.has("s")   ? "&mode=ro"
                          : args.has("f") ? "&force=1"
                                          : "");
  websocket::response_type res;
  ws.set_option(websocket::stream_base::decorator(
    [](websocket::request_type& req) { req.set(beast::http::field::user_agent, "rcons"); }));
  ws.handshake(res, "localhost", target, ec);
  if (ec) {
    streams.err << "Error: "
                << (res.result_int() != 0 && res.result_int() != 101
                      ? error_of(res.body())
                      : "clusterwsd did not open the console (" + ec.message() + ").")
                << '\n';
    return 1;
  }
  ws.read_message_max(16 << 20);
  streams.out.flush();
  int status = 0;
  std::string error;
  {
    console_session s{ioc, ws, STDOUT_FILENO}; // its signal set first: then the terminal
    raw_terminal raw{STDIN_FILENO};            // restored on every way out of this block
    // (said once raw: what is typed from here on goes as typed)
    write_all(STDOUT_FILENO, "[Enter `^Ec?' for help]\r\n");
    status = s.run(args.has("s"));
    error = s.error();
  }
  if (!error.empty()) {
    streams.err << "Error: " << error << '\n';
  }
  return status;
}

} // namespace cws::cli
