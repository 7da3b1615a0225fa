#pragma once

#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "actors/console_bridge.hpp"
#include "http/beast.hpp"
#include "http/json_writer.hpp"
#include "http/router.hpp"
#include "http/session.hpp"
#include "http/ws_session.hpp"

namespace cws::http {

/// Represents a node's console over WebSocket (GET /clusterws/nodes/{node}/console,
/// docs/consoles.md), on the io thread of the HTTP session it came from: the session had the
/// upgrade request authorized (policy command `rcons`); this accepts it, attaches to the
/// console server (actors/console_bridge.hpp) and carries bytes both ways: the console's as
/// binary frames, the client's binary frames as keystrokes. Text frames from the server are
/// JSON: {"attached":"rw"|"ro","holder":..,"state":..} first, then notices
/// {"notice":kind,"text":..,"holder":..} (actors::console_notice), {"error":..} before a close.
/// A text frame `break` from the client sends a break; `rw`, `ro` or `force` attaches again in
/// that mode (a new {"attached":..}, with "bumped" naming the writer a force took over from). Each
/// binary frame written out is acknowledged to the console server (its flow control drops a watcher
/// that cannot keep up: the socket then closes with 1013). A stop of the service closes with 1001.
template<class Stream>
class ws_console : public std::enable_shared_from_this<ws_console<Stream>> {
 public:
  ws_console(Stream&& stream, std::shared_ptr<session_context> ctx, std::string client,
             std::string peer_key, bool local);
  ~ws_console();

  /// Answers `req` with 101, then attaches as `what` asks for `user`.
  void run(bhttp::request<bhttp::string_body> req, console_request what, std::string user);

  auto get_executor() {
    return ws_.get_executor();
  }

 private:
  struct outgoing {
    enum kind_t { text, binary, close } kind = text;
    std::string data;
    websocket::close_code code = websocket::close_code::normal;
  };

  void on_accept(beast::error_code ec);
  void do_read();
  void on_read(beast::error_code ec, std::size_t bytes);
  void on_attached(actors::console_attach_reply r);
  void queue(typename outgoing::kind_t kind, std::string data);
  void close_with(websocket::close_code code, std::string reason, std::string last = {});
  void pump();
  void going_away();
  void end();
  /// Runs `f` on this socket's strand if the socket still exists.
  template<class F>
  void later(F f);

  websocket::stream<Stream> ws_;
  net::strand<typename websocket::stream<Stream>::executor_type> strand_;
  bhttp::request<bhttp::string_body> req_;
  console_request what_;
  std::string user_;
  beast::flat_buffer in_;
  std::shared_ptr<session_context> ctx_;
  std::string client_;
  std::string peer_key_;
  bool local_;
  std::unique_ptr<actors::console_attachment> att_;
  std::deque<outgoing> queue_;
  bool writing_ = false;
  bool closing_ = false;
  bool idle_ = false;
  uint64_t stop_id_ = 0;
};

/// The JSON of a notice frame: {"notice":kind,"text":..,"holder":..}.
inline std::string console_notice_json(const actors::console_notice& n) {
  json_writer j;
  j.begin_object();
  j.key("notice");
  j.value(n.kind);
  j.key("text");
  j.value(n.text);
  j.key("holder");
  j.value(n.holder);
  j.end_object();
  return j.take();
}

} // namespace cws::http
