#pragma once

// The plain data of authentication and authorization: what the policy actor reads from the
// store, and what it answers.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/call.hpp"
#include "api/result.hpp"
#include "store/policy.hpp"

namespace cws::api {

/// What policy decisions need from the store, rebuilt when the database changes.
struct auth_snapshot {
  /// The generations (policy/passwd, group membership) it was read at.
  uint64_t auth_generation = 0;
  uint64_t membership_generation = 0;
  /// Enabled rows, sorted by priority, noderanges expanded.
  std::vector<store::policy_row> rows;
  bool has_noderange_rows = false;
  /// user -> stored crypt(3) hash
  std::map<std::string, std::string> passwords;
};

using auth_snapshot_ptr = std::shared_ptr<const auth_snapshot>;

/// A token as stored: whose it is and until when (seconds since the epoch; 0 = never).
struct token_info {
  bool found = false;
  std::string user;
  int64_t expires = 0;
};

/// The answer of authorization.
struct auth_result {
  bool allowed = false;
  /// Why not: authentication failure or policy.
  std::string reason;
  /// unauthorized (credentials, policy), unavailable (the service failed, not the client),
  /// failed (the request itself is wrong, e.g. a bad noderange: answered as a failed command,
  /// as it would be without policy noderange rows).
  errc error = errc::unauthorized;
  /// The authenticated user (also set when authenticated but not allowed), the stamp of
  /// the data the decision was made on, and the nodes expanded for it.
  authorization auth;

  /// A refusal of `user` (empty when not authenticated) for `reason`.
  static auth_result refused(std::string user, std::string reason, errc why = errc::unauthorized) {
    auth_result r;
    r.auth.user = std::move(user);
    r.reason = std::move(reason);
    r.error = why;
    return r;
  }
};

/// Counters of the policy actor (for tests and metrics).
struct auth_stats {
  uint64_t failures = 0;
  uint64_t hash_checks = 0;
  uint64_t cache_hits = 0;
  /// Guesses refused without hashing (too many failures of the user or the client).
  uint64_t throttled = 0;
  /// Noderanges expanded for policy rows with a noderange.
  uint64_t expansions = 0;
};

} // namespace cws::api
