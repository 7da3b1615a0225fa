#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <memory>
#include <optional>
#include <type_traits>

#include <boost/asio/strand.hpp>

#include "actors/dispatcher.hpp"
#include "http/audit_log.hpp"
#include "http/beast.hpp"
#include "http/event_hub.hpp"
#include "http/metrics_page.hpp"
#include "http/monitor.hpp"
#include "http/peer_limit.hpp"
#include "http/render.hpp"
#include "http/response_stream.hpp"
#include "http/router.hpp"
#include "http/server_config.hpp"
#include "http/stop_list.hpp"
#include "http/ui_assets.hpp"
#include "http/web_session.hpp"

namespace cws::http {

/// What every session shares: the actors, the limits and what they report to.
struct session_context {
  const actors::dispatcher* svc = nullptr;
  /// Changes and nodeshells are audited here (may be disabled).
  audit_log* audit = nullptr;
  server_config cfg;
  std::atomic<size_t> connections{0};
  /// Of those, the ones on the local socket: a budget of their own (local_max_connections),
  /// apart from the HTTPS port's (max_connections).
  std::atomic<size_t> local_connections{0};
  /// Connections per client address (HTTPS) and per uid (local socket).
  peer_limit peers;
  /// Of those, the ones waiting for their next request (a stop does not wait for them).
  std::atomic<size_t> idle{0};
  /// Set when a stop began: a request still read is answered with `Connection: close`, so
  /// that a busy keep-alive client cannot keep the stop's drain going.
  std::atomic<bool> draining{false};
  /// Set when the server stopped: a session then closes at its next event, using neither
  /// `svc` nor `audit` (which may be gone).
  std::atomic<bool> stopped{false};
  /// Requests, latency, TLS failures, 503s: counted and logged.
  monitor mon;
  /// What the metrics page reads besides `mon`.
  metrics_sources sources;
  /// The WebSocket sessions (http/ws_session.hpp): a stop closes each (1001).
  stop_list upgraded;
  /// The change feed's delivery to the event streams, one hub per io thread.
  event_hubs hubs;
  /// The key of the web console's CSRF tokens (http/web_session.hpp), new at each start.
  std::string csrf_key = new_csrf_key();
};

template<class Session>
class stream_sink;

/// What a session speaks over `NextLayer`: TLS, except on the local Unix socket, where the
/// kernel names the peer (SO_PEERCRED) and the requests are plain HTTP.
template<class NextLayer>
struct session_transport {
  using stream = beast::ssl_stream<NextLayer>;
  static constexpr bool tls = true;
};

template<>
struct session_transport<unix_stream> {
  using stream = unix_stream;
  static constexpr bool tls = false;
};

/// Represents an established HTTPS connection: TLS handshake, then requests one at a time
/// (keep-alive), each handed to the actor system; the reply comes back on the session's own
/// io thread. `NextLayer` is what TLS runs over: a TCP stream (`session`), or Beast's test
/// stream in tests; over `unix_stream` (the local socket) it is plain HTTP. Defined in
/// session.ipp, instantiated in session.cpp (TCP) and local_listener.cpp (Unix).
template<class NextLayer>
class basic_session : public std::enable_shared_from_this<basic_session<NextLayer>> {
 public:
  /// A session over `next` for the peer at address `client` (policy, audit log).
  basic_session(NextLayer&& next, ssl::context& tls, std::shared_ptr<session_context> ctx,
                std::string client);
  /// A plain session on the local socket for the Unix user `peer_user` (empty: the kernel
  /// named a uid without a name, which authenticates as nobody).
  /// (A template: the TLS sessions, instantiated whole, never have it.)
  template<class L = NextLayer, std::enable_if_t<!session_transport<L>::tls, int> = 0>
  basic_session(NextLayer&& next, std::shared_ptr<session_context> ctx, std::string peer_user);
  ~basic_session();

  /// Starts the handshake on the session's io thread.
  void run();

  /// The listener counted this connection for `key` in session_context::peers: given back
  /// when the session ends.
  void count_peer(std::string key) {
    peer_key_ = std::move(key);
  }

