// The RMCP+ session set-up without a socket: a fake BMC (its side of RAKP written out from
// the spec, section 13.20-13.31) answers the datagrams session_setup asks to send.

#include <gtest/gtest.h>

#include <openssl/hmac.h>

#include <cstring>

#include "ipmi/session_setup.hpp"

namespace {

using namespace cws::ipmi;
using progress = session_setup::progress;
using phase = session_setup::phase;

void put32(bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) {
    b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
}

uint32_t get32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8
         | static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

bytes hmac(const std::string& key, const bytes& data) {
  bytes out(20);
  unsigned int n = 0;
  HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()), data.data(), data.size(), out.data(),
       &n);
  return out;
}

/// The BMC's side of one set-up, answering each message of the console in turn.
struct fake_bmc {
  std::string password = "secret";
  uint32_t bmc_sid = 0x0a0b0c0d;
  uint8_t open_status = 0;
  uint8_t auth_alg = 1;
  uint8_t privilege_code = 0;
  bool spoil_icv = false;
  handshake h; ///< what the BMC saw (its password, not the console's)
  session_keys keys;

  /// The BMC's answer to the console's datagram `in` (`in` must be a set-up message).
  bytes answer(const bytes& in) {
    auto d = parse_datagram(in.data(), in.size(), h.bmc_sid != 0 ? &keys.k1 : nullptr);
    EXPECT_TRUE(d);
    const auto& b = d->body;
    switch (d->type) {
      case payload::open_request: {
        h.console_sid = get32(b.data() + 4);
        h.role = b[1];
        bytes r{b[0], open_status, 0, 0};
        put32(r, h.console_sid);
        put32(r, bmc_sid);
        r.insert(r.end(), {0, 0, 0, 8, auth_alg, 0, 0, 0});
        r.insert(r.end(), {1, 0, 0, 8, 1, 0, 0, 0});
        r.insert(r.end(), {2, 0, 0, 8, 1, 0, 0, 0});
        return wrap_plain(payload::open_response, r);
      }
      case payload::rakp1: {
        EXPECT_EQ(get32(b.data() + 4), bmc_sid);
        std::memcpy(h.console_rand.data(), b.data() + 8, 16);
        h.user.assign(b.begin() + 28, b.begin() + 28 + b[27]);
        h.bmc_sid = bmc_sid;
        h.password = password;
        for (uint8_t i = 0; i < 16; ++i) {
          h.bmc_rand[i] = static_cast<uint8_t>(0x90 + i);
          h.bmc_guid[i] = static_cast<uint8_t>(0x30 + i);
        }
        bytes code;
        put32(code, h.console_sid);
        put32(code, h.bmc_sid);
        code.insert(code.end(), h.console_rand.begin(), h.console_rand.end());
        code.insert(code.end(), h.bmc_rand.begin(), h.bmc_rand.end());
        code.insert(code.end(), h.bmc_guid.begin(), h.bmc_guid.end());
        code.push_back(h.role);
        code.push_back(static_cast<uint8_t>(h.user.size()));
        code.insert(code.end(), h.user.begin(), h.user.end());
        bytes r{b[0], 0, 0, 0};
        put32(r, h.console_sid);
        r.insert(r.end(), h.bmc_rand.begin(), h.bmc_rand.end());
        r.insert(r.end(), h.bmc_guid.begin(), h.bmc_guid.end());
        auto mac = hmac(password, code);
        r.insert(r.end(), mac.begin(), mac.end());
        keys = derive_keys(h);
        return wrap_plain(payload::rakp2, r);
      }
      case payload::rakp3: {
        bytes icv_data(h.console_rand.begin(), h.console_rand.end());
        put32(icv_data, h.bmc_sid);
        icv_data.insert(icv_data.end(), h.bmc_guid.begin(), h.bmc_guid.end());
        auto icv = hmac(std::string(keys.sik.begin(), keys.sik.end()), icv_data);
        icv.resize(12);
        if (spoil_icv) {
          icv[0] ^= 1;
        }
        bytes r{b[0], 0, 0, 0};
        put32(r, h.console_sid);
        r.insert(r.end(), icv.begin(), icv.end());
        return wrap_plain(payload::rakp4, r);
      }
      case payload::ipmi: return in_session(*d, privilege_code, {h.role});
      default: ADD_FAILURE() << "unexpected payload"; return {};
    }
  }

