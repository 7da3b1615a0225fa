#include "store/credentials.hpp"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstring>
#include <memory>

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

std::string hash_password(std::string_view password) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  // nullptr rbytes: libxcrypt reads the salt from the kernel's CSPRNG
  if (crypt_gensalt_rn("$y$", 0, nullptr, 0, salt, sizeof salt) == nullptr) {
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

bool is_password_hash(std::string_view stored) {
  if (stored.size() < 4 || stored[0] != '$') {
    return false;
  }
  std::string s{stored};
  return crypt_checksalt(s.c_str()) == CRYPT_SALT_OK;
}

bool verify_password(std::string_view password, std::string_view stored) {
  if (!is_password_hash(stored) || password.empty()) {
    return false;
  }
  auto data = std::make_unique<crypt_data>();
  std::string pw{password};
  std::string setting{stored};
  const char* h = crypt_r(pw.c_str(), setting.c_str(), data.get());
  OPENSSL_cleanse(pw.data(), pw.size());
  return h != nullptr && h[0] != '*' && constant_time_equal(h, stored);
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string sha256_hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  return to_hex(md, len);
}

std::string random_hex(size_t n) {
  std::string buf(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(buf.data()), static_cast<int>(n)) != 1) {
    throw error{store_errc::database, "the system random generator failed"};
  }
  return to_hex(reinterpret_cast<const unsigned char*>(buf.data()), n);
}

} // namespace cws::store
