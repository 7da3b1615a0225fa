#pragma once

// The definitions of ws_console: included by session.ipp, which hands its connections over.

#include "http/json_writer.hpp"
#include "http/ws_console.hpp"
#include "http/ws_session.hpp"

namespace cws::http {

namespace detail_ws_console {

/// Sets the kernel send buffer of a layer that has a socket (TCP or local; a test stream has
/// none, and keeps its own).
template<class Layer>
auto set_send_buffer(Layer& layer, int bytes, int) -> decltype(layer.socket(), void()) {
  beast::error_code ignored;
  layer.socket().set_option(net::socket_base::send_buffer_size(bytes), ignored);
}

template<class Layer>
void set_send_buffer(Layer&, int, long) {
}

} // namespace detail_ws_console

template<class Stream>
ws_console<Stream>::ws_console(Stream&& stream, std::shared_ptr<session_context> ctx,
                               std::string client, std::string peer_key, bool local)
    : ws_(std::move(stream)), strand_(ws_.get_executor()), ctx_(std::move(ctx)),
      client_(std::move(client)), peer_key_(std::move(peer_key)), local_(local) {
  ++ctx_->connections;
  if (local_) {
    ++ctx_->local_connections;
  }
}

template<class Stream>
ws_console<Stream>::~ws_console() {
  att_.reset(); // detaches
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
void ws_console<Stream>::run(bhttp::request<bhttp::string_body> req, console_request what,
                             std::string user) {
  what_ = std::move(what);
  user_ = std::move(user);
  req_ = std::move(req);
  // Beast pings a client that sends nothing for half of ws_idle_timeout_s, and closes one
  // that does not answer
  ws_.set_option(websocket::stream_base::timeout{ctx_->cfg.ws_handshake_timeout,
                                                 ctx_->cfg.ws_idle_timeout, true});
  ws_.set_option(websocket::stream_base::decorator(
    [](websocket::response_type& res) { res.set(bhttp::field::server, "clusterws"); }));
  ws_.read_message_max(ctx_->cfg.ws_max_message);
  ws_.async_accept(req_,
                   beast::bind_front_handler(&ws_console::on_accept, this->shared_from_this()));
}

template<class Stream>
template<class F>
void ws_console<Stream>::later(F f) {
  std::weak_ptr<ws_console> weak = this->shared_from_this();
  net::post(strand_, [weak, f = std::move(f)]() mutable {
    if (auto s = weak.lock()) {
      f(*s);
    }
  });
}

template<class Stream>
void ws_console<Stream>::on_accept(beast::error_code ec) {
  req_ = {};
  if (ec || ctx_->stopped) {
    return;
  }
  idle_ = true; // a console lasts until its client leaves: a stop closes it
  // a fixed send buffer: without it the kernel grows it to 4 MiB for a watcher that stopped
  // reading, which then takes that long to reach console_watcher_queue_bytes and be dropped
  if (ctx_->cfg.console_watcher_sndbuf > 0) {
    detail_ws_console::set_send_buffer(beast::get_lowest_layer(ws_),
                                       static_cast<int>(ctx_->cfg.console_watcher_sndbuf), 0);
  }
  ++ctx_->idle;
  std::weak_ptr<ws_console> weak = this->shared_from_this();
  auto ex = get_executor();
  stop_id_ = ctx_->upgraded.add([weak, ex] {
    net::post(ex, [weak] {
      if (auto s = weak.lock()) {
        s->going_away();
      }
    });
  });
  actors::console_attach a;
  a.node = what_.node;
  a.mode = actors::parse_console_mode(what_.mode).value_or(actors::console_mode::rw);
  a.replay = what_.replay;
  a.user = user_;
  a.client = client_;
  // the bridge's callbacks run on actor threads: each is posted through the strand, in order
  // (weakly: the bridge lives until this socket detaches)
  std::weak_ptr<ws_console> w = this->shared_from_this();
  auto post = [w](auto f) {
    if (auto s = w.lock()) {
      s->later(std::move(f));
    }
  };
  actors::console_handlers h;
  h.attached = [post](actors::console_attach_reply r) {
    post([r = std::move(r)](ws_console& s) mutable { s.on_attached(std::move(r)); });
  };
  h.bytes = [post](std::string b) {
    post([b = std::move(b)](ws_console& s) mutable { s.queue(outgoing::binary, std::move(b)); });
  };
  h.notice = [post](actors::console_notice n) {
    post([n = std::move(n)](ws_console& s) { s.queue(outgoing::text, console_notice_json(n)); });
  };
  h.detached = [post](std::string why) {
    post([why = std::move(why)](ws_console& s) {
      json_writer j;
      j.begin_object();
      j.key("detached");
      j.value(why);
      j.end_object();
      s.close_with(why == "too slow" ? ws_close::too_slow : websocket::close_code::normal, why,
                   j.take());
    });
  };
  att_ = ctx_->svc->attach_console(std::move(a), std::move(h));
  if (!att_) {
    close_with(websocket::close_code::internal_error, "consoles are not enabled",
               R"({"error":"Consoles are not enabled on this service."})");
    return;
  }
  do_read();
}

template<class Stream>
void ws_console<Stream>::on_attached(actors::console_attach_reply r) {
  json_writer j;
  j.begin_object();
  if (r.error != api::errc::none) {
    j.key("error");
    j.value(r.message);
    j.end_object();
    att_.reset();
    close_with(websocket::close_code::policy_error, "not attached", j.take());
    return;
  }
  j.key("attached");
  j.value(r.writer ? "rw" : "ro");
  j.key("holder");
  j.value(r.holder);
  j.key("state");
  j.value(r.state);
  if (!r.bumped.empty()) {
    j.key("bumped");
    j.value(r.bumped);
  }
  j.end_object();
  // before the bytes the bridge kept for after this answer (they are posted after it)
  queue(outgoing::text, j.take());
}

template<class Stream>
void ws_console<Stream>::do_read() {
  ws_.async_read(in_, beast::bind_front_handler(&ws_console::on_read, this->shared_from_this()));
}

template<class Stream>
void ws_console<Stream>::on_read(beast::error_code ec, std::size_t) {
  if (ec) {
    end();
    return;
  }
  auto data = beast::buffers_to_string(in_.data());
  in_.consume(in_.size());
  if (att_ && !closing_) {
    if (ws_.got_binary()) {
      att_->input(std::move(data));
    } else if (data == "break") {
      att_->send_break();
    } else if (auto mode = actors::parse_console_mode(data)) {
      att_->reattach(*mode); // rcons's ^Ecf, ^Ecs, ^Eca: a new {"attached":..} follows
    } else {
      queue(outgoing::text, R"({"notice":"error","text":"unknown command: text frames are )"
                            R"('break', 'rw', 'ro' or 'force'; keystrokes are binary frames"})");
    }
  }
  do_read();
}

