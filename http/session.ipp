#pragma once

// The definitions of basic_session: included by session.cpp (the TCP session) and by the
// tests that run a session over Beast's test stream, nowhere else.

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>

#include "api/copy.hpp"
#include "api/operation_traits.hpp"
#include "base/log.hpp"
#include "http/date.hpp"
#include "http/event_feed.hpp"
#include "http/framing.hpp"
#include "http/json_writer.hpp"
#include "http/query.hpp"
#include "http/render.hpp"
#include "http/session.hpp"
#include "http/ws_console.ipp"
#include "http/ws_session.ipp"

namespace cws::http {

/// Hands each node's result of a streamed nodeshell to the session's io thread.
template<class Session>
class stream_sink : public api::node_sink {
 public:
  explicit stream_sink(std::weak_ptr<Session> s) : session_(std::move(s)) {
    // nop
  }

  void push(base::node_result out) override {
    if (auto s = session_.lock()) {
      net::post(*s->handoff_, [s, out = std::move(out)] { s->on_stream_node(out); });
    }
  }

 private:
  std::weak_ptr<Session> session_;
};

namespace detail {

// Deadlines and closing, on TCP. A test stream has no timers: its tests drive time by hand.
inline void expire_after(tcp_stream& s, std::chrono::steady_clock::duration d) {
  s.expires_after(d);
}
inline void expire_never(tcp_stream& s) {
  s.expires_never();
}
inline void close(tcp_stream& s) {
  beast::error_code ignored;
  s.socket().close(ignored);
}
inline void expire_after(unix_stream& s, std::chrono::steady_clock::duration d) {
  s.expires_after(d);
}
inline void expire_never(unix_stream& s) {
  s.expires_never();
}
inline void close(unix_stream& s) {
  beast::error_code ignored;
  s.socket().close(ignored);
}
/// Whether the client behind `fd` went away (its end closed or reset), looked at without
/// reading anything. A client that sent more bytes (a pipelined request, a TLS close_notify)
/// is gone only if TCP saw its FIN too; on a Unix socket such bytes hide the end.
inline bool peer_gone(int fd, bool tcp) {
  char c;
  auto n = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) {
    return true;
  }
  if (n < 0) {
    return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
  }
  tcp_info info{};
  socklen_t len = sizeof info;
  return tcp && ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0
         && info.tcpi_state == TCP_CLOSE_WAIT;
}
inline bool peer_gone(tcp_stream& s) {
  return peer_gone(s.socket().native_handle(), true);
}
inline bool peer_gone(unix_stream& s) {
  return peer_gone(s.socket().native_handle(), false);
}
template<class Stream>
bool peer_gone(Stream&) {
  return false;
}
template<class Stream>
void expire_after(Stream&, std::chrono::steady_clock::duration) {
  // nop
}
template<class Stream>
void expire_never(Stream&) {
  // nop
}
template<class Stream>
void close(Stream& s) {
  s.close();
}

} // namespace detail

template<class NextLayer>
basic_session<NextLayer>::basic_session(NextLayer&& next, ssl::context& tls,
                                        std::shared_ptr<session_context> ctx, std::string client)
    : stream_(std::move(next), tls), ctx_(std::move(ctx)), client_(std::move(client)),
      deadline_(stream_.get_executor()) {
  ++ctx_->connections;
}

template<class NextLayer>
template<class L, std::enable_if_t<!session_transport<L>::tls, int>>
basic_session<NextLayer>::basic_session(NextLayer&& next, std::shared_ptr<session_context> ctx,
                                        std::string peer_user)
    : stream_(std::move(next)), ctx_(std::move(ctx)), client_("local"),
      peer_user_(std::move(peer_user)), deadline_(stream_.get_executor()) {
  ++ctx_->connections;
  ++ctx_->local_connections;
}

template<class NextLayer>
basic_session<NextLayer>::~basic_session() {
  --ctx_->connections;
  if constexpr (!tls_) {
    --ctx_->local_connections;
  }
  if (!peer_key_.empty()) {
    ctx_->peers.give(peer_key_);
  }
  if (idle_) {
    --ctx_->idle;
  }
}

template<class NextLayer>
void basic_session<NextLayer>::run() {
  net::dispatch(stream_.get_executor(),
                beast::bind_front_handler(&basic_session::on_run, this->shared_from_this()));
}

template<class NextLayer>
void basic_session<NextLayer>::on_run() {
  if constexpr (!tls_) {
    do_read(); // the local socket: no TLS, the kernel named the peer
  } else {
    detail::expire_after(beast::get_lowest_layer(stream_), ctx_->cfg.handshake_timeout);
    // a look at the first bytes tells plain HTTP (answered, in plain HTTP) from a TLS hello
    beast::async_detect_ssl(
      stream_.next_layer(), buffer_,
      beast::bind_front_handler(&basic_session::on_detect, this->shared_from_this()));
  }
}

