// Serial-over-LAN without a socket: a fake BMC (its side of IPMI 2.0 section 15 written out
// from the spec, on the same rmcp helpers) answers the datagrams the console asks to send.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "ipmi/sol.hpp"

namespace {

using namespace cws::ipmi;
using namespace std::chrono_literals;
using kind = sol_event::kind;

constexpr uint32_t console_sid = 0x11111111;
constexpr uint32_t bmc_sid = 0x22222222;

session_keys test_keys() {
  handshake h;
  h.user = "admin";
  h.password = "secret";
  return derive_keys(h);
}

session console_session() {
  handshake h;
  h.console_sid = console_sid;
  h.bmc_sid = bmc_sid;
  return session{h, test_keys()};
}

bytes to_bytes(const std::string& s) {
  return bytes(s.begin(), s.end());
}

/// The BMC's side: answers IPMI requests as a SOL-capable BMC does and records SOL packets.
struct fake_bmc {
  session_keys keys = test_keys();
  uint32_t seq = 1;
  uint8_t activate_code = 0;
  uint16_t inbound = 32;
  uint8_t config_code = 0;
  bytes config{0x11, 0x02, 0x0a}; ///< revision, 2 retries, 100 ms
  bool silent = false;            ///< answers nothing
  bool answer_config = true;      ///< answers Get SOL Configuration
  std::vector<uint8_t> cmds;      ///< the IPMI commands seen, in order
  std::vector<sol_packet> from_console;
  unsigned flushes = 0; ///< SOL packets flushing the BMC's outbound side

  bytes reply(const bytes& msg, uint8_t code, const bytes& data) {
    bytes r(7 + data.size());
    r[0] = 0x81;
    r[1] = static_cast<uint8_t>(msg[1] + 4);
    r[3] = 0x20;
    r[4] = msg[4];
    r[5] = msg[5];
    r[6] = code;
    std::copy(data.begin(), data.end(), r.begin() + 7);
    r[2] = static_cast<uint8_t>(-(r[0] + r[1]));
    uint8_t sum = 0;
    for (size_t i = 3; i < r.size(); ++i) {
      sum = static_cast<uint8_t>(sum + r[i]);
    }
    r.push_back(static_cast<uint8_t>(-sum));
    return wrap_session(console_sid, seq++, keys, r);
  }

  /// A SOL packet to the console.
  bytes sol(sol_packet p) {
    return wrap_session(console_sid, seq++, keys, encode_sol_packet(p), payload::sol);
  }

  /// The BMC's answers to the console's datagrams.
  std::vector<bytes> answer(const std::vector<bytes>& in) {
    std::vector<bytes> out;
    for (const auto& dg : in) {
      auto d = parse_datagram(dg.data(), dg.size(), &keys.k1);
      EXPECT_TRUE(d && d->session_id == bmc_sid);
      auto msg = d ? decrypt_payload(d->body, keys.k2) : std::nullopt;
      if (!msg) {
        ADD_FAILURE() << "not a sealed datagram";
        continue;
      }
      if (d->type == payload::sol) {
        auto p = parse_sol_packet(msg->data(), msg->size());
        EXPECT_TRUE(p);
        if (p && p->ack_seq == 0 && p->status == sol_op_flush_outbound && p->data.empty()) {
          ++flushes; // the activation's flush, kept apart from the packets the tests follow
          continue;
        }
        from_console.push_back(*p);
        continue;
      }
      uint8_t cmd = (*msg)[5];
      cmds.push_back(cmd);
      if (silent || cmd == 0x3c) {
        continue;
      }
      switch (cmd) {
        case 0x48:
          out.push_back(
            reply(*msg, activate_code,
                  {0, 0, 0, 0, static_cast<uint8_t>(inbound), static_cast<uint8_t>(inbound >> 8), 0,
                   0x40, 0x81, 0x25, 0xff, 0xff}));
          break;
        case 0x22:
          if (answer_config) {
            out.push_back(reply(*msg, config_code, config));
          }
          break;
        default: out.push_back(reply(*msg, 0, {})); break;
      }
    }
    return out;
  }
};

/// A console and its BMC, and a clock.
struct bench {
  fake_bmc bmc;
  sol_clock::time_point now = sol_clock::time_point{} + 1000s;
  std::optional<sol> c;
  std::vector<sol_event> events;

  explicit bench(sol_options o = {}, bool start = true) {
    if (start) {
      open(o);
    }
  }

  void open(sol_options o) {
    c.emplace(console_session(), o, now);
    exchange();
  }

  /// Datagrams go back and forth until both sides are quiet.
  void exchange() {
    for (int i = 0; i < 20; ++i) {
      auto replies = bmc.answer(c->take_datagrams());
      if (replies.empty()) {
        break;
      }
      for (const auto& r : replies) {
        c->feed(r.data(), r.size(), now);
      }
    }
    auto e = c->take_events();
    events.insert(events.end(), e.begin(), e.end());
  }

