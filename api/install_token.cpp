#include "api/install_token.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <stdexcept>

#include "base/published_file.hpp"
#include "store/credentials.hpp"

namespace cws::api {

namespace {

std::string meta_key(std::string_view node) {
  return "install.token." + std::string{node};
}

std::string hex(const unsigned char* p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

bool is_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

} // namespace

void arm_install_tokens(store::write_txn& t, const std::vector<std::string>& nodes) {
  for (const auto& n : nodes) {
    t.set_meta(meta_key(n), store::random_hex(16));
  }
}

bool disarm_install_token(store::write_txn& t, std::string_view node) {
  return t.erase_meta(meta_key(node));
}

std::string install_token_nonce(const store::read_txn& txn, std::string_view node) {
  return txn.meta(meta_key(node));
}

void rearm_install_token(store::write_txn& t, std::string_view node, std::string_view nonce) {
  t.set_meta(meta_key(node), nonce);
}

bool install_token_armed(const store::read_txn& txn, std::string_view node) {
  return !txn.meta(meta_key(node)).empty();
}

install_token_key install_token_key::load_or_create(const std::filesystem::path& path) {
  std::string text;
  bool exists = false;
  if (auto ec = base::read_file(path, 4096, text, &exists)) {
    throw std::runtime_error{"cannot read " + path.string() + ": " + ec.message()};
  }
  if (!exists) {
    text = store::random_hex(32) + "\n";
    if (auto ec = base::publish_file(path, text, 0600)) {
      throw std::runtime_error{"cannot write " + path.string() + ": " + ec.message()};
    }
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  if (text.size() < 32 || !is_hex(text)) {
    throw std::runtime_error{path.string() + " is not an install token key (64 hex digits)"};
  }
  return install_token_key{text};
}

std::string install_token_key::derive(std::string_view node, std::string_view nonce) const {
  std::string msg = "clusterws install token\n" + std::string{node} + "\n" + std::string{nonce};
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
           reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), mac, &len)
      == nullptr) {
    throw std::runtime_error{"HMAC-SHA256 failed"};
  }
  return hex(mac, len);
}

std::string install_token_key::token(const store::read_txn& txn, std::string_view node) const {
  auto nonce = txn.meta(meta_key(node));
  return nonce.empty() ? std::string{} : derive(node, nonce);
}

bool install_token_key::check(const store::read_txn& txn, std::string_view node,
                              std::string_view presented) const {
  auto expected = token(txn, node);
  if (expected.empty() || presented.empty()) {
    return false;
  }
  return store::constant_time_equal(expected, presented);
}

} // namespace cws::api
