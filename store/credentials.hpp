#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cws::store {

/// Hashes `password` with a fresh random salt as a crypt(3) string (yescrypt, `$y$`).
/// @throws cws::store::error when the system cannot hash, or the password holds a NUL.
std::string hash_password(std::string_view password);

/// Hashes `password` as a SHA-512 crypt(3) string (`$6$`, a fresh random salt): the form
/// every installer (kickstart `rootpw --iscrypted`, preseed `root-password-crypted`) reads.
/// @throws cws::store::error when the system cannot hash, or the password holds a NUL.
std::string hash_password_sha512(std::string_view password);

/// True if `stored` looks like a crypt(3) hash that libxcrypt can verify (e.g. copied from
/// /etc/shadow: `$y$`, `$6$`, `$5$`, `$2b$`, `$1$`).
bool is_password_hash(std::string_view stored);

/// Checks `password` against the stored hash in constant time. A plain (non-hash) stored value
/// never matches, the hash itself is never accepted as the password, and neither is a
/// password holding a NUL (crypt(3) would check only what comes before it).
bool verify_password(std::string_view password, std::string_view stored);

/// True if `name` may name an API user: 1 to 32 of `a-z 0-9 _ - .`, starting with a letter
/// or `_` (the portable user names of useradd).
bool is_user_name(std::string_view name);

/// Compares two byte strings in time independent of where they differ.
bool constant_time_equal(std::string_view a, std::string_view b);

/// Longest token life `site.tokenexpiredays` may set, in days.
constexpr int max_token_days = 3650;

/// True if `days` is a valid `site.tokenexpiredays`: `never`, or a plain decimal number of
/// days (no sign, no exponent) greater than 0 and at most `max_token_days`.
bool is_token_days(std::string_view days);

/// Seconds a new token lives under `site.tokenexpiredays` = `days`; 0 for `never`. A value
/// written before it was validated is read safely: invalid (or empty) gives 1 day, and a
/// number past the limit gives the limit.
int64_t token_lifetime_seconds(std::string_view days);

/// Lowercase hex SHA-256 of `data` (how API tokens are stored).
std::string sha256_hex(std::string_view data);

/// Lowercase hex HMAC-SHA256 of `data` under `key` (64 digits). @throws std::runtime_error.
std::string hmac_sha256_hex(std::string_view key, std::string_view data);

/// `n` random bytes from the system CSPRNG as lowercase hex.
std::string random_hex(size_t n);

} // namespace cws::store
