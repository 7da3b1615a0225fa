#pragma once

#include <string>
#include <string_view>

namespace cws::store {

/// Hashes `password` with a fresh random salt as a crypt(3) string (yescrypt, `$y$`).
/// @throws cws::store::error when the system cannot hash.
std::string hash_password(std::string_view password);

/// True if `stored` looks like a crypt(3) hash that libxcrypt can verify (e.g. copied from
/// /etc/shadow: `$y$`, `$6$`, `$5$`, `$2b$`, `$1$`).
bool is_password_hash(std::string_view stored);

/// Checks `password` against the stored hash in constant time. A plain (non-hash) stored value
/// never matches, and the hash itself is never accepted as the password.
bool verify_password(std::string_view password, std::string_view stored);

/// Compares two byte strings in time independent of where they differ.
bool constant_time_equal(std::string_view a, std::string_view b);

/// Lowercase hex SHA-256 of `data` (how API tokens are stored).
std::string sha256_hex(std::string_view data);

/// `n` random bytes from the system CSPRNG as lowercase hex.
std::string random_hex(size_t n);

} // namespace cws::store
