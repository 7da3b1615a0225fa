#include <gtest/gtest.h>

#include "store/credentials.hpp"

using namespace cws::store;

TEST(credentials, hash_is_salted_and_verifies) {
  auto h1 = hash_password("s3cret");
  auto h2 = hash_password("s3cret");
  EXPECT_EQ(h1.substr(0, 3), "$y$");
  EXPECT_NE(h1, h2); // fresh salt each time
  EXPECT_TRUE(verify_password("s3cret", h1));
  EXPECT_FALSE(verify_password("s3cret!", h1));
  EXPECT_FALSE(verify_password("", h1));
}

TEST(credentials, stored_hash_is_never_accepted_as_the_password) {
  auto h = hash_password("pw");
  EXPECT_FALSE(verify_password(h, h));
}

TEST(credentials, plain_stored_value_never_matches) {
  EXPECT_FALSE(is_password_hash("plaintext"));
  EXPECT_FALSE(verify_password("plaintext", "plaintext"));
}

TEST(credentials, accepts_shadow_sha512_hashes) {
  // openssl passwd -6 -salt abcdefgh secret
  std::string shadow
    = "$6$abcdefgh$ltjgWl6579NluT/Vi1nwEvcil.G5Nbc4NiXZaNGStk8PSwGfQv72N2CKPPrVACtLtip/"
      "cZ/1GM/O6IND4WQhG.";
  EXPECT_TRUE(is_password_hash(shadow));
  EXPECT_TRUE(verify_password("secret", shadow));
  EXPECT_FALSE(verify_password("Secret", shadow));
}

TEST(credentials, helpers) {
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // the per-thread context is reused: a second digest starts clean
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(random_hex(16).size(), 32u);
  EXPECT_NE(random_hex(16), random_hex(16));
}

TEST(credentials, a_password_with_nul_never_matches_and_is_never_hashed) {
  auto h = hash_password("pw");
  EXPECT_TRUE(verify_password("pw", h));
  EXPECT_FALSE(verify_password(std::string_view{"pw\0junk", 7}, h));
  EXPECT_THROW(hash_password(std::string_view{"pw\0", 3}), std::exception);
}

TEST(credentials, token_days_are_checked_when_written_and_clamped_when_read) {
  for (auto ok : {"never", "1", "0.5", "3650", "30"}) {
    EXPECT_TRUE(is_token_days(ok)) << ok;
  }
  for (auto bad : {"1e15", "inf", "nan", "-1", "0", "3651", "", "1.2.3", " 1", "0x10"}) {
    EXPECT_FALSE(is_token_days(bad)) << bad;
  }
  EXPECT_EQ(token_lifetime_seconds("never"), 0);
  EXPECT_EQ(token_lifetime_seconds("7"), 7 * 86400);
  // rows written before the check: never undefined, never already expired
  EXPECT_EQ(token_lifetime_seconds("1e15"), int64_t{max_token_days} * 86400);
  EXPECT_EQ(token_lifetime_seconds("inf"), int64_t{max_token_days} * 86400);
  EXPECT_EQ(token_lifetime_seconds("nan"), 86400);
  EXPECT_EQ(token_lifetime_seconds("-5"), 86400);
  EXPECT_EQ(token_lifetime_seconds("junk"), 86400);
}