template<class NextLayer>
void basic_session<NextLayer>::on_detect(beast::error_code ec, bool tls) {
  if (ec) {
    if (ec == beast::error::timeout) {
      ctx_->mon.tls_failed(monitor::tls_failure::timeout, client_, "no TLS hello in time");
    }
    // else: closed before saying anything (a port probe, a health check): nothing to report
    return;
  }
  if (!tls) {
    refuse_plaintext();
    return;
  }
  stream_.async_handshake(
    ssl::stream_base::server, buffer_.data(),
    beast::bind_front_handler(&basic_session::on_handshake, this->shared_from_this()));
}

template<class NextLayer>
void basic_session<NextLayer>::refuse_plaintext() {
  ctx_->mon.tls_failed(monitor::tls_failure::plain_http, client_, "plain HTTP on the HTTPS port");
  version_ = 11;
  started_ = steady_timer::clock_type::now();
  auto out = render(routed{}, api::api_result::failure(
                                api::errc::bad_request,
                                "This port speaks HTTPS only: use https:// with the cluster CA."));
  count(out.status);
  response_head(head_, out.status, out.content_type, out.body.size(), false);
  body_ = std::move(out.body);
  net::async_write(stream_.next_layer(), beast::buffers_cat(net::buffer(head_), net::buffer(body_)),
                   [self = this->shared_from_this()](beast::error_code, std::size_t) {
                     detail::close(beast::get_lowest_layer(self->stream_));
                   });
}

template<class NextLayer>
void basic_session<NextLayer>::on_handshake(beast::error_code ec, std::size_t used) {
  if (ec) {
    // old TLS versions, no shared cipher, a client that gave up: counted, bursts summarised
    ctx_->mon.tls_failed(ec == beast::error::timeout ? monitor::tls_failure::timeout
                                                     : monitor::tls_failure::handshake,
                         client_, ec.message());
    return;
  }
  buffer_.consume(used); // the hello detect_ssl read went into the handshake
  detail::expire_never(beast::get_lowest_layer(stream_)); // from now on: io_by()
  do_read();
}

template<class NextLayer>
void basic_session<NextLayer>::do_read() {
  idle_ = true;
  ++ctx_->idle;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(ctx_->cfg.header_limit));
  parser_->body_limit(ctx_->cfg.body_limit);
  // one deadline for the whole request: idle keep-alive and slow senders alike (slowloris)
  io_by(steady_timer::clock_type::now() + ctx_->cfg.request_timeout);
  bhttp::async_read(stream_, buffer_, *parser_,
                    beast::bind_front_handler(&basic_session::on_read, this->shared_from_this()));
}

