#pragma once

// The definitions of ws_session: included by session.ipp, which hands its connections over.

#include "http/event_feed.hpp"
#include "http/ws_session.hpp"

namespace cws::http {

template<class Stream>
ws_session<Stream>::ws_session(Stream&& stream, std::shared_ptr<session_context> ctx,
                               std::string client, std::string peer_key, bool local)
    : ws_(std::move(stream)), ctx_(std::move(ctx)), client_(std::move(client)),
      peer_key_(std::move(peer_key)), local_(local) {
  ++ctx_->connections;
  if (local_) {
    ++ctx_->local_connections;
  }
}

template<class Stream>
ws_session<Stream>::~ws_session() {
  --ctx_->connections;
  if (local_) {
    --ctx_->local_connections;
  }
  if (!peer_key_.empty()) {
    ctx_->peers.give(peer_key_);
  }
  if (idle_) {
    --ctx_->idle;
  }
  if (stop_id_ != 0) {
    ctx_->upgraded.remove(stop_id_);
  }
}

template<class Stream>
void ws_session<Stream>::run_events(bhttp::request<bhttp::string_body> req, event_filter filter,
                                    std::optional<uint64_t> after) {
  filter_ = std::move(filter);
  after_ = after;
  req_ = std::move(req);
  // Beast's own deadlines: the 101 (and the closing handshake) within ws_handshake_timeout_s,
  // and a client that sends nothing (not even the pong of a heartbeat) for ws_idle_timeout_s
  // is closed; the pings are the feed's heartbeats (on_heartbeat)
  ws_.set_option(websocket::stream_base::timeout{ctx_->cfg.ws_handshake_timeout,
                                                 ctx_->cfg.ws_idle_timeout, false});
  ws_.set_option(websocket::stream_base::decorator(
    [](websocket::response_type& res) { res.set(bhttp::field::server, "clusterws"); }));
  ws_.read_message_max(ctx_->cfg.ws_max_message);
  ws_.async_accept(req_,
                   beast::bind_front_handler(&ws_session::on_accept, this->shared_from_this()));
}

template<class Stream>
void ws_session<Stream>::on_accept(beast::error_code ec) {
  req_ = {};
  if (ec || ctx_->stopped) {
    return; // (the connection goes with this)
  }
  idle_ = true; // an open events socket lasts until its client leaves: a stop closes it
  ++ctx_->idle;
  events_ = subscribe_events(*ctx_, after_.value_or(actors::from_now), this->shared_from_this());
  if (!events_) {
    close_with(websocket::close_code::internal_error, "the event stream is not enabled");
    return;
  }
  std::weak_ptr<ws_session> weak = this->shared_from_this();
  auto ex = get_executor();
  stop_id_ = ctx_->upgraded.add([weak, ex] {
    net::post(ex, [weak] {
      if (auto s = weak.lock()) {
        s->going_away();
      }
    });
  });
  do_read();
}

template<class Stream>
void ws_session<Stream>::do_read() {
  ws_.async_read(in_, beast::bind_front_handler(&ws_session::on_read, this->shared_from_this()));
}

template<class Stream>
void ws_session<Stream>::on_read(beast::error_code ec, std::size_t) {
  if (ec) {
    // the client closed (Beast answered its close), went away, sent a message over
    // ws_max_message_bytes (Beast closed with 1009) or nothing for ws_idle_timeout_s
    end();
    return;
  }
  // pings and pongs never complete a read: this is a message, which the events socket takes
  // none of
  in_.consume(in_.size());
  close_with(ws_close::unexpected_message, "the events socket takes no messages");
}

template<class Stream>
void ws_session<Stream>::on_changes(change_texts& texts) {
  queue_event(texts.ws_frame(filter_));
}

template<class Stream>
void ws_session<Stream>::on_activity(const actors::activity& a) {
  using kind = actors::activity::kind;
  std::string data;
  const char* name = "";
  switch (a.type) {
    case kind::job: data = job_json(a.job, a.what, filter_), name = "job"; break;
    case kind::power: data = power_json(a.node, a.state, filter_), name = "power"; break;
    case kind::servicenode:
      data = servicenode_json(a.node, a.what, a.state, filter_), name = "servicenode";
      break;
    case kind::console:
      data = console_json(a.node, a.what, a.user, a.state, filter_), name = "console";
      break;
  }
  if (!data.empty()) { // live only: no id
    queue_event(ws_event(std::nullopt, name, data));
  }
}

template<class Stream>
void ws_session<Stream>::on_reset(uint64_t seq) {
  queue_event(ws_event(seq, "reset", reset_json(seq, missed_changes_reason)));
}

template<class Stream>
void ws_session<Stream>::on_heartbeat() {
  if (ctx_->stopped) {
    end();
    return;
  }
  if (!closing_ && !writing_ && queue_.empty()) {
    queue_.push_back({outgoing::ping, {}, {}});
    pump();
  } // else frames are on their way: they are the sign of life
}

template<class Stream>
void ws_session<Stream>::queue_event(std::string frame) {
  if (ctx_->stopped) {
    end();
    return;
  }
  if (closing_ || frame.empty()) {
    return;
  }
  if (queued_ >= ctx_->cfg.events_buffer) {
    // as the SSE stream: what the client did not take goes, a last event tells it why, and
    // the feed is left at once (a slow consumer never slows a writer)
    events_.reset();
    auto why = "the client did not take the events fast enough ("
               + std::to_string(ctx_->cfg.events_buffer) + " bytes waiting): the stream ends";
    close_with(ws_close::too_slow, "too slow",
               ws_event(std::nullopt, "reset", reset_json(std::nullopt, why)));
    return;
  }
  queued_ += frame.size();
  queue_.push_back({outgoing::text, std::move(frame), {}});
  pump();
}

template<class Stream>
void ws_session<Stream>::close_with(websocket::close_code code, std::string reason,
                                    std::string last) {
  if (closing_) {
    return;
  }
  closing_ = true;
  events_.reset();
  while (queue_.size() > (writing_ ? 1 : 0)) {
    queue_.pop_back();
  }
  if (!last.empty()) {
    queue_.push_back({outgoing::text, std::move(last), {}});
  }
  queue_.push_back({outgoing::close, std::move(reason), code});
  pump();
}

template<class Stream>
void ws_session<Stream>::pump() {
  if (writing_ || queue_.empty()) {
    return;
  }
  writing_ = true;
  auto& next = queue_.front();
  auto done = [self = this->shared_from_this()](beast::error_code ec, std::size_t = 0) {
    self->writing_ = false;
    if (ec) {
      self->end();
      return;
    }
    if (self->queue_.front().kind == outgoing::text) {
      self->queued_ -= std::min(self->queued_, self->queue_.front().data.size());
    }
    self->queue_.pop_front();
    self->pump();
  };
  switch (next.kind) {
    case outgoing::text:
      ws_.text(true);
      ws_.async_write(net::buffer(next.data), std::move(done));
      break;
    case outgoing::ping: ws_.async_ping({}, std::move(done)); break;
    case outgoing::close:
      ws_.async_close(websocket::close_reason{next.code, next.data}, std::move(done));
      break;
  }
}

template<class Stream>
void ws_session<Stream>::going_away() {
  if (idle_) {
    idle_ = false; // the stop's drain waits for the closing handshake now
    --ctx_->idle;
  }
  close_with(ws_close::going_away, "the service is stopping");
}

template<class Stream>
void ws_session<Stream>::end() {
  closing_ = true;
  events_.reset();
  while (queue_.size() > (writing_ ? 1 : 0)) {
    queue_.pop_back();
  }
  if (idle_) {
    idle_ = false;
    --ctx_->idle;
  }
}

} // namespace cws::http
