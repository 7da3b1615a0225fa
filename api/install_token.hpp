#pragma once

// The per-node install token (docs/provisioning.md, "The install token"): `nodeset osimage`
// arms it, the node's boot script carries it on the kernel command line, and the node's
// kickstart/preseed and every status callback must present it; it ends when the node
// reports `installed` (or a nodeset to anything but an osimage).
//
// What is stored: per armed node one per-node meta record `install.token` (the store's
// `node/<node>/install.token`, removed with the node) holding a random nonce (128 bits),
// never the token. The token is HMAC-SHA256(key, node, nonce) under a key
// of 256 random bits in the home (`install-token.key`, mode 0600, root's), so the database
// (and its backups, and any reader of it) cannot give a token, and a new nodeset (a new
// nonce) voids the old token at once. Meta records stay out of the change log.

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "store/database.hpp"

namespace cws::api {

/// Arms a fresh token for each of `nodes` in `t` (replacing any armed one).
void arm_install_tokens(store::write_txn& t, const std::vector<std::string>& nodes);

/// Ends the token of `node` in `t`; false if none was armed.
bool disarm_install_token(store::write_txn& t, std::string_view node);

/// The armed nonce of `node` ("" when none): tells two arms apart, and carries a token over a
/// chain step (`rearm_install_token`). Not a token: without the key it gives none.
std::string install_token_nonce(const store::read_txn& txn, std::string_view node);

/// Arms `node` with `nonce` again: the same token as before (a callback's `next` keeps the
/// token until the node reports `installed`).
void rearm_install_token(store::write_txn& t, std::string_view node, std::string_view nonce);

/// True if `node` has an armed token in `txn`.
bool install_token_armed(const store::read_txn& txn, std::string_view node);

/// The nodes with an armed token in `txn`, in name order.
std::vector<std::string> install_token_nodes(const store::read_txn& txn);

/// Counts one refused token of `node` within the install armed with `nonce` (the nonce the
/// refusing read saw) and returns the count so far; 0 when `nonce` is no longer the armed one
/// (nothing counted). The count is the per-node record `install.badtokens` (`<nonce> <n>`),
/// so it survives a daemon restart and goes with the node; a new nonce starts it again.
unsigned count_refused_token(store::write_txn& t, std::string_view node, std::string_view nonce);

/// The refusals counted within `node`'s armed install (0 when none or none armed).
unsigned refused_token_count(const store::read_txn& txn, std::string_view node);

/// The key tokens are derived with.
class install_token_key {
 public:
  /// Reads the key file at `path`, creating it (0600, 32 random bytes as hex) when missing.
  /// @throws std::runtime_error when it cannot be read or written, or is malformed.
  static install_token_key load_or_create(const std::filesystem::path& path);

  /// A key of the given bytes (tests).
  explicit install_token_key(std::string bytes);

  /// The token of `node` as `txn` has it armed: 64 hex digits; "" when none is armed.
  std::string token(const store::read_txn& txn, std::string_view node) const;

  /// True if `presented` is the armed token of `node` in `txn`, compared in constant time;
  /// false when none is armed or `presented` is empty.
  bool check(const store::read_txn& txn, std::string_view node, std::string_view presented) const;

 private:
  std::string derive(std::string_view node, std::string_view nonce) const;
  /// HMAC-SHA256 under the key with its inner and outer pads hashed once (OpenSSL 3's
  /// one-shot HMAC() fetches the algorithm on every call: a boot script costs one token).
  struct prepared_hmac;
  std::shared_ptr<const prepared_hmac> hmac_;
};

/// The key file's name in the home.
constexpr const char* install_token_key_file = "install-token.key";

} // namespace cws::api
