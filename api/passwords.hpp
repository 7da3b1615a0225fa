#pragma once

// The passwords install templates put on the nodes: `#CRYPT:passwd:key=system,username=root:
// password#` (xCAT's Template.pm crydb), rendered from the passwd table's system row
// (store::system_credentials_object) as a crypt(3) hash, never in clear.

#include <string>
#include <string_view>

#include "store/database.hpp"

namespace cws::api {

/// The crypt(3) hash of the password in the passwd row with `key` and `username` (any user
/// name when `username` is empty), as `#CRYPT:passwd:key=KEY,username=USER:password#`
/// renders it: a stored `$1$`, `$5$` or `$6$` hash as it is, a clear text password hashed
/// with SHA-512 (`$6$`, a fresh random salt on every call; xCAT uses MD5 `$1$`). Only
/// key=system is served (the API users' hashes never leave the store).
/// @returns the hash, or "" with `error` set (xCAT's "Unable to find requested password
/// from passwd in this context"). Neither the password nor the hash is ever logged.
std::string system_password_hash(const store::read_txn& txn, std::string_view key,
                                 std::string_view username, std::string* error);

} // namespace cws::api