  /// The answer to an in-session request: completion code `code`, then `data`.
  bytes in_session(const datagram& d, uint8_t code, bytes data) {
    auto msg = decrypt_payload(d.body, keys.k2);
    EXPECT_TRUE(msg && msg->size() >= 7);
    if (!msg || msg->size() < 7) {
      return {};
    }
    // rsAddr, netFn, chk, rqAddr, rqSeq, cmd, data, chk -> rqAddr, netFn+1, chk, rsAddr, ...
    bytes r{0x81, static_cast<uint8_t>((*msg)[1] + 4), 0, 0x20, (*msg)[4], (*msg)[5], code};
    r.insert(r.end(), data.begin(), data.end());
    r[2] = static_cast<uint8_t>(-(r[0] + r[1]));
    uint8_t sum = 0;
    for (size_t i = 3; i < r.size(); ++i) {
      sum = static_cast<uint8_t>(sum + r[i]);
    }
    r.push_back(static_cast<uint8_t>(-sum));
    return wrap_session(h.console_sid, 1, keys, r);
  }

  bytes in_session(const bytes& in, uint8_t code, bytes data) {
    auto d = parse_datagram(in.data(), in.size(), &keys.k1);
    EXPECT_TRUE(d);
    return d ? in_session(*d, code, std::move(data)) : bytes{};
  }
};

rand16 fixed_rand() {
  rand16 r{};
  for (uint8_t i = 0; i < 16; ++i) {
    r[i] = i;
  }
  return r;
}

session_setup fixed_setup(const std::string& password = "secret") {
  return session_setup{"admin", password, privilege_admin, 0x11223344, fixed_rand()};
}

progress step(session_setup& s, fake_bmc& bmc) {
  auto answer = bmc.answer(s.packet());
  return s.feed(answer.data(), answer.size());
}

TEST(session_setup, four_answers_establish_a_session_that_carries_requests) {
  fake_bmc bmc;
  auto s = fixed_setup();
  EXPECT_EQ(s.at(), phase::opening);
  EXPECT_EQ(step(s, bmc), progress::next);
  EXPECT_EQ(s.at(), phase::rakp1);
  EXPECT_EQ(step(s, bmc), progress::next);
  EXPECT_EQ(s.at(), phase::rakp3);
  EXPECT_EQ(step(s, bmc), progress::next);
  EXPECT_EQ(s.at(), phase::privilege);
  EXPECT_EQ(step(s, bmc), progress::established);
  EXPECT_EQ(s.at(), phase::established);
  EXPECT_EQ(bmc.h.user, "admin");
  EXPECT_EQ(bmc.h.role, privilege_admin);

  auto sess = s.take();
  EXPECT_EQ(sess.agreed().bmc_sid, bmc.bmc_sid);
  EXPECT_EQ(sess.agreed().console_sid, 0x11223345u); // never 0: the low bit is set
  EXPECT_FALSE(sess.waiting());
  sess.ask(request{0x00, 0x01, {}});
  ASSERT_TRUE(sess.waiting());
  auto answer = bmc.in_session(sess.packet(), 0, {0x01, 0x00, 0x00});
  auto r = sess.answer(answer.data(), answer.size());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->cmd, 0x01);
  EXPECT_EQ(r->data, (bytes{0x01, 0x00, 0x00}));
  EXPECT_FALSE(sess.waiting());
  // the same answer again is late: nothing is outstanding
  EXPECT_FALSE(sess.answer(answer.data(), answer.size()));
}

TEST(session_setup, a_wrong_password_fails_at_rakp2_in_xcats_words) {
  fake_bmc bmc;
  bmc.password = "other";
  auto s = fixed_setup();
  EXPECT_EQ(step(s, bmc), progress::next);
  EXPECT_EQ(step(s, bmc), progress::failed);
  EXPECT_EQ(s.at(), phase::failed);
  EXPECT_EQ(s.message(), "Incorrect password provided");
}