  auto get_executor() {
    return stream_.get_executor();
  }

  /// An SSE stream's feed (http/event_feed.hpp), on the io thread: each queues its event,
  /// `flush` writes what waits.
  void on_changes(change_texts& texts);
  void on_activity(const actors::activity& a);
  void on_reset(uint64_t seq);
  void on_heartbeat();
  void flush();
  /// `flush` in a flush of the hub's streams (event_reader::flush_shared).
  void flush_shared(shared_joins& joins);

 private:
  void on_run();
  void on_detect(beast::error_code ec, bool tls);
  /// Plain HTTP on the HTTPS port: a 400 in plain HTTP saying so, then close.
  void refuse_plaintext();
  void on_handshake(beast::error_code ec, std::size_t used);
  void do_read();
  void on_read(beast::error_code ec, std::size_t bytes);
  /// The socket operation about to start must be done by `deadline` (else the connection
  /// is closed).
  void io_by(steady_timer::time_point deadline);
  /// Makes sure deadline_ fires no later than `deadline`.
  void watch(steady_timer::time_point deadline);
  void on_result(api::api_result res);
  /// Whether the pending call is audited: changes and nodeshells of an authenticated caller
  /// (allowed or refused by policy), not token requests.
  bool audited(const api::api_result& res) const;
  /// Whether the pending call is a change or nodeshell (audited if its caller is authenticated).
  bool audited_call() const;
  /// Writes the pending call's audit entry, with the status its answer has.
  void audit(const api::api_result& res, unsigned status);
  /// Answers with a refusal rendered as every answer is, and closes the connection.
  void refuse(api::errc code, std::string message);
  void send(unsigned status, std::string body, bool keep_alive,
            const char* content_type = "application/json");
  /// Answers a request for the web console's files (http/ui_assets.hpp); `head_only`: HEAD.
  void send_ui(ui_answer a, bool head_only);
  /// Answers /session (docs/web.md): the session's body and cookie, or the refusal.
  void answer_session(const api::api_result& res);
  /// Writes into `head` the status line and headers of an answer of `length` bytes
  /// (Content-Length; none for a chunked one).
  void response_head(std::string& head, unsigned status, const char* content_type,
                     std::optional<size_t> length, bool keep_alive) const;
  /// The request's path for logs and the audit log, decoded: never its query (a password may
  /// be in it), a token's id replaced by `***`.
  std::string logged_path() const;
  /// Counts the request answered with `status` (http/monitor).
  void count(unsigned status);
  void on_write(bool close, beast::error_code ec, std::size_t bytes);
  void do_close();
  void do_drain(size_t drained);
  /// Asks the store for the next page of the listing being sent, unless one is on its way or
  /// two are queued.
  void request_page();
  void on_page(api::api_result res);
  void start_stream(unsigned status, const char* content_type);
  /// GET /events allowed: the change feed as Server-Sent Events until the client leaves.
  void start_events(const api::api_result& res);
  /// GET /events allowed for a WebSocket upgrade request: the connection goes to a
  /// ws_session (http/ws_session.hpp), which answers 101; this session ends.
  void hand_over(const api::api_result& res);
  /// GET /nodes/{node}/console allowed for a WebSocket upgrade request: the connection goes
  /// to a ws_console (http/ws_console.hpp).
  void hand_over_console(const api::api_result& res);
  /// One event's text for the stream (chunked), written at the next `flush` (at once once a
  /// write's worth waits); once cfg.events_buffer bytes wait for the client, the stream ends
  /// with a reset event saying so (memory: the buffer and one event at most).
  void queue_event(shared_text text);
  void queue_event(std::string text) {
    queue_event(std::make_shared<const std::string>(std::move(text)));
  }
  void on_stream_node(const base::node_result& out);
  void queue_stream(std::string text);
  /// Starts the next write if none is under way (`joins`: see flush_shared).
  void pump_stream(shared_joins* joins = nullptr);

  friend class stream_sink<basic_session>;

