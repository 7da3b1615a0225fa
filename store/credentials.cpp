#include "store/credentials.hpp"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "store/error.hpp"

namespace cws::store {

namespace {

std::string to_hex(const unsigned char* p, size_t n) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 0xf];
  }
  return out;
}

} // namespace

namespace {

std::string hash_with(const char* prefix, std::string_view password) {
  if (password.find('\0') != std::string_view::npos) {
    throw error{store_errc::bad_request, "a password cannot contain a NUL character"};
  }
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  // nullptr rbytes: libxcrypt reads the salt from the kernel's CSPRNG
  if (crypt_gensalt_rn(prefix, 0, nullptr, 0, salt, sizeof salt) == nullptr) {
    throw error{store_errc::database, "cannot generate a password salt"};
  }
  auto data = std::make_unique<crypt_data>();
  std::string pw{password};
  const char* h = crypt_r(pw.c_str(), salt, data.get());
  OPENSSL_cleanse(pw.data(), pw.size());
  if (h == nullptr || h[0] == '*') {
    throw error{store_errc::database, "cannot hash the password"};
  }
  return h;
}

} // namespace

std::string hash_password(std::string_view password) {
  return hash_with("$y$", password);
}

std::string hash_password_sha512(std::string_view password) {
  return hash_with("$6$", password);
}

bool is_password_hash(std::string_view stored) {
  if (stored.size() < 4 || stored[0] != '$') {
    return false;
  }
  std::string s{stored};
  return crypt_checksalt(s.c_str()) == CRYPT_SALT_OK;
}

bool verify_password(std::string_view password, std::string_view stored) {
  // crypt(3) reads a C string: "pw\0junk" would be checked as "pw"
  if (!is_password_hash(stored) || password.empty()
      || password.find('\0') != std::string_view::npos) {
    return false;
  }
  auto data = std::make_unique<crypt_data>();
  std::string pw{password};
  std::string setting{stored};
  const char* h = crypt_r(pw.c_str(), setting.c_str(), data.get());
  OPENSSL_cleanse(pw.data(), pw.size());
  return h != nullptr && h[0] != '*' && constant_time_equal(h, stored);
}

bool is_token_days(std::string_view days) {
  if (days == "never") {
    return true;
  }
  size_t digits = 0;
  size_t dots = 0;
  for (char c : days) {
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (c == '.' && dots == 0) {
      ++dots;
    } else {
      return false;
    }
  }
  if (digits == 0 || days.size() > 16) {
    return false;
  }
  double d = std::strtod(std::string{days}.c_str(), nullptr);
  return d > 0 && d <= max_token_days;
}

int64_t token_lifetime_seconds(std::string_view days) {
  constexpr int64_t day = 86400;
  if (days == "never") {
    return 0;
  }
  std::string text{days};
  char* end = nullptr;
  double d = std::strtod(text.c_str(), &end);
  // strtod also takes "inf", "nan", "1e15", "-3": only a finite positive number counts
  if (end == text.c_str() || *end != '\0' || !(d > 0)) {
    return day;
  }
  if (!(d <= max_token_days)) {
    return max_token_days * day;
  }
  return std::max<int64_t>(1, static_cast<int64_t>(d * day));
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string sha256_hex(std::string_view data) {
  // Fetched once, and one context per thread: with EVP_sha256() OpenSSL 3 looks the digest up
  // in its provider store on every call (about half of the cost of the password cache's key,
  // which every request computes).
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  thread_local std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(),
                                                                           &EVP_MD_CTX_free};
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (sha256 == nullptr || !ctx || EVP_DigestInit_ex2(ctx.get(), sha256, nullptr) != 1
      || EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1
      || EVP_DigestFinal_ex(ctx.get(), md, &len) != 1) {
    throw error{store_errc::database, "SHA-256 is not available from OpenSSL"};
  }
  return to_hex(md, len);
}

std::string hmac_sha256_hex(std::string_view key, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len)
      == nullptr) {
    throw std::runtime_error("HMAC-SHA256 failed");
  }
  return to_hex(mac, len);
}

std::string random_hex(size_t n) {
  std::string buf(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(buf.data()), static_cast<int>(n)) != 1) {
    throw error{store_errc::database, "the system random generator failed"};
  }
  return to_hex(reinterpret_cast<const unsigned char*>(buf.data()), n);
}

bool is_user_name(std::string_view u) {
  if (u.empty() || u.size() > 32 || !(std::islower(u[0]) || u[0] == '_')) {
    return false;
  }
  return std::all_of(u.begin(), u.end(), [](char c) {
    return std::islower(c) || std::isdigit(c) || c == '_' || c == '-' || c == '.';
  });
}

} // namespace cws::store
