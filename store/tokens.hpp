#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/database.hpp"

namespace cws::store {

/// An API token as stored in the token table: only the SHA-256 of its id is kept (the key),
/// with its owner, its times and the credential it is bound to.
struct token_record {
  /// SHA-256 (hex) of the token id: the key.
  std::string key;
  std::string user;
  /// Seconds since the epoch; `expires` 0 means never.
  int64_t created = 0;
  int64_t expires = 0;

  /// What listings show instead of the id (a secret): the first 16 hex digits of the key.
  std::string handle() const {
    return key.substr(0, 16);
  }
};

/// A new token for `user`, made in `t` at time `now`. It lives as `site.tokenexpiredays`
/// says, but never longer than `parent` (the SHA-256 of the token that asked for it, if a
/// token did): a token cannot renew itself. It is bound to the user's current password, so
/// a password change or the user's removal revokes it.
/// `life` (seconds, > 0) replaces the site's lifetime (a web console session).
/// @returns the new token's id (shown once) and its record.
std::pair<std::string, token_record> create_token(write_txn& t, const std::string& user,
                                                  const std::string& parent, int64_t now,
                                                  int64_t life = 0);

/// The token whose id has SHA-256 `key`, if it exists, is not expired at `now`, and is still
/// bound to its user's current password; else an empty record (`user` empty).
token_record find_token(const read_txn& t, const std::string& key, int64_t now);

/// The tokens of `user` (every user's when empty), expired ones included, by creation time.
std::vector<token_record> list_tokens(const read_txn& t, const std::string& user = {});

/// Deletes the tokens whose handle or key starts with `prefix` (at least 8 hex digits) and,
/// unless `owner` is empty, belong to `owner`. @returns how many were deleted.
size_t revoke_tokens_by_handle(write_txn& t, const std::string& prefix, const std::string& owner);

/// Deletes every token of `user`. @returns how many were deleted.
size_t revoke_user_tokens(write_txn& t, const std::string& user);

} // namespace cws::store
