// libFuzzer: every RMCP+ parser of the IPMI engine (ipmi/rmcp.hpp) takes any datagram without
// reading past it or crashing; what a parser accepts is consistent with what was given. The
// first byte picks the parser; the rest is the datagram. Answers built by the encoder with a
// fixed key are parsed back, so the authenticated and encrypted paths are searched too. The
// session set-up and an established session (ipmi/session_setup.hpp) take the datagrams too.

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "ipmi/chassis.hpp"
#include "ipmi/rmcp.hpp"
#include "ipmi/session_setup.hpp"

namespace {

using namespace cws::ipmi;

const session_keys& keys() {
  static const session_keys k = [] {
    handshake h;
    h.user = "admin";
    h.password = "secret";
    return derive_keys(h);
  }();
  return k;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  const uint8_t* p = data + 1;
  size_t n = size - 1;
  bytes body(p, p + n);
  switch (data[0] % 8) {
    case 0:
      if (auto d = parse_datagram(p, n, nullptr)) {
        if (d->authenticated || d->body.size() > n) {
          std::abort(); // nothing authenticated is accepted without a key
        }
      }
      {
        session_setup s{"admin", "secret", privilege_admin, 0x11223344, rand16{}};
        if (s.feed(p, n) == session_setup::progress::established) {
          std::abort(); // one datagram cannot set a session up
        }
      }
      break;
    case 1:
      if (auto d = parse_datagram(p, n, &keys().k1)) {
        if (d->encrypted) {
          (void)decrypt_payload(d->body, keys().k2);
        }
      }
      {
        session s{handshake{}, keys()};
        s.ask(request{0x00, 0x01, {}});
        if (s.answer(p, n) && s.waiting()) {
          std::abort(); // an answer ends the wait
        }
      }
      break;
    case 2: (void)decrypt_payload(body, keys().k2); break;
    case 3:
      if (auto r = parse_response(p, n)) {
        if (r->data.size() + 8 != n) {
          std::abort();
        }
      }
      break;
    case 4: (void)parse_open_session_response(body); break;
    case 5: (void)parse_rakp2(body); break;
    case 6: (void)parse_rakp4(body); break;
    case 7: {
      // an in-session answer built from the input: it must come back whole
      auto msg = bytes(p, p + std::min<size_t>(n, 200));
      auto packet = wrap_session(1, 2, keys(), msg);
      auto d = parse_datagram(packet.data(), packet.size(), &keys().k1);
      auto plain = d ? decrypt_payload(d->body, keys().k2) : std::nullopt;
      if (!plain || *plain != msg) {
        std::abort();
      }
      // and the chassis conversations take any answer to it
      response r;
      r.cmd = n > 0 ? p[0] : 0;
      r.code = n > 1 ? p[1] : 0;
      r.data = msg;
      (void)power_action(power_op::boot)->next(r);
      (void)boot_action(boot_op::stat)->next(r);
      break;
    }
  }
  return 0;
}