template<class NextLayer>
void basic_session<NextLayer>::on_read(beast::error_code ec, std::size_t) {
  idle_ = false;
  --ctx_->idle;
  if (ctx_->stopped) {
    do_close();
    return;
  }
  started_ = steady_timer::clock_type::now();
  route_ = no_route();
  cacheable_ = false;
  extra_headers_.clear();
  method_.clear();
  path_.clear();
  if (ec == bhttp::error::body_limit) {
    drain_ = true;
    refuse(api::errc::body_too_large,
           "The request body is larger than " + std::to_string(ctx_->cfg.body_limit) + " bytes.");
    return;
  }
  if (ec == bhttp::error::header_limit) {
    refuse(api::errc::header_too_large, "The request header is larger than "
                                          + std::to_string(ctx_->cfg.header_limit) + " bytes.");
    return;
  }
  if (ec == bhttp::error::end_of_stream) {
    do_close();
    return;
  }
  if (ec) {
    if (ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category()) {
      refuse(api::errc::bad_request, "Malformed HTTP request.");
    } else {
      do_close(); // timeout (slow or idle client), reset, TLS failure
    }
    return;
  }
  auto& head = parser_->get();
  version_ = head.version();
  std::vector<std::string_view> codings;
  for (auto [it, end] = head.equal_range(bhttp::field::transfer_encoding); it != end; ++it) {
    codings.push_back(it->value());
  }
  if (auto bad = check_framing(codings, head.count(bhttp::field::content_length) > 0)) {
    // the end of this request is unknown: answer and close, never read on
    refuse(bad->code, std::move(bad->message));
    return;
  }
  auto req = parser_->release();
  upgrade_.reset();
  keep_alive_ = req.keep_alive() && !ctx_->draining;
  {
    // the web console's files and `/`: public, answered before any routing (docs/web.md)
    auto target = std::string_view{req.target()};
    if (auto ui = answer_ui(req.method_string(), target.substr(0, target.find('?')),
                            req[bhttp::field::if_none_match])) {
      method_ = std::string{req.method_string()};
      path_ = std::string{target.substr(0, target.find('?'))};
      send_ui(std::move(*ui), req.method() == bhttp::verb::head);
      return;
    }
  }
  http_input in;
  in.method = std::string{req.method_string()};
  in.target = std::string{req.target()};
  in.body = std::move(req.body());
  in.content_type = std::string{req[bhttp::field::content_type]};
  in.authorization = std::string{req[bhttp::field::authorization]};
  in.token = std::string{req["X-Auth-Token"]};
  in.client = client_;
  in.local = !tls_;
  in.peer_user = peer_user_;
  in.last_event_id = std::string{req["Last-Event-ID"]};
  in.cookie = std::string{req[bhttp::field::cookie]};
  in.csrf = std::string{req["X-CSRF-Token"]};
  in.origin = std::string{req[bhttp::field::origin]};
  in.host = std::string{req[bhttp::field::host]};
  in.websocket = websocket::is_upgrade(req);
  method_ = in.method;
  location_.clear();
  path_ = in.target.substr(0, in.target.find('?')); // never the query: it may hold a password
  // HTTP/1.0 has no chunked encoding: its listings are sent whole
  pending_ = route(in, router_limits{ctx_->cfg.max_json_depth,
                                     version_ == 10 ? 0 : ctx_->cfg.page_objects, ctx_->csrf_key,
                                     ctx_->cfg.ui_session.count(), ctx_->cfg.nodetable_max_rows});
  route_ = pending_.route;
  cacheable_ = pending_.cacheable;
  if (pending_.upgrade && !pending_.answer && websocket::is_upgrade(req)) {
    // (elsewhere an Upgrade header is ignored, as HTTP/1.1 lets a server do)
    upgrade_ = std::make_unique<bhttp::request<bhttp::string_body>>(std::move(req));
  }
  if (pending_.answer) {
    auto out = render(pending_, *pending_.answer);
    send(out.status, std::move(out.body), keep_alive_, out.content_type);
    return;
  }
  if (ctx_->audit != nullptr && audited_call() && ctx_->audit->refuses_changes()) {
    // audit_required: no change goes unrecorded while the audit log cannot be written
    auto why = std::string{"The audit log cannot be written and audit_required is set: changes "
                           "are refused until it can be."};
    ctx_->mon.unavailable(method_, logged_path(), why);
    auto out = render(pending_, api::api_result::failure(api::errc::unavailable, std::move(why)));
    send(out.status, std::move(out.body), keep_alive_, out.content_type);
    return;
  }
  // no deadline while the actors work; the call has its own timeout
  io_deadline_ = steady_timer::time_point::max();
  auto self = this->shared_from_this();
  if (pending_.stream) {
    pending_.call->sink = std::make_shared<stream_sink<basic_session>>(this->weak_from_this());
  }
  waiting_ = true;
  ctx_->mon.in_flight.add(1);
  call_deadline_ = started_ + ctx_->cfg.call_timeout;
  if (api::is_fan_out(pending_.call->op)) {
    // its work ends when its client leaves or its time is up (not with an unanswered 503)
    cancel_ = std::make_shared<api::call_cancel>();
    pending_.call->cancel = cancel_;
    peer_check_ = started_ + std::chrono::seconds(1);
    watch(peer_check_);
  } else {
    cancel_.reset();
    watch(call_deadline_);
  }
  if (pending_.stream) {
    handoff(); // before any node is handed over
  }
  ctx_->svc->submit(pending_.call, [self](api::api_result res) mutable {
    // on the session's io thread only, posted even when the actor ran there. A streamed
    // call's nodes were handed over before (stream_sink) and its end must come after them:
    // through the same strand. Any other call hands over this one answer only: a plain post
    // (the GET path pays no strand). The reference moves along, so the session is never
    // destroyed on another thread.
    auto* strand = self->handoff_ ? &*self->handoff_ : nullptr;
    auto ex = self->stream_.get_executor();
    auto run = [self = std::move(self), res = std::move(res)]() mutable {
      self->on_result(std::move(res));
    };
    if (strand != nullptr) {
      net::post(*strand, std::move(run));
    } else {
      net::post(ex, std::move(run));
    }
  });
}

template<class NextLayer>
void basic_session<NextLayer>::io_by(steady_timer::time_point deadline) {
  io_deadline_ = deadline;
  watch(deadline);
}

