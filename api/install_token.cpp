#include "api/install_token.hpp"

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

std::string install_token_key::derive(std::string_view node, std::string_view nonce) const {
  std::string msg = "clusterws install token\n" + std::string{node} + "\n" + std::string{nonce};
  return store::hmac_sha256_hex(key_, msg);
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
