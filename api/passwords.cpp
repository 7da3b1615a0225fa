#include "api/passwords.hpp"

#include "store/credentials.hpp"
#include "store/error.hpp"
#include "store/tables.hpp"

namespace cws::api {

namespace {

bool is_kept_hash(std::string_view s) {
  // Template.pm's crydb: 1 - MD5, 5 - SHA256, 6 - SHA512 are used as they are
  return s.size() > 3 && s[0] == '$' && (s[1] == '1' || s[1] == '5' || s[1] == '6') && s[2] == '$';
}

std::string fail(std::string* error, std::string message) {
  if (error) {
    *error = std::move(message);
  }
  return {};
}

} // namespace

std::string system_password_hash(const store::read_txn& txn, std::string_view key,
                                 std::string_view username, std::string* error) {
  const std::string not_found = "Unable to find requested password from passwd in this context";
  if (key != "system") {
    return fail(error, "Only the passwd table's key=system row can be rendered (#CRYPT:passwd:"
                       "key=system,username=root:password#).");
  }
  auto rec = txn.get(store::object_type::site, store::system_credentials_object);
  if (!rec) {
    return fail(error, not_found);
  }
  if (!username.empty() && rec->find("username").value_or("") != username) {
    return fail(error, not_found);
  }
  std::string_view password = rec->find("password").value_or("");
  if (password.empty()) {
    return fail(error, not_found);
  }
  if (is_kept_hash(password)) {
    return std::string{password};
  }
  try {
    return store::hash_password_sha512(password);
  } catch (const std::exception& e) {
    return fail(error, e.what());
  }
}

} // namespace cws::api
