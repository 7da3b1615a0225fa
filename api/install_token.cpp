#include "api/install_token.hpp"

#include <stdexcept>

#include "base/published_file.hpp"
#include "store/credentials.hpp"

namespace cws::api {

namespace {

std::string meta_key(std::string_view node) {
  return "install.token." + std::string{node};
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
  return store::hmac_sha256_hex(key_, msg);
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
