#include "ipmi/session_setup.hpp"

#include <openssl/rand.h>
#include <utility>

namespace cws::ipmi {

namespace {

constexpr uint8_t netfn_app = 0x06;
constexpr uint8_t cmd_set_privilege = 0x3b;
constexpr uint8_t cmd_close_session = 0x3c;

uint32_t random_sid() {
  uint32_t sid = 0;
  RAND_bytes(reinterpret_cast<uint8_t*>(&sid), sizeof sid);
  return sid;
}

rand16 random16() {
  rand16 r{};
  RAND_bytes(r.data(), static_cast<int>(r.size()));
  return r;
}

} // namespace

// -- session ------------------------------------------------------------------------

session::session(handshake h, session_keys keys) : h_(std::move(h)), keys_(keys) {
  // nop
}

void session::ask(request r) {
  rq_seq_ = static_cast<uint8_t>((rq_seq_ + 1) & 0x3f);
  pending_seq_ = rq_seq_;
  pending_ = std::move(r);
}

bytes session::wrap(const request& r, uint8_t seq) {
  return wrap_session(h_.bmc_sid, out_seq_++, keys_, encode_request(r, seq));
}

bytes session::packet() {
  return pending_ ? wrap(*pending_, pending_seq_) : bytes{};
}

std::optional<response> session::answer(const uint8_t* data, size_t size) {
  auto d = parse_datagram(data, size, &keys_.k1);
  if (!d || d->type != payload::ipmi || !d->encrypted || d->session_id != h_.console_sid
      || !pending_) {
    return std::nullopt;
  }
  auto plain = decrypt_payload(d->body, keys_.k2);
  auto r = plain ? parse_response(plain->data(), plain->size()) : std::nullopt;
  if (!r || r->seq != pending_seq_ || r->cmd != pending_->cmd || r->netfn != pending_->netfn) {
    return std::nullopt;
  }
  pending_.reset();
  return r;
}

bytes session::close_packet() {
  bytes sid;
  for (int i = 0; i < 4; ++i) {
    sid.push_back(static_cast<uint8_t>(h_.bmc_sid >> (8 * i)));
  }
  pending_.reset();
  rq_seq_ = static_cast<uint8_t>((rq_seq_ + 1) & 0x3f);
  return wrap(request{netfn_app, cmd_close_session, sid}, rq_seq_);
}

bytes session::seal(payload type, const bytes& body) {
  return wrap_session(h_.bmc_sid, out_seq_++, keys_, body, type);
}

std::optional<bytes> session::open(payload type, const uint8_t* data, size_t size) const {
  auto d = parse_datagram(data, size, &keys_.k1);
  if (!d || d->type != type || !d->encrypted || !d->authenticated
      || d->session_id != h_.console_sid) {
    return std::nullopt;
  }
  return decrypt_payload(d->body, keys_.k2);
}

// -- session_setup ------------------------------------------------------------------

session_setup::session_setup(std::string user, std::string password, uint8_t role)
    : session_setup(std::move(user), std::move(password), role, random_sid(), random16()) {
  // nop
}

session_setup::session_setup(std::string user, std::string password, uint8_t role,
                             uint32_t console_sid, const rand16& console_rand) {
  h_.console_sid = console_sid | 1; // never 0: 0 is "no session"
  h_.console_rand = console_rand;
  h_.user = std::move(user);
  h_.password = std::move(password);
  h_.role = role;
  packet_ = wrap_plain(payload::open_request, open_session_request(tag_, h_.console_sid, role));
}

bytes session_setup::packet() {
  return at_ == phase::privilege ? session_.packet() : packet_;
}

session_setup::progress session_setup::fail(std::string message) {
  at_ = phase::failed;
  message_ = std::move(message);
  return progress::failed;
}

session_setup::progress session_setup::send(phase next, bytes packet) {
  at_ = next;
  ++tag_;
  packet_ = std::move(packet);
  return progress::next;
}

session_setup::progress session_setup::feed(const uint8_t* data, size_t size) {
  if (at_ == phase::privilege) {
    auto r = session_.answer(data, size);
    if (!r) {
      return progress::ignored;
    }
    if (r->code != 0) {
      return fail(completion_text(r->code));
    }
    at_ = phase::established;
    return progress::established;
  }
  auto d = parse_datagram(data, size, nullptr);
  if (!d) {
    return progress::ignored;
  }
  // each answer must carry the tag of our message and our session id: anything else is a
  // late answer to an earlier try, or not for us
  switch (at_) {
    case phase::opening: {
      auto r
        = d->type == payload::open_response ? parse_open_session_response(d->body) : std::nullopt;
      if (!r || r->tag != tag_ || r->console_sid != h_.console_sid) {
        return progress::ignored;
      }
      if (r->status != 0) {
        return fail(status_text(r->status));
      }
      if (r->auth != 1 || r->integrity != 1 || r->confidentiality != 1) {
        return fail("The BMC did not accept cipher suite 3");
      }
      h_.bmc_sid = r->bmc_sid;
      return send(phase::rakp1, wrap_plain(payload::rakp1, rakp1(tag_ + 1, h_)));
    }
    case phase::rakp1: {
      auto r = d->type == payload::rakp2 ? parse_rakp2(d->body) : std::nullopt;
      if (!r || r->tag != tag_ || r->console_sid != h_.console_sid) {
        return progress::ignored;
      }
      if (r->status != 0) {
        return fail(status_text(r->status));
      }
      h_.bmc_rand = r->bmc_rand;
      h_.bmc_guid = r->bmc_guid;
      if (!rakp2_valid(h_, r->code)) {
        return fail("Incorrect password provided");
      }
      keys_ = derive_keys(h_);
      return send(phase::rakp3, wrap_plain(payload::rakp3, rakp3(tag_ + 1, h_)));
    }
    case phase::rakp3: {
      auto r = d->type == payload::rakp4 ? parse_rakp4(d->body) : std::nullopt;
      if (!r || r->tag != tag_ || r->console_sid != h_.console_sid) {
        return progress::ignored;
      }
      if (r->status != 0) {
        return fail(status_text(r->status));
      }
      if (!rakp4_valid(h_, keys_, r->icv)) {
        return fail("Invalid integrity check value");
      }
      session_ = session{h_, keys_};
      session_.ask(request{netfn_app, cmd_set_privilege, {h_.role}});
      at_ = phase::privilege;
      return progress::next;
    }
    default: return progress::ignored;
  }
}

session session_setup::take() {
  return std::move(session_);
}

} // namespace cws::ipmi
