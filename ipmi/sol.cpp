#include "ipmi/sol.hpp"

#include <algorithm>
#include <utility>

namespace cws::ipmi {

namespace {

constexpr uint8_t netfn_app = 0x06;
constexpr uint8_t netfn_transport = 0x0c;
constexpr uint8_t cmd_get_device_id = 0x01;
constexpr uint8_t cmd_activate_payload = 0x48;
constexpr uint8_t cmd_deactivate_payload = 0x49;
constexpr uint8_t cmd_get_sol_config = 0x22;
constexpr uint8_t sol_param_retry = 0x05;
constexpr uint8_t payload_sol = 0x01;
constexpr size_t sol_header = 4;
/// Activate Payload's auxiliary byte: encryption and authentication on, serial alerts
/// deferred while SOL is active (as ipmitool asks).
constexpr uint8_t activate_aux = 0x80 | 0x40 | 0x04;
/// Characters per packet when the BMC's answer does not say (its inbound size minus the
/// header, as ipmi_sim's 32-byte buffer gives).
constexpr size_t fallback_packet_chars = 28;

} // namespace

std::optional<sol_packet> parse_sol_packet(const uint8_t* data, size_t size) {
  if (size < sol_header || (data[0] & 0xf0) != 0 || (data[1] & 0xf0) != 0) {
    return std::nullopt;
  }
  sol_packet p;
  p.seq = data[0];
  p.ack_seq = data[1];
  p.accepted = data[2];
  p.status = data[3];
  p.data.assign(data + sol_header, data + size);
  return p;
}

bytes encode_sol_packet(const sol_packet& p) {
  bytes b(sol_header + p.data.size());
  b[0] = static_cast<uint8_t>(p.seq & 0x0f);
  b[1] = static_cast<uint8_t>(p.ack_seq & 0x0f);
  b[2] = p.accepted;
  b[3] = p.status;
  std::copy(p.data.begin(), p.data.end(), b.begin() + sol_header);
  return b;
}

sol::sol(session s, sol_options o, sol_clock::time_point now) : s_(std::move(s)), o_(o) {
  if (o_.force) {
    at_ = phase::deactivating;
    ask(request{netfn_app, cmd_deactivate_payload, {payload_sol, o_.instance, 0, 0, 0, 0}}, now);
  } else {
    ask(request{netfn_app, cmd_activate_payload, {payload_sol, o_.instance, activate_aux, 0, 0, 0}},
        now);
  }
}

void sol::ask(request r, sol_clock::time_point now) {
  asked_cmd_ = r.cmd;
  s_.ask(std::move(r));
  tries_ = 1;
  request_due_ = now + o_.request_timeout;
  datagrams_.push_back(s_.packet());
}

void sol::event(sol_event::kind k, std::string message, size_t count) {
  events_.push_back(sol_event{k, std::move(message), count});
}

void sol::finish(sol_event e) {
  datagrams_.push_back(s_.close_packet());
  at_ = phase::done;
  in_flight_ = false;
  events_.push_back(std::move(e));
}

void sol::feed(const uint8_t* data, size_t size, sol_clock::time_point now) {
  if (at_ == phase::done) {
    return;
  }
  if (auto body = s_.open(payload::sol, data, size)) {
    // the BMC may send characters as soon as the payload is active: while the console asks
    // for the configuration too
    if (auto p = parse_sol_packet(body->data(), body->size());
        p && (at_ == phase::active || at_ == phase::configuring)) {
      on_packet(*p, now);
    }
    return;
  }
  if (s_.waiting()) {
    if (auto r = s_.answer(data, size)) {
      answered(*r, now);
    }
  }
}

void sol::answered(const response& r, sol_clock::time_point now) {
  switch (at_) {
    case phase::deactivating:
      // "already deactivated" (0x80) is what force hopes for too; any other refusal shows
      // in the activation's answer
      at_ = phase::activating;
      ask(
        request{netfn_app, cmd_activate_payload, {payload_sol, o_.instance, activate_aux, 0, 0, 0}},
        now);
      return;
    case phase::activating: {
      if (r.code == sol_already_active) {
        finish(
          {sol_event::kind::already_active, "SOL payload already active on another session", 0});
        return;
      }
      if (r.code != 0) {
        finish({sol_event::kind::error, completion_text(r.code), 0});
        return;
      }
      // aux (4), inbound payload size (2, LS first), outbound size, port, VLAN
      packet_chars_ = fallback_packet_chars;
      if (r.data.size() >= 6) {
        size_t inbound = static_cast<size_t>(r.data[4]) | static_cast<size_t>(r.data[5]) << 8;
        if (inbound > sol_header) {
          packet_chars_ = std::min(inbound - sol_header, sol_max_packet_chars);
        }
      }
      // an earlier session may have left a packet of the BMC's unacknowledged (a client
      // killed, or gone with the BMC's echo in flight): ipmi_sim keeps waiting for that
      // acknowledgement across activations and holds this console's first characters until
      // its 1 s retry. Flushing its outbound side drops that stale state; the payload has just
      // been activated, so nothing is lost but what the host wrote in the one round trip
      // since. Two packets, sequence numbers 14 and 15: a BMC skips a packet whose number
      // equals the last one it took (a retransmission, to it), and the last one may be an
      // earlier session's; after these the last is 15 and this session's first keystrokes
      // (1, 2, ...) are not taken for retransmissions either.
      for (uint8_t seq : {uint8_t{14}, uint8_t{15}}) {
        send_sol(sol_packet{seq, 0, 0, sol_op_flush_outbound, {}});
      }
      out_seq_ = 15;
      at_ = phase::configuring;
      ask(request{netfn_transport, cmd_get_sol_config, {o_.channel, sol_param_retry, 0, 0}}, now);
      return;
    }
    case phase::configuring:
      // parameter revision, retry count (bits 2:0), retry interval (10 ms units); a BMC that
      // does not say keeps the defaults
      if (r.code == 0 && r.data.size() >= 3) {
        retry_count_ = r.data[1] & 0x07;
        if (r.data[2] != 0) {
          retry_interval_ = std::chrono::milliseconds(10 * r.data[2]);
        }
      }
      at_ = phase::active;
      keepalive_due_ = now + o_.keepalive;
      event(sol_event::kind::active);
      pump(now);
      return;
    case phase::active:
      keepalive_due_ = now + o_.keepalive; // the keepalive's answer: the BMC is there
      return;
    case phase::closing: finish({sol_event::kind::closed, {}, 0}); return;
    case phase::done: return;
  }
}

void sol::send_sol(const sol_packet& p) {
  datagrams_.push_back(s_.seal(payload::sol, encode_sol_packet(p)));
}

void sol::on_packet(const sol_packet& p, sol_clock::time_point now) {
  // the acknowledgement of our packet in flight
  if (p.ack_seq != 0 && in_flight_ && p.ack_seq == flight_.seq) {
    size_t accepted = std::min<size_t>(p.accepted, flight_.data.size());
    keys_.erase(keys_.begin(), keys_.begin() + static_cast<std::ptrdiff_t>(accepted));
    in_flight_ = false;
    if ((p.status & sol_nack) != 0) {
      paused_until_ = now + retry_interval_; // the BMC has no room: the rest goes later
      break_pending_ = break_pending_ || (flight_.status & sol_op_break) != 0;
    }
  }
  if ((p.status & sol_st_break) != 0) {
    event(sol_event::kind::break_detected);
  }
  if (p.seq != 0) {
    if (p.seq == last_in_seq_) {
      // sent again (our acknowledgement was lost): acknowledged again, not delivered twice
      send_sol(sol_packet{0, p.seq, last_in_accepted_, 0, {}});
    } else if (output_.size() >= o_.max_output && !p.data.empty()) {
      send_sol(sol_packet{0, p.seq, 0, sol_nack, {}}); // the caller is behind: sent again later
    } else {
      size_t n = std::min(p.data.size(), o_.max_output - output_.size());
      output_.append(p.data.begin(), p.data.begin() + static_cast<std::ptrdiff_t>(n));
      last_in_seq_ = p.seq;
      last_in_accepted_ = static_cast<uint8_t>(n);
      send_sol(sol_packet{0, p.seq, last_in_accepted_, 0, {}});
    }
  }
  if ((p.status & sol_st_deactivating) != 0) {
    finish({sol_event::kind::lost, "The BMC deactivated Serial-over-LAN", 0});
    return;
  }
  pump(now);
}

void sol::pump(sol_clock::time_point now) {
  if (at_ != phase::active || in_flight_ || now < paused_until_
      || (keys_.empty() && !break_pending_)) {
    return;
  }
  out_seq_ = static_cast<uint8_t>(out_seq_ % 15 + 1);
  flight_ = sol_packet{out_seq_, 0, 0, static_cast<uint8_t>(break_pending_ ? sol_op_break : 0), {}};
  size_t n = std::min(packet_chars_, keys_.size());
  flight_.data.assign(keys_.begin(), keys_.begin() + static_cast<std::ptrdiff_t>(n));
  break_pending_ = false;
  in_flight_ = true;
  flight_tries_ = 1;
  flight_due_ = now + retry_interval_;
  send_sol(flight_);
}

void sol::tick(sol_clock::time_point now) {
  if (at_ == phase::done) {
    return;
  }
  if (s_.waiting() && now >= request_due_) {
    if (tries_ > o_.request_retries) {
      if (at_ == phase::closing) {
        finish({sol_event::kind::closed, {}, 0});
      } else {
        finish({sol_event::kind::lost, "The BMC did not answer", 0});
      }
      return;
    }
    ++tries_;
    request_due_ = now + o_.request_timeout;
    datagrams_.push_back(s_.packet());
  }
  if (at_ != phase::active) {
    return;
  }
  if (!s_.waiting() && now >= keepalive_due_) {
    ask(request{netfn_app, cmd_get_device_id, {}}, now);
  }
  if (in_flight_ && now >= flight_due_) {
    if (flight_tries_ > retry_count_) {
      // every retry unanswered: these keystrokes are given up, the rest goes on
      size_t n = flight_.data.size();
      keys_.erase(keys_.begin(), keys_.begin() + static_cast<std::ptrdiff_t>(n));
      in_flight_ = false;
      event(sol_event::kind::dropped, "keystrokes not acknowledged by the BMC", n);
    } else {
      ++flight_tries_;
      flight_due_ = now + retry_interval_;
      send_sol(flight_); // the same packet, the same sequence number
    }
  }
  pump(now);
}

sol_clock::time_point sol::deadline() const {
  auto d = sol_clock::time_point::max();
  if (at_ == phase::done) {
    return d;
  }
  if (s_.waiting()) {
    d = std::min(d, request_due_);
  } else if (at_ == phase::active) {
    d = std::min(d, keepalive_due_);
  }
  if (in_flight_) {
    d = std::min(d, flight_due_);
  } else if (at_ == phase::active && (!keys_.empty() || break_pending_)) {
    d = std::min(d, paused_until_);
  }
  return d;
}

size_t sol::write(const uint8_t* data, size_t size, sol_clock::time_point now) {
  if (at_ == phase::done || at_ == phase::closing) {
    return 0;
  }
  size_t n = std::min(size, o_.max_keystrokes - std::min(o_.max_keystrokes, keys_.size()));
  keys_.insert(keys_.end(), data, data + n);
  pump(now);
  return n;
}

void sol::send_break(sol_clock::time_point now) {
  if (at_ == phase::done || at_ == phase::closing) {
    return;
  }
  break_pending_ = true;
  pump(now);
}

void sol::close(sol_clock::time_point now) {
  switch (at_) {
    case phase::active:
    case phase::configuring:
      at_ = phase::closing;
      in_flight_ = false;
      ask(request{netfn_app, cmd_deactivate_payload, {payload_sol, o_.instance, 0, 0, 0, 0}}, now);
      return;
    case phase::deactivating:
    case phase::activating: finish({sol_event::kind::closed, {}, 0}); return;
    case phase::closing:
    case phase::done: return;
  }
}

std::vector<bytes> sol::take_datagrams() {
  return std::exchange(datagrams_, {});
}

std::string sol::take_output() {
  return std::exchange(output_, {});
}

std::vector<sol_event> sol::take_events() {
  return std::exchange(events_, {});
}

} // namespace cws::ipmi
