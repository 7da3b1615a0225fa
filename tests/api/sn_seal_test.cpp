// The service-node seal (api/sn_seal.hpp): registration proofs and sealed requests verify only
// for the right secret, name, payload and time, once.

#include <gtest/gtest.h>

#include "api/sn_seal.hpp"
#include "store/credentials.hpp"

namespace {

using namespace cws::api;

const std::string secret(64, 'a');
const std::string other(64, 'b');

TEST(sn_seal, a_secret_is_64_hex_digits_and_two_are_never_alike) {
  auto a = make_sn_secret();
  EXPECT_EQ(check_sn_secret(a), "");
  EXPECT_NE(a, make_sn_secret());
  EXPECT_NE(check_sn_secret("abc"), "");
  EXPECT_NE(check_sn_secret(std::string(64, 'G')), "");
}

TEST(sn_seal, hmac_sha256_matches_rfc_4231_case_2) {
  EXPECT_EQ(cws::store::hmac_sha256_hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(sn_seal, a_registration_proof_holds_only_for_its_secret_name_version_and_challenge) {
  auto c = make_sn_challenge();
  auto p = sn_registration_proof(secret, "sn1", 1, c);
  EXPECT_TRUE(sn_check_registration(secret, "sn1", 1, c, p));
  EXPECT_FALSE(sn_check_registration(other, "sn1", 1, c, p));
  EXPECT_FALSE(sn_check_registration(secret, "sn2", 1, c, p));
  EXPECT_FALSE(sn_check_registration(secret, "sn1", 2, c, p));
  EXPECT_FALSE(sn_check_registration(secret, "sn1", 1, make_sn_challenge(), p));
  EXPECT_FALSE(sn_check_registration(secret, "sn1", 1, c, p.substr(1)));
}

TEST(sn_seal, a_sealed_request_verifies_once_then_is_a_replay) {
  sn_replay_cache seen{16};
  auto now = sn_now_ms();
  auto s = to_text(seal_sn_request(secret, "sn1", 7, now + 1000, "payload"));
  EXPECT_EQ(verify_sn_request(secret, "sn1", s, "payload", now, seen), "");
  EXPECT_NE(verify_sn_request(secret, "sn1", s, "payload", now, seen).find("seen before"),
            std::string::npos);
}

TEST(sn_seal, a_request_relayed_to_another_service_node_or_changed_is_refused) {
  sn_replay_cache seen{16};
  auto now = sn_now_ms();
  auto s = to_text(seal_sn_request(secret, "sn1", 7, now + 1000, "payload"));
  // another service node's secret and name (a relay through BASP's routing)
  EXPECT_NE(verify_sn_request(other, "sn2", s, "payload", now, seen), "");
  EXPECT_NE(verify_sn_request(secret, "sn2", s, "payload", now, seen), "");
  EXPECT_NE(verify_sn_request(secret, "sn1", s, "payload!", now, seen), "");
  EXPECT_EQ(seen.size(), 0u); // nothing unauthenticated is remembered
}

TEST(sn_seal, an_expired_request_or_one_valid_too_long_is_refused) {
  sn_replay_cache seen{16};
  auto now = sn_now_ms();
  auto old = to_text(seal_sn_request(secret, "sn1", 1, now - 1, "p"));
  EXPECT_NE(verify_sn_request(secret, "sn1", old, "p", now, seen).find("expired"),
            std::string::npos);
  auto far = to_text(seal_sn_request(secret, "sn1", 2, now + 3600000, "p"));
  EXPECT_NE(verify_sn_request(secret, "sn1", far, "p", now, seen).find("too far"),
            std::string::npos);
}

TEST(sn_seal, the_replay_cache_is_bounded_and_forgets_only_what_expired) {
  sn_replay_cache seen{2};
  EXPECT_EQ(seen.admit(1, 100, 0), "");
  EXPECT_EQ(seen.admit(2, 200, 0), "");
  EXPECT_NE(seen.admit(3, 300, 0).find("too many"), std::string::npos);
  EXPECT_NE(seen.admit(1, 100, 50), "");  // still alive: a replay
  EXPECT_EQ(seen.admit(3, 300, 150), ""); // 1 expired at 100 and made room
  EXPECT_EQ(seen.size(), 2u);
}

TEST(sn_seal, malformed_seals_are_refused_with_a_reason) {
  sn_seal s;
  for (const char* t : {"", "v2.1.2.x", "v1.1.2", "v1.a.2." /* */, "v1.1.2.abc",
                        "v1.99999999999999999999999.1.", "v1.1.18446744073709551615."}) {
    EXPECT_NE(parse_sn_seal(t, s), "") << t;
  }
  EXPECT_NE(parse_sn_seal("v1.1.2." + std::string(64, 'A'), s), "");
  EXPECT_EQ(parse_sn_seal("v1.1.2." + std::string(64, 'a'), s), "");
  EXPECT_EQ(s.id, 1u);
  EXPECT_EQ(s.expires_ms, 2);
}

} // namespace