template<class NextLayer>
void basic_session<NextLayer>::watch(steady_timer::time_point deadline) {
  // One wait outlives many requests: a request only moves io_deadline_ or call_deadline_,
  // and the wait re-arms itself when it finds its deadline moved (no timer operation, and so
  // no system call, per request). Re-armed now only for a deadline earlier than the one
  // waited for.
  if (deadline_armed_ && deadline_.expiry() <= deadline) {
    return;
  }
  deadline_armed_ = true;
  deadline_.expires_at(deadline);
  deadline_.async_wait([weak = this->weak_from_this()](beast::error_code ec) {
    auto self = weak.lock();
    if (!self || ec == net::error::operation_aborted) {
      return; // the session is gone, or the wait was re-armed for an earlier deadline
    }
    self->deadline_armed_ = false;
    if (ec) {
      return;
    }
    auto now = steady_timer::clock_type::now();
    if (self->waiting_ && now >= self->call_deadline_ && self->cancel_
        && !self->cancel_->cancelled()) {
      // a fan-out call: the nodes not done end now, each with its result, and the answer
      // goes out as usual; a 503 only if even that does not come soon
      self->cancel_->cancel("Not finished within call_timeout ("
                            + std::to_string(self->ctx_->cfg.call_timeout.count())
                            + " seconds); ended.");
      self->call_deadline_ = now + std::chrono::seconds(5);
    } else if (self->waiting_ && now >= self->call_deadline_ && self->stream_out_.started()) {
      self->waiting_ = false; // its status went out already: an unfinished stream is all
      self->ctx_->mon.in_flight.add(-1);
      detail::close(beast::get_lowest_layer(self->stream_));
      return;
    } else if (self->waiting_ && now >= self->call_deadline_) {
      self->waiting_ = false;
      self->ctx_->mon.in_flight.add(-1);
      auto why = "The service did not answer within "
                 + std::to_string(self->ctx_->cfg.call_timeout.count()) + " seconds.";
      self->ctx_->mon.unavailable(self->method_, self->logged_path(), why + " (call_timeout)");
      self->refuse(api::errc::unavailable, std::move(why));
      return;
    } else if (now >= self->io_deadline_) {
      // a request not received, or an answer not taken, in time: the pending read or write
      // ends with an error, and the session with it
      self->io_deadline_ = steady_timer::time_point::max();
      detail::close(beast::get_lowest_layer(self->stream_));
      return;
    }
    auto next = self->io_deadline_;
    if (self->waiting_) {
      next = std::min(next, self->call_deadline_);
      if (self->cancel_ && !self->cancel_->cancelled()) {
        if (now >= self->peer_check_) {
          bool gone = detail::peer_gone(beast::get_lowest_layer(self->stream_));
          if (gone && self->pending_.cancel_on_close) {
            // the client asked for it (root's tools: Ctrl-C): its leaving cancels the call,
            // as DELETE /jobs/{id} would; the answer nobody reads is bounded as at
            // call_timeout
            self->peer_check_ = steady_timer::time_point::max();
            base::log(base::log_level::info, "The client of " + self->method_ + " "
                                               + self->logged_path()
                                               + " closed the connection; its job is cancelled "
                                                 "(cancel_on_close=1).");
            self->cancel_->cancel("The client closed the connection (cancel_on_close=1); ended.");
            self->call_deadline_ = std::min(self->call_deadline_, now + std::chrono::seconds(5));
            next = std::min(next, self->call_deadline_);
          } else if (gone) {
            // a synchronous call is a job its client awaits: the client left, the job runs
            // on (GET /jobs, DELETE /jobs/{id}), still bounded by this call's call_timeout
            self->peer_check_ = steady_timer::time_point::max();
            base::log(base::log_level::info, "The client of " + self->method_ + " "
                                               + self->logged_path()
                                               + " closed the connection; its job runs on.");
          } else {
            self->peer_check_ = now + std::chrono::seconds(1);
          }
        }
        next = std::min(next, self->peer_check_);
      }
    }
    if (next != steady_timer::time_point::max()) {
      self->watch(next);
    }
  });
}

