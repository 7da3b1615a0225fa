// libFuzzer: the Serial-over-LAN payload parser and the console state machine
// (ipmi/sol.hpp) take any bytes from the BMC without reading past them, crashing or growing
// past their limits. The first byte picks the target: the parser alone, or a series of SOL
// payloads (split from the input, sealed with the session's keys so they pass the integrity
// check) fed to an active console, with keystrokes, breaks and ticks between them.

#include <chrono>
#include <cstdint>
#include <cstdlib>

#include "ipmi/rmcp.hpp"
#include "ipmi/session_setup.hpp"
#include "ipmi/sol.hpp"

namespace {

using namespace cws::ipmi;

constexpr uint32_t console_sid = 0x11111111;
constexpr uint32_t bmc_sid = 0x22222222;

const session_keys& keys() {
  static const session_keys k = [] {
    handshake h;
    h.user = "admin";
    h.password = "secret";
    return derive_keys(h);
  }();
  return k;
}

/// A LAN-format response to the console's request in `dg` (completion 0, `data`).
bytes answer(const bytes& dg, const bytes& data, uint32_t seq) {
  auto d = parse_datagram(dg.data(), dg.size(), &keys().k1);
  auto msg = d ? decrypt_payload(d->body, keys().k2) : std::nullopt;
  if (!msg || msg->size() < 7) {
    return {};
  }
  bytes r(7 + data.size());
  r[0] = 0x81;
  r[1] = static_cast<uint8_t>((*msg)[1] + 4);
  r[2] = static_cast<uint8_t>(-(r[0] + r[1]));
  r[3] = 0x20;
  r[4] = (*msg)[4];
  r[5] = (*msg)[5];
  std::copy(data.begin(), data.end(), r.begin() + 7);
  uint8_t sum = 0;
  for (size_t i = 3; i < r.size(); ++i) {
    sum = static_cast<uint8_t>(sum + r[i]);
  }
  r.push_back(static_cast<uint8_t>(-sum));
  return wrap_session(console_sid, seq, keys(), r);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  const uint8_t* p = data + 1;
  size_t n = size - 1;
  if (data[0] % 2 == 0) {
    if (auto pk = parse_sol_packet(p, n)) {
      if (pk->data.size() + 4 != n || pk->seq > 15 || pk->ack_seq > 15
          || encode_sol_packet(*pk) != bytes(p, p + n)) {
        std::abort(); // what is accepted is exactly what was given
      }
    }
    return 0;
  }
  // an active console with small limits
  handshake h;
  h.console_sid = console_sid;
  h.bmc_sid = bmc_sid;
  sol_options o;
  o.max_output = 64;
  o.max_keystrokes = 16;
  auto now = sol_clock::time_point{} + std::chrono::seconds(100);
  sol c{session{h, keys()}, o, now};
  uint32_t seq = 1;
  auto dg = c.take_datagrams();
  auto a = answer(dg.at(0), {0, 0, 0, 0, 32, 0, 0, 0x40, 0x6f, 0x02, 0xff, 0xff}, seq++);
  c.feed(a.data(), a.size(), now);
  // the activation is followed by two SOL flush packets, then the configuration request
  bytes cfg;
  for (const auto& d : c.take_datagrams()) {
    if (cfg.empty()) {
      cfg = answer(d, {0x11, 0x03, 0x05}, seq);
    }
  }
  ++seq;
  c.feed(cfg.data(), cfg.size(), now);
  if (c.at() != sol::phase::active) {
    std::abort();
  }
  // the rest: [length, control] then a SOL payload of that length, repeated
  while (n >= 2) {
    size_t len = std::min<size_t>(p[0], n - 2);
    uint8_t control = p[1];
    bytes body(p + 2, p + 2 + len);
    p += 2 + len;
    n -= 2 + len;
    if ((control & 1) != 0) {
      auto sealed = wrap_session(console_sid, seq++, keys(), body, payload::sol);
      c.feed(sealed.data(), sealed.size(), now);
    } else {
      c.feed(body.data(), body.size(), now); // raw noise
    }
    if ((control & 2) != 0) {
      c.write(body.data(), body.size(), now);
    }
    if ((control & 4) != 0) {
      c.send_break(now);
    }
    if ((control & 8) != 0) {
      now += std::chrono::milliseconds(control);
      c.tick(now);
    }
    if ((control & 0x10) != 0) {
      (void)c.take_output();
    }
    for (const auto& d : c.take_datagrams()) {
      if (d.size() > 512) {
        std::abort(); // a datagram never grows with the input
      }
    }
    if (c.queued() > o.max_keystrokes) {
      std::abort();
    }
    (void)c.take_events();
  }
  if (c.take_output().size() > o.max_output) {
    std::abort();
  }
  c.close(now);
  return 0;
}