TEST(session_setup, a_refused_open_session_fails_with_the_status_text) {
  fake_bmc bmc;
  bmc.open_status = 0x0d;
  auto s = fixed_setup();
  EXPECT_EQ(step(s, bmc), progress::failed);
  EXPECT_EQ(s.message(), "Unauthorized name");
}

TEST(session_setup, a_bmc_without_cipher_suite_3_is_refused) {
  fake_bmc bmc;
  bmc.auth_alg = 2; // RAKP-HMAC-MD5
  auto s = fixed_setup();
  EXPECT_EQ(step(s, bmc), progress::failed);
  EXPECT_EQ(s.message(), "The BMC did not accept cipher suite 3");
}

TEST(session_setup, a_wrong_rakp4_integrity_value_fails) {
  fake_bmc bmc;
  bmc.spoil_icv = true;
  auto s = fixed_setup();
  step(s, bmc);
  step(s, bmc);
  EXPECT_EQ(step(s, bmc), progress::failed);
  EXPECT_EQ(s.message(), "Invalid integrity check value");
}

TEST(session_setup, a_refused_privilege_level_fails_with_the_completion_text) {
  fake_bmc bmc;
  bmc.privilege_code = 0xd4;
  auto s = fixed_setup();
  step(s, bmc);
  step(s, bmc);
  step(s, bmc);
  EXPECT_EQ(step(s, bmc), progress::failed);
  EXPECT_EQ(s.message(), "Insufficient privilege level");
}

TEST(session_setup, noise_late_answers_and_other_sessions_are_ignored) {
  fake_bmc bmc;
  auto s = fixed_setup();
  auto open = s.packet();
  auto open_answer = bmc.answer(open);
  bytes noise{1, 2, 3};
  EXPECT_EQ(s.feed(noise.data(), noise.size()), progress::ignored);
  // another console's answer (another session id)
  auto foreign = open_answer;
  foreign[16 + 4] ^= 0x40; // the console session id in the body
  EXPECT_EQ(s.feed(foreign.data(), foreign.size()), progress::ignored);
  EXPECT_EQ(s.packet(), open) << "the set-up message is sent again as it was";
  EXPECT_EQ(s.feed(open_answer.data(), open_answer.size()), progress::next);
  // the Open Session answer again (to a second try) is late now
  EXPECT_EQ(s.feed(open_answer.data(), open_answer.size()), progress::ignored);
  EXPECT_EQ(s.at(), phase::rakp1);
  step(s, bmc);
  step(s, bmc);
  ASSERT_EQ(s.at(), phase::privilege);
  // the privilege request is wrapped anew on each send; the answer to either try counts
  auto first = s.packet();
  auto second = s.packet();
  EXPECT_NE(first, second);
  auto answer = bmc.in_session(first, 0, {privilege_admin});
  auto tampered = answer;
  tampered[tampered.size() / 2] ^= 1;
  EXPECT_EQ(s.feed(tampered.data(), tampered.size()), progress::ignored);
  EXPECT_EQ(s.feed(answer.data(), answer.size()), progress::established);
  EXPECT_EQ(s.feed(answer.data(), answer.size()), progress::ignored);
}

TEST(session_setup, close_session_names_the_bmcs_session_and_drops_the_request) {
  fake_bmc bmc;
  auto s = fixed_setup();
  while (s.at() != phase::established && s.at() != phase::failed) {
    step(s, bmc);
  }
  auto sess = s.take();
  sess.ask(request{0x00, 0x01, {}});
  auto close = sess.close_packet();
  EXPECT_FALSE(sess.waiting());
  auto d = parse_datagram(close.data(), close.size(), &bmc.keys.k1);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->session_id, bmc.bmc_sid);
  auto msg = decrypt_payload(d->body, bmc.keys.k2);
  ASSERT_TRUE(msg);
  ASSERT_GE(msg->size(), 11u);
  EXPECT_EQ((*msg)[1] >> 2, 0x06); // App
  EXPECT_EQ((*msg)[5], 0x3c);      // Close Session
  EXPECT_EQ(get32(msg->data() + 6), bmc.bmc_sid);
}

TEST(session_setup, two_set_ups_draw_different_session_ids) {
  session_setup a{"admin", "secret"};
  session_setup b{"admin", "secret"};
  EXPECT_NE(a.packet(), b.packet());
}

} // namespace