template<class NextLayer>
void basic_session<NextLayer>::on_result(api::api_result res) {
  if (!waiting_) {
    return; // answered already (call_timeout)
  }
  if (ctx_->stopped) {
    do_close(); // past the stop's drain: the audit log may be gone
    return;
  }
  waiting_ = false;
  ctx_->mon.in_flight.add(-1);
  cancel_.reset();
  if (!res.authenticated && res.error == api::errc::unauthorized) {
    // Bad or missing credentials: counted, not written one by one (a client without any
    // must not be able to grow the log), and the connection ends with the answer, so each
    // further guess costs the client a new TLS handshake.
    if (ctx_->audit != nullptr && !ctx_->audit->refused(client_)) {
      ctx_->mon.audit_failures.add();
    }
    keep_alive_ = false;
  }
  if (pending_.stream && (stream_out_.started() || (res.ok() && res.created))) {
    if (audited(res)) {
      // rendered for its status only: the nodes' output went out in the stream
      audit(res, render(pending_, res).status);
    }
    // a node may have been reported before any stream started: start it now
    if (!stream_out_.started()) {
      queue_stream({});
    }
    stream_out_.finish(chunk(stream_summary(res)) + "0\r\n\r\n");
    pump_stream();
    return;
  }
  if (res.ok() && pending_.out == output::console) {
    if (upgrade_) {
      hand_over_console(res);
    } else {
      auto out = render(
        pending_,
        api::api_result::failure(api::errc::bad_request,
                                 "GET /nodes/{node}/console is a WebSocket: ask with "
                                 "'Connection: Upgrade' and 'Upgrade: websocket' (rcons does)."));
      send(out.status, std::move(out.body), keep_alive_, out.content_type);
    }
    return;
  }
  if (res.ok() && pending_.out == output::events) {
    if (upgrade_) {
      hand_over(res);
    } else {
      start_events(res);
    }
    return;
  }
  if (res.ok() && res.pages) {
    start_stream(200, "application/json");
    listing_ = std::make_unique<listing_writer>(pending_);
    pages_ = std::move(res.pages);
    listing_deadline_ = steady_timer::clock_type::now() + ctx_->cfg.call_timeout;
    request_page();
    return;
  }
  if (pending_.out == output::session) {
    answer_session(res);
    return;
  }
  auto out = render(pending_, res);
  if (res.ok() && res.accepted) {
    location_ = "/clusterws/jobs/" + res.job_id; // 202: where the job is read
  }
  if (res.ok() && pending_.out == output::metrics) {
    out.body = metrics_page(ctx_->mon, ctx_->connections.load(), ctx_->sources);
    out.content_type = "text/plain; version=0.0.4; charset=utf-8";
  }
  if (out.status == 503) {
    ctx_->mon.unavailable(method_, logged_path(),
                          res.messages.empty() ? "unavailable" : res.messages.front());
  }
  if (audited(res)) {
    audit(res, out.status);
  }
  send(out.status, std::move(out.body), keep_alive_, out.content_type);
}

template<class NextLayer>
void basic_session<NextLayer>::request_page() {
  // at most two pages between the store and the socket: one written, one being read
  if (!pages_ || page_requested_ || stream_out_.ended() || stream_out_.in_flight() > 1) {
    return;
  }
  page_requested_ = true;
  ctx_->svc->next_page(
    pages_, ctx_->cfg.page_objects, [self = this->shared_from_this()](auto res) mutable {
      auto ex = self->stream_.get_executor();
      net::dispatch(ex, [self = std::move(self), res = std::move(res)]() mutable {
        self->on_page(std::move(res));
      });
    });
}

template<class NextLayer>
void basic_session<NextLayer>::on_page(api::api_result res) {
  page_requested_ = false;
  if (!pages_) {
    return; // the client went away
  }
  if (ctx_->stopped) {
    do_close();
    return;
  }
  if (!res.ok()) {
    // the status line went out already: end the connection without the last chunk, so the
    // client sees the answer is incomplete
    pages_.reset();
    stream_out_.drop();
    do_close();
    return;
  }
  if (res.objects.empty()) {
    pages_.reset(); // the snapshot's reader slot goes back now, not with the connection
    stream_out_.finish(chunk(listing_->end()) + "0\r\n\r\n");
    pump_stream();
    return;
  }
  queue_stream(chunk(listing_->page(res.objects)));
  request_page();
}

template<class NextLayer>
bool basic_session<NextLayer>::audited(const api::api_result& res) const {
  return ctx_->audit != nullptr && res.authenticated && audited_call();
}

template<class NextLayer>
bool basic_session<NextLayer>::audited_call() const {
  return api::changes_state(*pending_.call); // api/operation_traits.cpp: each operation's rule
}

template<class NextLayer>
void basic_session<NextLayer>::audit(const api::api_result& res, unsigned status) {
  const auto& call = *pending_.call;
  audit_entry e;
  e.client = client_;
  e.user = res.user;
  e.method = method_;
  e.path = logged_path();
  if (call.type == store::object_type::node) {
    e.noderange = call.target;
  }
  e.command = call.copy ? api::describe(*call.copy, call.command) : call.command;
  e.status = status;
  if (!ctx_->audit->write(e)) {
    ctx_->mon.audit_failures.add();
  }
}

