#include "store/tokens.hpp"

#include <algorithm>
#include <cstdlib>

#include "store/credentials.hpp"

namespace cws::store {

namespace {

/// What binds a token to its user's password: a hash of the stored password hash. A new
/// password (or no password: the user was removed) no longer matches it.
std::string credential_binding(const read_txn& t, const std::string& user) {
  auto rec = t.get(object_type::passwd, user);
  if (!rec) {
    return {};
  }
  return sha256_hex("clusterws-token:" + std::string{rec->find("password").value_or("")});
}

int64_t number(const record_view& rec, std::string_view key) {
  return std::atoll(std::string{rec.find(key).value_or("0")}.c_str());
}

token_record to_record(std::string_view key, const record_view& rec) {
  return {std::string{key}, std::string{rec.find("username").value_or("")}, number(rec, "created"),
          number(rec, "expires")};
}

/// A random (v4) UUID: the token id clients see.
std::string new_uuid() {
  auto hex = random_hex(16);
  hex[12] = '4';
  hex[16] = "89ab"[hex[16] % 4];
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-"
         + hex.substr(16, 4) + "-" + hex.substr(20);
}

/// Deletes the tokens `pick` selects. @returns how many.
template<class Pick>
size_t revoke_if(write_txn& t, Pick&& pick) {
  std::vector<std::string> keys;
  t.scan(object_type::token, [&](std::string_view key, record_view rec) {
    if (pick(to_record(key, rec))) {
      keys.emplace_back(key);
    }
  });
  for (const auto& k : keys) {
    t.erase(object_type::token, k);
  }
  return keys.size();
}

} // namespace

std::pair<std::string, token_record> create_token(write_txn& t, const std::string& user,
                                                  const std::string& parent, int64_t now,
                                                  int64_t life_override) {
  std::string days = "1";
  if (auto site = t.get(object_type::site, "clustersite")) {
    days = std::string{site->find("tokenexpiredays").value_or("1")};
  }
  auto life = life_override > 0 ? life_override : token_lifetime_seconds(days);
  token_record r{{}, user, now, life == 0 ? 0 : now + life};
  if (!parent.empty()) {
    if (auto p = t.get(object_type::token, parent)) {
      auto limit = number(*p, "expires");
      if (limit != 0 && (r.expires == 0 || r.expires > limit)) {
        r.expires = limit;
      }
    }
  }
  auto id = new_uuid();
  r.key = sha256_hex(id);
  t.put(object_type::token, r.key,
        {{"username", user},
         {"expires", std::to_string(r.expires)},
         {"created", std::to_string(now)},
         {"credential", credential_binding(t, user)}});
  return {std::move(id), std::move(r)};
}

token_record find_token(const read_txn& t, const std::string& key, int64_t now) {
  auto rec = t.get(object_type::token, key);
  if (!rec) {
    return {};
  }
  auto r = to_record(key, *rec);
  auto bound = credential_binding(t, r.user);
  if ((r.expires != 0 && r.expires < now) || bound.empty()
      || !constant_time_equal(bound, rec->find("credential").value_or(""))) {
    return {};
  }
  return r;
}

std::vector<token_record> list_tokens(const read_txn& t, const std::string& user) {
  std::vector<token_record> out;
  t.scan(object_type::token, [&](std::string_view key, record_view rec) {
    auto r = to_record(key, rec);
    if (user.empty() || r.user == user) {
      out.push_back(std::move(r));
    }
  });
  std::stable_sort(out.begin(), out.end(), [](const token_record& a, const token_record& b) {
    return a.created < b.created;
  });
  return out;
}

size_t revoke_tokens_by_handle(write_txn& t, const std::string& prefix, const std::string& owner) {
  if (prefix.size() < 8) {
    return 0;
  }
  return revoke_if(t, [&](const token_record& r) {
    return r.key.compare(0, prefix.size(), prefix) == 0 && (owner.empty() || r.user == owner);
  });
}

size_t revoke_user_tokens(write_txn& t, const std::string& user) {
  return revoke_if(t, [&](const token_record& r) { return r.user == user; });
}

} // namespace cws::store
