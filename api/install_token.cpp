#include "api/install_token.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <stdexcept>

#include "base/published_file.hpp"
#include "store/credentials.hpp"

namespace cws::api {

namespace {

/// The per-node records (store::write_txn::set_node_meta): removed with the node.
constexpr std::string_view token_record = "install.token";
constexpr std::string_view refusals_record = "install.badtokens";

/// (nonce, count) of a refusals record; count 0 when malformed.
std::pair<std::string, unsigned> parse_refusals(const std::string& text) {
  auto sp = text.find(' ');
  if (sp == std::string::npos) {
    return {};
  }
  unsigned n = 0;
  for (size_t i = sp + 1; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9' || n > 1000000) {
      return {};
    }
    n = n * 10 + static_cast<unsigned>(text[i] - '0');
  }
  return {text.substr(0, sp), n};
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
    t.set_node_meta(n, token_record, store::random_hex(16));
  }
}

bool disarm_install_token(store::write_txn& t, std::string_view node) {
  t.erase_node_meta(node, refusals_record);
  return t.erase_node_meta(node, token_record);
}

std::string install_token_nonce(const store::read_txn& txn, std::string_view node) {
  return txn.node_meta(node, token_record);
}

void rearm_install_token(store::write_txn& t, std::string_view node, std::string_view nonce) {
  t.set_node_meta(node, token_record, nonce);
}

bool install_token_armed(const store::read_txn& txn, std::string_view node) {
  return !txn.node_meta(node, token_record).empty();
}

std::vector<std::string> install_token_nodes(const store::read_txn& txn) {
  std::vector<std::string> out;
  for (auto& [node, nonce] : txn.nodes_with_meta(token_record)) {
    if (!nonce.empty()) {
      out.push_back(std::move(node));
    }
  }
  return out;
}

unsigned count_refused_token(store::write_txn& t, std::string_view node, std::string_view nonce) {
  auto armed = t.node_meta(node, token_record);
  if (nonce.empty() || armed != nonce) {
    return 0; // (no install under way, or another one since the refusing read)
  }
  auto [seen, count] = parse_refusals(t.node_meta(node, refusals_record));
  if (seen != armed) {
    count = 0; // a new install: counted afresh
  }
  ++count;
  t.set_node_meta(node, refusals_record, armed + " " + std::to_string(count));
  return count;
}

unsigned refused_token_count(const store::read_txn& txn, std::string_view node) {
  auto armed = txn.node_meta(node, token_record);
  auto [seen, count] = parse_refusals(txn.node_meta(node, refusals_record));
  return !armed.empty() && seen == armed ? count : 0;
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

// HMAC (RFC 2104) as store::hmac_sha256_hex computes it, with SHA-256 fetched once and the
// key's pads absorbed once: each token is two context copies and two short hashes.
struct install_token_key::prepared_hmac {
  static constexpr size_t block = 64;
  EVP_MD* md = nullptr;
  EVP_MD_CTX* inner = nullptr;
  EVP_MD_CTX* outer = nullptr;

  explicit prepared_hmac(std::string_view key) {
    md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    inner = EVP_MD_CTX_new();
    outer = EVP_MD_CTX_new();
    if (md == nullptr || inner == nullptr || outer == nullptr) {
      release();
      throw std::runtime_error("HMAC-SHA256 failed");
    }
    unsigned char k[block] = {};
    if (key.size() > block) {
      unsigned int n = 0;
      EVP_Digest(key.data(), key.size(), k, &n, md, nullptr);
    } else {
      std::copy(key.begin(), key.end(), k);
    }
    unsigned char ipad[block];
    unsigned char opad[block];
    for (size_t i = 0; i < block; ++i) {
      ipad[i] = static_cast<unsigned char>(k[i] ^ 0x36);
      opad[i] = static_cast<unsigned char>(k[i] ^ 0x5c);
    }
    if (EVP_DigestInit_ex(inner, md, nullptr) != 1 || EVP_DigestUpdate(inner, ipad, block) != 1
        || EVP_DigestInit_ex(outer, md, nullptr) != 1
        || EVP_DigestUpdate(outer, opad, block) != 1) {
      release();
      throw std::runtime_error("HMAC-SHA256 failed");
    }
  }
  ~prepared_hmac() {
    release();
  }
  prepared_hmac(const prepared_hmac&) = delete;
  prepared_hmac& operator=(const prepared_hmac&) = delete;

  void release() {
    EVP_MD_CTX_free(inner);
    EVP_MD_CTX_free(outer);
    EVP_MD_free(md);
    inner = outer = nullptr;
    md = nullptr;
  }

  std::string hex(std::string_view data) const {
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_MD_CTX* c = EVP_MD_CTX_new();
    bool ok = c != nullptr && EVP_MD_CTX_copy_ex(c, inner) == 1
              && EVP_DigestUpdate(c, data.data(), data.size()) == 1
              && EVP_DigestFinal_ex(c, mac, &len) == 1 && EVP_MD_CTX_copy_ex(c, outer) == 1
              && EVP_DigestUpdate(c, mac, len) == 1 && EVP_DigestFinal_ex(c, mac, &len) == 1;
    EVP_MD_CTX_free(c);
    if (!ok) {
      throw std::runtime_error("HMAC-SHA256 failed");
    }
    static const char digits[] = "0123456789abcdef";
    std::string out(2 * len, '\0');
    for (unsigned int i = 0; i < len; ++i) {
      out[2 * i] = digits[mac[i] >> 4];
      out[2 * i + 1] = digits[mac[i] & 15];
    }
    return out;
  }
};

install_token_key::install_token_key(std::string bytes)
    : hmac_(std::make_shared<const prepared_hmac>(bytes)) {
  // nop (the key itself is kept only as its absorbed pads)
}

std::string install_token_key::derive(std::string_view node, std::string_view nonce) const {
  std::string msg = "clusterws install token\n" + std::string{node} + "\n" + std::string{nonce};
  return hmac_->hex(msg);
}

std::string install_token_key::token(const store::read_txn& txn, std::string_view node) const {
  auto nonce = txn.node_meta(node, token_record);
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