template<class NextLayer>
void basic_session<NextLayer>::on_stream_node(const base::node_result& out) {
  if (!stream_out_.ended()) {
    // format=detail: every operation's node in nodeshell's detail shape (rc, stdout, stderr,
    // error, message), its output as the CLI prints it (root's tools through the daemon)
    const auto& call = *pending_.call;
    queue_stream(chunk(stream_line(out, call.detail ? std::string_view{} : action_key(call.op))));
  }
}

template<class NextLayer>
void basic_session<NextLayer>::start_stream(unsigned status, const char* content_type) {
  std::string head;
  response_head(head, status, content_type, std::nullopt, keep_alive_);
  stream_out_.start(status, std::move(head));
}

template<class NextLayer>
void basic_session<NextLayer>::hand_over(const api::api_result& res) {
  using ws_type = ws_session<typename session_transport<NextLayer>::stream>;
  auto& req = *pending_.events;
  auto ws = std::make_shared<ws_type>(std::move(stream_), ctx_, client_,
                                      std::exchange(peer_key_, {}), !tls_);
  count(101);
  ws->run_events(std::move(*upgrade_), allowed_filter(req, res.user, res.names), req.after);
  upgrade_.reset();
  pending_ = {};
  // this session ends here: no operation of its own is pending on the stream it gave away
}

template<class NextLayer>
void basic_session<NextLayer>::hand_over_console(const api::api_result& res) {
  using ws_type = ws_console<typename session_transport<NextLayer>::stream>;
  auto ws = std::make_shared<ws_type>(std::move(stream_), ctx_, client_,
                                      std::exchange(peer_key_, {}), !tls_);
  count(101);
  ws->run(std::move(*upgrade_), std::move(*pending_.console), res.user);
  upgrade_.reset();
  pending_ = {};
}

template<class NextLayer>
void basic_session<NextLayer>::on_changes(change_texts& texts) {
  queue_event(texts.sse_text(*events_filter_)); // shared with the streams of its filter
}

template<class NextLayer>
void basic_session<NextLayer>::on_activity(const actors::activity& a) {
  using kind = actors::activity::kind;
  std::string text;
  switch (a.type) {
    case kind::job: text = sse_job(a.job, a.what, *events_filter_); break;
    case kind::power: text = sse_power(a.node, a.state, *events_filter_); break;
    case kind::servicenode: text = sse_servicenode(a.node, a.what, a.state, *events_filter_); break;
    case kind::console: {
      auto data = console_json(a.node, a.what, a.user, a.state, *events_filter_);
      text = data.empty() ? data : "event: console\ndata: " + data + "\n\n";
      break;
    }
  }
  if (!text.empty()) {
    queue_event(chunk(text));
  }
}

template<class NextLayer>
void basic_session<NextLayer>::on_reset(uint64_t seq) {
  queue_event(chunk(sse_reset(seq, missed_changes_reason)));
}

template<class NextLayer>
void basic_session<NextLayer>::on_heartbeat() {
  static const auto beat = std::make_shared<const std::string>(chunk(sse_heartbeat()));
  queue_event(beat);
}

template<class NextLayer>
void basic_session<NextLayer>::flush() {
  if (!stream_out_.complete()) { // (a complete stream was ended by its last write)
    pump_stream();
  }
}

template<class NextLayer>
void basic_session<NextLayer>::flush_shared(shared_joins& joins) {
  if (!stream_out_.complete()) {
    pump_stream(&joins);
  }
}

template<class NextLayer>
void basic_session<NextLayer>::start_events(const api::api_result& res) {
  auto& req = *pending_.events;
  events_filter_ = std::make_unique<event_filter>(allowed_filter(req, res.user, res.names));
  events_ = subscribe_events(*ctx_, req.after.value_or(actors::from_now), this->shared_from_this());
  if (!events_) {
    send(503,
         render(pending_, api::api_result::failure(api::errc::unavailable,
                                                   "The event stream is not enabled."))
           .body,
         false);
    return;
  }
  // a stream lasts until its client leaves: a stop does not wait for it (as for an idle
  // connection), and it is never kept alive for another request
  keep_alive_ = false;
  idle_ = true;
  ++ctx_->idle;
  start_stream(200, "text/event-stream");
  queue_event(chunk(sse_heartbeat()));
  pump_stream(); // the head goes out now, not at the first event
  // The client only listens: its end (or anything it sends) ends the stream at once. This
  // read is also what holds the session while no event is being written.
  stream_.async_read_some(buffer_.prepare(1),
                          [self = this->shared_from_this()](beast::error_code, std::size_t) {
                            self->events_.reset();
                            self->stream_out_.end();
                            detail::close(beast::get_lowest_layer(self->stream_));
                          });
}

