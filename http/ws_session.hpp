#pragma once

#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>

#include <deque>
#include <memory>
#include <string>

#include "http/beast.hpp"
#include "http/event_stream.hpp"
#include "http/session.hpp"

namespace cws::http {

namespace websocket = boost::beast::websocket;

/// The close codes of the events socket (docs/api.md, "Events over WebSocket").
namespace ws_close {
/// The service is stopping.
constexpr auto going_away = websocket::close_code::going_away; // 1001
/// The client sent a text or binary message: the events socket takes none.
constexpr auto unexpected_message = websocket::close_code::policy_error; // 1008
/// A client message longer than ws_max_message_bytes (Beast closes with it).
constexpr auto too_big = websocket::close_code::too_big; // 1009
/// The client did not take the events fast enough (after a last reset event).
constexpr auto too_slow = websocket::close_code::try_again_later; // 1013
} // namespace ws_close

/// Represents a connection after its upgrade to WebSocket (RFC 6455), on the io thread of
/// the HTTP session it came from (Beast's chat-multi `websocket_session`): the session read
/// the upgrade request and had it authorized like any call; this accepts it and sends the
/// change feed, one text frame of JSON per event (http/event_stream.hpp `ws_event`), a ping
/// as heartbeat. The client sends nothing but control frames: a message ends the socket
/// (1008), one over ws_max_message_bytes too (1009); a client too slow gets a last reset
/// event then 1013; a stop of the service closes with 1001. `Stream` is the session's
/// stream (TLS over TCP, the local socket's plain stream, TLS over Beast's test stream).
template<class Stream>
class ws_session : public std::enable_shared_from_this<ws_session<Stream>> {
 public:
  /// Takes over `stream` from the session of `client`, counted under `peer_key` in
  /// session_context::peers (given back when this ends; empty: none).
  ws_session(Stream&& stream, std::shared_ptr<session_context> ctx, std::string client,
             std::string peer_key, bool local);
  ~ws_session();

  /// Answers `req` with 101, then sends the events `req` asked for after `after` through
  /// `filter` (what policy allowed, http/event_stream.hpp `allowed_filter`).
  void run_events(bhttp::request<bhttp::string_body> req, event_filter filter,
                  std::optional<uint64_t> after);

  auto get_executor() {
    return ws_.get_executor();
  }

  /// The feed's handlers (http/event_feed.hpp), on the io thread.
  void on_changes(change_texts& texts);
  void on_activity(const actors::activity& a);
  void on_reset(uint64_t seq);
  void on_heartbeat();
  /// (Each frame is written as it comes: frames are not joined.)
  void flush() {
  }
  void flush_shared(shared_joins&) {
  }

 private:
  /// What waits to be written: at most one write (a frame, a ping, the close) at a time.
  struct outgoing {
    enum kind_t { text, ping, close } kind = text;
    std::string data;
    websocket::close_code code = websocket::close_code::normal;
  };

  void on_accept(beast::error_code ec);
  void do_read();
  void on_read(beast::error_code ec, std::size_t bytes);
  /// Queues one event frame; past cfg.events_buffer bytes waiting, the last one says why,
  /// then the socket closes with 1013.
  void queue_event(std::string frame);
  /// Drops what waits (not a write under way), leaves the feed, and closes with `code` after
  /// the frame `last` (none if empty).
  void close_with(websocket::close_code code, std::string reason, std::string last = {});
  void pump();
  /// A stop began: close with 1001, and count as busy so the stop's drain waits for it.
  void going_away();
  /// The connection ends (an error, the client's close): the feed is left, nothing is sent.
  void end();

  websocket::stream<Stream> ws_;
  /// The upgrade request, until it is answered.
  bhttp::request<bhttp::string_body> req_;
  std::optional<uint64_t> after_;
  beast::flat_buffer in_;
  std::shared_ptr<session_context> ctx_;
  std::string client_;
  std::string peer_key_;
  bool local_;
  std::unique_ptr<event_membership> events_;
  event_filter filter_;
  std::deque<outgoing> queue_;
  /// Bytes of the event frames queued (the slow-consumer bound).
  size_t queued_ = 0;
  bool writing_ = false;
  /// A close is queued or sent: nothing more is queued.
  bool closing_ = false;
  /// Counted in session_context::idle (a stop does not wait for an open events socket).
  bool idle_ = false;
  /// Its entry in session_context::upgraded (0: none).
  uint64_t stop_id_ = 0;
};

} // namespace cws::http