template<class Stream>
void ws_console<Stream>::queue(typename outgoing::kind_t kind, std::string data) {
  if (ctx_->stopped) {
    end();
    return;
  }
  if (closing_ || data.empty()) {
    return;
  }
  queue_.push_back({kind, std::move(data), {}});
  pump();
}

template<class Stream>
void ws_console<Stream>::close_with(websocket::close_code code, std::string reason,
                                    std::string last) {
  if (closing_) {
    return;
  }
  closing_ = true;
  att_.reset();
  if (!last.empty()) {
    queue_.push_back({outgoing::text, std::move(last), {}});
  }
  queue_.push_back({outgoing::close, std::move(reason), code});
  pump();
}

template<class Stream>
void ws_console<Stream>::pump() {
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
    auto& sent = self->queue_.front();
    if (sent.kind == outgoing::binary && self->att_) {
      self->att_->ack(sent.data.size());
    }
    self->queue_.pop_front();
    self->pump();
  };
  switch (next.kind) {
    case outgoing::text:
    case outgoing::binary:
      ws_.text(next.kind == outgoing::text);
      ws_.async_write(net::buffer(next.data), std::move(done));
      break;
    case outgoing::close:
      ws_.async_close(websocket::close_reason{next.code, next.data}, std::move(done));
      break;
  }
}

template<class Stream>
void ws_console<Stream>::going_away() {
  if (idle_) {
    idle_ = false;
    --ctx_->idle;
  }
  close_with(ws_close::going_away, "the service is stopping");
}

template<class Stream>
void ws_console<Stream>::end() {
  closing_ = true;
  att_.reset();
  while (queue_.size() > (writing_ ? 1 : 0)) {
    queue_.pop_back();
  }
  if (idle_) {
    idle_ = false;
    --ctx_->idle;
  }
}

} // namespace cws::http