template<class NextLayer>
void basic_session<NextLayer>::queue_event(shared_text text) {
  if (!text || text->empty() || stream_out_.ended()) {
    return;
  }
  if (ctx_->stopped) {
    // once: the feed is left and the stream ends, so that the next event does not start a
    // second TLS shutdown beside the first (and beside the read that holds the session)
    events_.reset();
    stream_out_.end();
    stream_out_.drop();
    if (!stream_out_.writing()) {
      do_close(); // (else the write under way closes it when it is done: pump_stream)
    }
    return;
  }
  // the client does not keep up: what it has not taken goes (all but a write under way),
  // and a last event tells it why; the feed is left at once
  if (!stream_out_.push_within_or(std::move(text), ctx_->cfg.events_buffer, [&] {
        return chunk(sse_reset(std::nullopt, "the client did not take the events fast enough ("
                                               + std::to_string(ctx_->cfg.events_buffer)
                                               + " bytes waiting): the stream ends"))
               + "0\r\n\r\n";
      })) {
    events_.reset();
    pump_stream();
  } else if (stream_out_.waiting_bytes() >= response_stream::max_join) {
    pump_stream(); // a whole write's worth waits: no reason to wait for more
  }
}

template<class NextLayer>
void basic_session<NextLayer>::queue_stream(std::string text) {
  if (!stream_out_.started()) {
    start_stream(201, "application/x-ndjson"); // a nodeshell's first node
  }
  stream_out_.push(std::move(text));
  pump_stream();
}

template<class NextLayer>
void basic_session<NextLayer>::pump_stream(shared_joins* joins) {
  if (stream_out_.writing()) {
    return;
  }
  const auto* text = stream_out_.begin_write(joins);
  if (text == nullptr) {
    if (stream_out_.complete()) {
      count(stream_out_.status());
      stream_out_.reset();
      pending_ = {};
      listing_.reset();
      if (keep_alive_) {
        do_read();
      } else {
        do_close();
      }
    }
    return;
  }
  auto expiry = steady_timer::clock_type::now() + ctx_->cfg.request_timeout;
  // a slow client must not hold a listing's snapshot (and its reader slot) for long
  io_by(pages_ ? std::min(expiry, listing_deadline_) : expiry);
  net::async_write(stream_, net::buffer(*text),
                   [self = this->shared_from_this()](beast::error_code ec, size_t) {
                     self->stream_out_.write_done();
                     // between nodes the stream may rest as long as the command takes
                     self->io_deadline_ = steady_timer::time_point::max();
                     if (ec) {
                       // an event stream leaves the feed and ends: a later event must not
                       // start a write on a stream that is being shut down (two writes at
                       // once on one TLS stream)
                       self->events_.reset();
                       self->stream_out_.end();
                       self->stream_out_.drop();
                       self->pages_.reset();
                       if (self->cancel_) { // the client went away: so does its call's work
                         self->cancel_->cancel("The client closed the connection; ended.");
                       }
                       self->do_close();
                       return;
                     }
                     self->request_page();
                     self->pump_stream();
                   });
}

template<class NextLayer>
void basic_session<NextLayer>::refuse(api::errc code, std::string message) {
  auto out = render(routed{}, api::api_result::failure(code, std::move(message)));
  send(out.status, std::move(out.body), false);
}

template<class NextLayer>
void basic_session<NextLayer>::response_head(std::string& head, unsigned status,
                                             const char* content_type, std::optional<size_t> length,
                                             bool keep_alive) const {
  // The head is written by hand: a fixed set of fields, without building a fields container
  // (and into a string whose capacity is kept from one answer to the next)
  head = version_ == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  head += std::to_string(status);
  head += ' ';
  auto reason = bhttp::obsolete_reason(static_cast<bhttp::status>(status));
  head.append(reason.data(), reason.size());
  head += "\r\nServer: clusterws\r\nDate: ";
  head += http_date();
  // answers for one caller must not be kept by a proxy or a browser cache
  head += cacheable_ ? "\r\n" : "\r\nCache-Control: no-store\r\n";
  if (!length || *length > 0) {
    head += "Content-Type: ";
    head += content_type;
    head += "\r\n";
  }
  if (!location_.empty()) {
    head += "Location: ";
    head += location_;
    head += "\r\n";
  }
  head += extra_headers_;
  if (keep_alive != (version_ != 10)) {
    head += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  }
  if (length) {
    head += "Content-Length: ";
    head += std::to_string(*length);
    head += "\r\n\r\n";
  } else {
    head += "Transfer-Encoding: chunked\r\n\r\n";
  }
}

template<class NextLayer>
std::string basic_session<NextLayer>::logged_path() const {
  // decoded first, as the router reads it: `/%74okens/<id>` is a token path too
  std::string path;
  if (!percent_decode(path_, path, false)) {
    path = path_;
  }
  auto at = path.find("/tokens/");
  return at == std::string::npos ? path : path.substr(0, at + 8) + "***"; // ids are secrets
}