  void from_bmc(sol_packet p) {
    auto d = bmc.sol(std::move(p));
    c->feed(d.data(), d.size(), now);
    exchange();
  }

  void advance(std::chrono::milliseconds d) {
    now += d;
    c->tick(now);
    exchange();
  }

  void type(const std::string& s) {
    EXPECT_EQ(c->write(reinterpret_cast<const uint8_t*>(s.data()), s.size(), now), s.size());
    exchange();
  }

  bool saw(kind k) const {
    for (const auto& e : events) {
      if (e.what == k) {
        return true;
      }
    }
    return false;
  }
};

std::string text(const sol_packet& p) {
  return std::string(p.data.begin(), p.data.end());
}

TEST(sol, activates_the_payload_and_takes_the_retry_configuration_from_the_bmc) {
  bench b;
  EXPECT_EQ(b.c->at(), sol::phase::active);
  EXPECT_EQ(b.bmc.cmds, (std::vector<uint8_t>{0x48, 0x22}));
  EXPECT_TRUE(b.saw(kind::active));
  EXPECT_EQ(b.c->packet_chars(), 28u); // inbound 32 less the header
  EXPECT_EQ(b.c->retry_count(), 2u);
  EXPECT_EQ(b.c->retry_interval(), 100ms);
}

TEST(sol, keeps_default_retries_when_the_bmc_does_not_give_its_configuration) {
  bench b{sol_options{}, false};
  b.bmc.config_code = 0x80;
  b.open({});
  EXPECT_EQ(b.c->at(), sol::phase::active);
  EXPECT_EQ(b.c->retry_count(), sol_default_retry_count);
  EXPECT_EQ(b.c->retry_interval(), sol_default_retry_interval);
}

TEST(sol, payload_already_active_is_reported_distinctly_and_the_session_closed) {
  bench b{sol_options{}, false};
  b.bmc.activate_code = sol_already_active;
  b.open({});
  EXPECT_EQ(b.c->at(), sol::phase::done);
  EXPECT_TRUE(b.saw(kind::already_active));
  EXPECT_FALSE(b.saw(kind::error));
  EXPECT_EQ(b.bmc.cmds.back(), 0x3c); // Close Session
}

TEST(sol, an_activated_payload_flushes_the_bmcs_outbound_side_and_a_refused_one_does_not) {
  bench b;
  EXPECT_EQ(b.c->at(), sol::phase::active);
  // two (sequence numbers 14 and 15: one of them is not the BMC's last), then keystrokes from 1
  EXPECT_EQ(b.bmc.flushes, 2u);
  EXPECT_TRUE(b.bmc.from_console.empty());
  b.type("k");
  ASSERT_EQ(b.bmc.from_console.size(), 1u);
  EXPECT_EQ(b.bmc.from_console[0].seq, 1);
  b.from_bmc({1, 1, 1, 0, to_bytes("k")});
  EXPECT_EQ(b.bmc.flushes, 2u);

  bench refused{sol_options{}, false};
  refused.bmc.activate_code = sol_already_active;
  refused.open({});
  EXPECT_EQ(refused.bmc.flushes, 0u);
}

TEST(sol, another_activation_failure_is_an_error_with_the_completion_code_in_words) {
  bench b{sol_options{}, false};
  b.bmc.activate_code = 0xd4;
  b.open({});
  ASSERT_FALSE(b.events.empty());
  EXPECT_EQ(b.events.back().what, kind::error);
  EXPECT_EQ(b.events.back().message, "Insufficient privilege level");
}

TEST(sol, force_deactivates_the_payload_before_activating_it) {
  sol_options o;
  o.force = true;
  bench b{o};
  EXPECT_EQ(b.bmc.cmds, (std::vector<uint8_t>{0x49, 0x48, 0x22}));
  EXPECT_EQ(b.c->at(), sol::phase::active);
}

TEST(sol, characters_from_the_bmc_are_delivered_and_acknowledged_with_their_count) {
  bench b;
  b.from_bmc({1, 0, 0, 0, to_bytes("hello")});
  EXPECT_EQ(b.c->take_output(), "hello");
  ASSERT_EQ(b.bmc.from_console.size(), 1u);
  auto ack = b.bmc.from_console[0];
  EXPECT_EQ(ack.seq, 0);
  EXPECT_EQ(ack.ack_seq, 1);
  EXPECT_EQ(ack.accepted, 5);
  EXPECT_EQ(ack.status & sol_nack, 0);
}

TEST(sol, characters_sent_while_the_configuration_is_asked_for_are_delivered) {
  bench b{sol_options{}, false};
  b.bmc.answer_config = false;
  b.open({});
  ASSERT_EQ(b.c->at(), sol::phase::configuring);
  b.from_bmc({1, 0, 0, 0, to_bytes("early")});
  EXPECT_EQ(b.c->take_output(), "early");
  ASSERT_EQ(b.bmc.from_console.size(), 1u);
  EXPECT_EQ(b.bmc.from_console[0].ack_seq, 1);
}

TEST(sol, a_packet_sent_again_is_acknowledged_again_but_delivered_once) {
  bench b;
  b.from_bmc({3, 0, 0, 0, to_bytes("abc")});
  b.from_bmc({3, 0, 0, 0, to_bytes("abc")});
  b.from_bmc({4, 0, 0, 0, to_bytes("def")});
  EXPECT_EQ(b.c->take_output(), "abcdef");
  ASSERT_EQ(b.bmc.from_console.size(), 3u);
  EXPECT_EQ(b.bmc.from_console[1].ack_seq, 3);
  EXPECT_EQ(b.bmc.from_console[1].accepted, 3);
  EXPECT_EQ(b.bmc.from_console[2].ack_seq, 4);
}

TEST(sol, output_the_caller_has_not_taken_is_bounded_and_the_bmc_is_refused_until_it_is) {
  sol_options o;
  o.max_output = 4;
  bench b{o};
  b.from_bmc({1, 0, 0, 0, to_bytes("abcd")});
  b.from_bmc({2, 0, 0, 0, to_bytes("efg")});
  ASSERT_EQ(b.bmc.from_console.size(), 2u);
  EXPECT_EQ(b.bmc.from_console[1].ack_seq, 2);
  EXPECT_NE(b.bmc.from_console[1].status & sol_nack, 0);
  EXPECT_EQ(b.c->take_output(), "abcd");
  b.from_bmc({2, 0, 0, 0, to_bytes("efg")}); // the BMC sends it again: now it is taken
  EXPECT_EQ(b.c->take_output(), "efg");
  EXPECT_EQ(b.bmc.from_console[2].accepted, 3);
}

TEST(sol, keystrokes_go_in_packets_the_bmc_accepts_and_are_sent_again_until_acknowledged) {
  bench b;
  std::string typed(40, 'x');
  for (size_t i = 0; i < typed.size(); ++i) {
    typed[i] = static_cast<char>('a' + i % 26);
  }
  b.type(typed);
  ASSERT_EQ(b.bmc.from_console.size(), 1u);
  auto first = b.bmc.from_console[0];
  EXPECT_EQ(first.seq, 1);
  EXPECT_EQ(text(first), typed.substr(0, 28));
  b.advance(50ms); // before the retry interval (100 ms): nothing
  EXPECT_EQ(b.bmc.from_console.size(), 1u);
  b.advance(60ms);
  ASSERT_EQ(b.bmc.from_console.size(), 2u);
  EXPECT_EQ(b.bmc.from_console[1].seq, 1); // the same packet again
  EXPECT_EQ(text(b.bmc.from_console[1]), typed.substr(0, 28));
  b.from_bmc({0, 1, 28, 0, {}});
  ASSERT_EQ(b.bmc.from_console.size(), 3u);
  EXPECT_EQ(b.bmc.from_console[2].seq, 2);
  EXPECT_EQ(text(b.bmc.from_console[2]), typed.substr(28));
  b.from_bmc({0, 2, 12, 0, {}});
  EXPECT_EQ(b.c->queued(), 0u);
}

TEST(sol, a_partial_acknowledgement_sends_the_rest_next) {
  bench b;
  b.type("0123456789");
  b.from_bmc({0, 1, 4, 0, {}});
  ASSERT_EQ(b.bmc.from_console.size(), 2u);
  EXPECT_EQ(b.bmc.from_console[1].seq, 2);
  EXPECT_EQ(text(b.bmc.from_console[1]), "456789");
}

TEST(sol, an_acknowledgement_of_another_packet_changes_nothing) {
  bench b;
  b.type("abc");
  b.from_bmc({0, 7, 3, 0, {}});
  EXPECT_EQ(b.c->queued(), 3u);
  EXPECT_EQ(b.bmc.from_console.size(), 1u);
}

TEST(sol, a_nack_holds_the_keystrokes_for_a_retry_interval) {
  bench b;
  b.type("abc");
  b.from_bmc({0, 1, 0, sol_nack, {}});
  EXPECT_EQ(b.bmc.from_console.size(), 1u);
  EXPECT_EQ(b.c->queued(), 3u);
  b.advance(100ms);
  ASSERT_EQ(b.bmc.from_console.size(), 2u);
  EXPECT_EQ(b.bmc.from_console[1].seq, 2);
  EXPECT_EQ(text(b.bmc.from_console[1]), "abc");
}

TEST(sol, keystrokes_never_acknowledged_are_dropped_after_the_retries_and_reported) {
  bench b;
  b.type("lost");
  for (int i = 0; i < 3; ++i) {
    b.advance(100ms);
  }
  EXPECT_EQ(b.bmc.from_console.size(), 3u); // once, then 2 retries
  ASSERT_TRUE(b.saw(kind::dropped));
  EXPECT_EQ(b.c->queued(), 0u);
  b.type("next");
  EXPECT_EQ(text(b.bmc.from_console.back()), "next");
}

TEST(sol, the_keystroke_queue_is_bounded) {
  sol_options o;
  o.max_keystrokes = 8;
  bench b{o};
  std::string many(20, 'k');
  EXPECT_EQ(b.c->write(reinterpret_cast<const uint8_t*>(many.data()), many.size(), b.now), 8u);
  EXPECT_EQ(b.c->write(reinterpret_cast<const uint8_t*>(many.data()), many.size(), b.now), 0u);
}

TEST(sol, keystrokes_typed_before_activation_wait_for_it) {
  bench b{sol_options{}, false};
  b.bmc.silent = true;
  b.open({});
  std::string s = "early";
  EXPECT_EQ(b.c->write(reinterpret_cast<const uint8_t*>(s.data()), s.size(), b.now), 5u);
  EXPECT_TRUE(b.c->take_datagrams().empty());
  b.bmc.silent = false;
  b.advance(sol_default_request_timeout);
  ASSERT_EQ(b.c->at(), sol::phase::active);
  ASSERT_FALSE(b.bmc.from_console.empty());
  EXPECT_EQ(text(b.bmc.from_console.back()), "early");
}

TEST(sol, a_break_is_a_sequenced_packet_with_the_break_bit) {
  bench b;
  b.c->send_break(b.now);
  b.exchange();
  ASSERT_EQ(b.bmc.from_console.size(), 1u);
  EXPECT_EQ(b.bmc.from_console[0].seq, 1);
  EXPECT_NE(b.bmc.from_console[0].status & sol_op_break, 0);
  EXPECT_TRUE(b.bmc.from_console[0].data.empty());
}

TEST(sol, a_break_on_the_host_side_is_an_event) {
  bench b;
  b.from_bmc({1, 0, 0, sol_st_break, to_bytes("x")});
  EXPECT_TRUE(b.saw(kind::break_detected));
}

TEST(sol, keepalive_requests_keep_the_session_and_a_silent_bmc_is_lost) {
  bench b;
  b.advance(sol_default_keepalive);
  EXPECT_EQ(b.bmc.cmds.back(), 0x01); // Get Device ID
  EXPECT_EQ(b.c->at(), sol::phase::active);
  b.bmc.silent = true;
  b.advance(sol_default_keepalive);
  for (unsigned i = 0; i <= sol_default_request_retries; ++i) {
    b.advance(sol_default_request_timeout);
  }
  EXPECT_TRUE(b.saw(kind::lost));
  EXPECT_EQ(b.c->at(), sol::phase::done);
}

TEST(sol, the_bmc_deactivating_ends_the_console_as_lost) {
  bench b;
  b.from_bmc({0, 0, 0, sol_st_deactivating, {}});
  EXPECT_TRUE(b.saw(kind::lost));
  EXPECT_EQ(b.c->at(), sol::phase::done);
}

TEST(sol, close_deactivates_the_payload_then_closes_the_session) {
  bench b;
  b.c->close(b.now);
  b.exchange();
  EXPECT_EQ(b.bmc.cmds, (std::vector<uint8_t>{0x48, 0x22, 0x49, 0x3c}));
  EXPECT_TRUE(b.saw(kind::closed));
  EXPECT_EQ(b.c->deadline(), sol_clock::time_point::max());
}

TEST(sol, datagrams_of_another_session_or_noise_are_ignored) {
  bench b;
  auto other
    = wrap_session(0x33333333, 9, b.bmc.keys, encode_sol_packet({1, 0, 0, 0, {'z'}}), payload::sol);
  b.c->feed(other.data(), other.size(), b.now);
  bytes noise{1, 2, 3};
  b.c->feed(noise.data(), noise.size(), b.now);
  EXPECT_EQ(b.c->take_output(), "");
  EXPECT_TRUE(b.c->take_datagrams().empty());
}

TEST(sol, the_sol_packet_parser_refuses_short_payloads_and_bad_sequence_numbers) {
  bytes shortp{1, 0, 0};
  EXPECT_FALSE(parse_sol_packet(shortp.data(), shortp.size()));
  bytes bad{0x10, 0, 0, 0};
  EXPECT_FALSE(parse_sol_packet(bad.data(), bad.size()));
  bytes ok{2, 3, 4, 5, 'a'};
  auto p = parse_sol_packet(ok.data(), ok.size());
  ASSERT_TRUE(p);
  EXPECT_EQ(encode_sol_packet(*p), ok);
}

} // namespace