  static constexpr bool tls_ = session_transport<NextLayer>::tls;
  typename session_transport<NextLayer>::stream stream_;
  using executor_type = decltype(std::declval<decltype(stream_)&>().get_executor());
  /// What other threads hand to the session (a call's end, a streamed call's nodes) goes
  /// through this strand: in the order it was handed over. A plain post is not ordered
  /// across threads: from an io thread it waits in that thread's private queue until its
  /// handler ends, so a later post from another thread overtook it (an event stream's ids
  /// went backwards under load, bench/events.sh; events have their own strand,
  /// event_feed.hpp). Made when a streamed call is submitted: idle sessions stay small.
  std::optional<net::strand<executor_type>> handoff_;
  /// The handoff strand, made on first use (on the session's thread, before any handoff).
  net::strand<executor_type>& handoff() {
    if (!handoff_) {
      handoff_.emplace(stream_.get_executor());
    }
    return *handoff_;
  }
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  /// The response being written.
  std::string head_;
  std::string body_;
  std::shared_ptr<session_context> ctx_;
  std::string client_;
  /// On the local socket: the caller's Unix user, its only credential.
  std::string peer_user_;
  /// Counted in session_context::peers under this key (empty: not counted).
  std::string peer_key_;
  routed pending_;
  /// The request being answered, for the audit log.
  std::string method_;
  std::string path_;
  bool keep_alive_ = true;
  /// After refusing a request whose body is still arriving: read and discard it for a moment
  /// before closing, so the client sees the answer instead of a reset (a lingering close).
  bool drain_ = false;
  /// Allocated only for a lingering close: thousands of idle sessions must stay small.
  std::unique_ptr<std::array<char, 16384>> discard_;
  /// A streamed answer (stream=1, GET /events, a paged listing): what waits for the socket.
  response_stream stream_out_;
  /// A WebSocket upgrade request on a row that may upgrade, kept for the 101 (null: none).
  std::unique_ptr<bhttp::request<bhttp::string_body>> upgrade_;
  /// GET /events: the subscription and what passes.
  std::unique_ptr<event_membership> events_;
  std::unique_ptr<event_filter> events_filter_;
  /// A large listing being sent in pages (api_result::pages) and how it is rendered.
  api::object_pages_ptr pages_;
  std::unique_ptr<listing_writer> listing_;
  /// A paged listing holds its snapshot until the last page: done by then (call_timeout).
  steady_timer::time_point listing_deadline_;
  bool page_requested_ = false;
  /// One timer for the session's deadlines: a call in the actor system (call_timeout; a late
  /// result is dropped) and, once the handshake is done, each read and write (the stream's
  /// own timer would cost a timer operation per read and per write).
  steady_timer deadline_;
  steady_timer::time_point call_deadline_;
  steady_timer::time_point io_deadline_ = steady_timer::time_point::max();
  /// A fan-out call's cancel, used when its call_timeout passes; while it runs, the deadline
  /// timer also looks at the socket every second (peer_check_) for the client's end, reading
  /// nothing, to log it: the call's job runs on.
  std::shared_ptr<api::call_cancel> cancel_;
  steady_timer::time_point peer_check_ = steady_timer::time_point::max();
  /// The answer's Location (an async call's job), or empty.
  std::string location_;
  /// Header lines the answer carries beyond the usual ones (CRLF-terminated): the web
  /// console's security headers, ETag, Set-Cookie (http/ui_assets.hpp, docs/web.md).
  std::string extra_headers_;
  bool deadline_armed_ = false;
  bool waiting_ = false;
  /// Counted in session_context::idle.
  bool idle_ = false;
  unsigned version_ = 11;
  /// The request being answered: when it arrived, its route (metrics label), whether its
  /// answer may be cached.
  steady_timer::time_point started_;
  size_t route_ = no_route();
  bool cacheable_ = false;
};

/// A session over TCP: what the daemon runs.
using session = basic_session<tcp_stream>;

/// The peer's address of an accepted socket, an IPv4-mapped IPv6 address as IPv4 ("" if the
/// peer is gone already).
std::string peer_address(const tcp_socket& socket);

extern template class basic_session<tcp_stream>;

} // namespace cws::http