template<class NextLayer>
void basic_session<NextLayer>::count(unsigned status) {
  ctx_->mon.answered(route_, method_, status, steady_timer::clock_type::now() - started_);
}

template<class NextLayer>
void basic_session<NextLayer>::send(unsigned status, std::string body, bool keep_alive,
                                    const char* content_type) {
  count(status);
  response_head(head_, status, content_type, body.size(), keep_alive);
  body_ = std::move(body);
  io_by(steady_timer::clock_type::now() + ctx_->cfg.request_timeout);
  // not std::array<const_buffer, 2>: with Boost 1.74 that form ended after the head when the
  // body was large (test: limits_test.a_large_response_arrives_whole)
  net::async_write(
    stream_, beast::buffers_cat(net::buffer(head_), net::buffer(body_)),
    beast::bind_front_handler(&basic_session::on_write, this->shared_from_this(), !keep_alive));
}

template<class NextLayer>
void basic_session<NextLayer>::answer_session(const api::api_result& res) {
  extra_headers_ = std::string{ui_security_headers()};
  if (!res.ok()) {
    auto out = render(pending_, res);
    send(out.status, std::move(out.body), keep_alive_, out.content_type);
    return;
  }
  if (method_ == "DELETE") {
    // logout: the token is gone; the browser forgets the cookie
    extra_headers_ += clear_session_cookie();
    if (ctx_->audit != nullptr) {
      audit(res, 200);
    }
    send(200, {}, keep_alive_);
    return;
  }
  bool login = method_ == "POST";
  const std::string& id = login ? res.token_id : pending_.session_id;
  json_writer w{pending_.render.pretty};
  w.begin_object();
  w.key("user");
  w.value(res.user);
  w.key("csrf");
  w.value(csrf_token(ctx_->csrf_key, id));
  w.key("expire");
  w.value(res.token_expire);
  w.end_object();
  if (login) {
    extra_headers_ += set_session_cookie(id, ctx_->cfg.ui_session.count());
    if (ctx_->audit != nullptr) {
      audit(res, 201); // a login of the web console is recorded (a token's creation is not)
    }
  }
  send(login ? 201 : 200, w.take(), keep_alive_);
}

template<class NextLayer>
void basic_session<NextLayer>::send_ui(ui_answer a, bool head_only) {
  count(a.status);
  extra_headers_ = std::move(a.headers);
  cacheable_ = a.file != nullptr; // the files say `Cache-Control: no-cache` themselves
  body_ = std::move(a.body);
  // a file's bytes are sent from the binary's table as they are, not copied
  std::string_view body = a.file != nullptr ? a.file->body : std::string_view{body_};
  const char* type = a.file != nullptr ? a.file->content_type.data() : "application/json";
  response_head(head_, a.status, type, body.size(), keep_alive_);
  if (head_only || a.status == 304) {
    body = {}; // the length said what a GET would get
  }
  io_by(steady_timer::clock_type::now() + ctx_->cfg.request_timeout);
  net::async_write(
    stream_, beast::buffers_cat(net::buffer(head_), net::buffer(body.data(), body.size())),
    beast::bind_front_handler(&basic_session::on_write, this->shared_from_this(), !keep_alive_));
}

template<class NextLayer>
void basic_session<NextLayer>::on_write(bool close, beast::error_code ec, std::size_t) {
  body_.clear();
  if (!ec && drain_) {
    do_drain(0);
    return;
  }
  if (ec || close) {
    do_close();
    return;
  }
  do_read();
}

template<class NextLayer>
void basic_session<NextLayer>::do_drain(size_t drained) {
  constexpr size_t max_drain = 64u << 20;
  if (drained == 0) {
    detail::expire_after(beast::get_lowest_layer(stream_), std::chrono::seconds(5));
  }
  if (!discard_) {
    discard_ = std::make_unique<std::array<char, 16384>>();
  }
  stream_.async_read_some(net::buffer(*discard_), [self = this->shared_from_this(),
                                                   drained](beast::error_code ec, size_t n) {
    if (ec || drained + n > max_drain) {
      self->do_close();
      return;
    }
    self->do_drain(drained + n);
  });
}

template<class NextLayer>
void basic_session<NextLayer>::do_close() {
  if constexpr (!tls_) {
    beast::error_code ignored;
    stream_.socket().shutdown(net::socket_base::shutdown_send, ignored);
    detail::close(stream_);
  } else {
    detail::expire_after(beast::get_lowest_layer(stream_), std::chrono::seconds(5));
    stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
      detail::close(beast::get_lowest_layer(self->stream_));
    });
  }
}

} // namespace cws::http
