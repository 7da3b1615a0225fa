#include "api/sn_seal.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

#include "store/credentials.hpp"

namespace cws::api {

namespace {

/// One field, length-prefixed: no two different field lists give the same bytes.
void field(std::string& out, std::string_view x) {
  out += std::to_string(x.size());
  out += ':';
  out += x;
}

bool parse_decimal(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 20) {
    return false;
  }
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') {
      return false;
    }
    auto d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) {
      return false;
    }
    v = v * 10 + d;
  }
  out = v;
  return true;
}

bool is_hex64(std::string_view s) {
  if (s.size() != 64) {
    return false;
  }
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

} // namespace

bool valid_sn_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '.' || name.front() == '-') {
    return false;
  }
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
              || c == '_' || c == '-';
    if (!ok) {
      return false;
    }
  }
  return true;
}

std::string make_sn_secret() {
  return store::random_hex(sn_secret_bytes);
}

std::string make_sn_challenge() {
  return store::random_hex(16);
}

std::string check_sn_secret(std::string_view secret) {
  if (!is_hex64(secret)) {
    return "a service node secret is 64 lowercase hex digits";
  }
  return {};
}

bool equal_constant_time(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string sn_registration_proof(std::string_view secret, std::string_view name, uint32_t version,
                                  std::string_view challenge) {
  std::string data = "cws-sn-register\n";
  field(data, name);
  field(data, std::to_string(version));
  field(data, challenge);
  return store::hmac_sha256_hex(secret, data);
}

bool sn_check_registration(std::string_view secret, std::string_view name, uint32_t version,
                           std::string_view challenge, std::string_view proof) {
  return equal_constant_time(sn_registration_proof(secret, name, version, challenge), proof);
}

std::string sn_heartbeat_proof(std::string_view secret, sn_heartbeat_from from,
                               std::string_view name, std::string_view challenge, uint64_t seq,
                               uint32_t load) {
  std::string data
    = from == sn_heartbeat_from::head ? "cws-sn-heartbeat-head\n" : "cws-sn-heartbeat-sn\n";
  field(data, name);
  field(data, challenge);
  field(data, std::to_string(seq));
  field(data, std::to_string(load));
  return store::hmac_sha256_hex(secret, data);
}

bool sn_check_heartbeat(std::string_view secret, sn_heartbeat_from from, std::string_view name,
                        std::string_view challenge, uint64_t seq, uint32_t load,
                        std::string_view proof) {
  return equal_constant_time(sn_heartbeat_proof(secret, from, name, challenge, seq, load), proof);
}

sn_seal seal_sn_request(std::string_view secret, std::string_view name, uint64_t id,
                        int64_t expires_ms, std::string_view payload) {
  std::string data = "cws-sn-request\n";
  field(data, name);
  field(data, std::to_string(id));
  field(data, std::to_string(expires_ms));
  field(data, payload);
  return {id, expires_ms, store::hmac_sha256_hex(secret, data)};
}

std::string to_text(const sn_seal& s) {
  return "v1." + std::to_string(s.id) + "." + std::to_string(s.expires_ms) + "." + s.mac;
}

std::string parse_sn_seal(std::string_view text, sn_seal& out) {
  if (text.size() > 128) {
    return "a seal of " + std::to_string(text.size()) + " bytes: at most 128";
  }
  if (text.substr(0, 3) != "v1.") {
    return "not a seal of version 1";
  }
  auto rest = text.substr(3);
  auto dot1 = rest.find('.');
  auto dot2 = dot1 == std::string_view::npos ? dot1 : rest.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) {
    return "a seal is v1.<id>.<expiry>.<mac>";
  }
  uint64_t id = 0;
  uint64_t expires = 0;
  if (!parse_decimal(rest.substr(0, dot1), id)
      || !parse_decimal(rest.substr(dot1 + 1, dot2 - dot1 - 1), expires)
      || expires > static_cast<uint64_t>(INT64_MAX)) {
    return "a seal's id and expiry are decimal numbers";
  }
  auto mac = rest.substr(dot2 + 1);
  if (!is_hex64(mac)) {
    return "a seal's MAC is 64 lowercase hex digits";
  }
  out = {id, static_cast<int64_t>(expires), std::string{mac}};
  return {};
}

void sn_replay_cache::purge(int64_t now_ms) {
  while (!by_expiry_.empty() && by_expiry_.begin()->first < now_ms) {
    by_id_.erase(by_expiry_.begin()->second);
    by_expiry_.erase(by_expiry_.begin());
  }
}

std::string sn_replay_cache::admit(uint64_t id, int64_t expires_ms, int64_t now_ms) {
  purge(now_ms);
  if (by_id_.count(id) > 0) {
    return "request " + std::to_string(id) + " was seen before (a replay)";
  }
  if (by_id_.size() >= max_) {
    return "too many requests alive (" + std::to_string(max_)
           + ", setting sn_replay_cache): refused until some expire";
  }
  by_id_.emplace(id, expires_ms);
  by_expiry_.emplace(expires_ms, id);
  return {};
}

std::string verify_sn_request(std::string_view secret, std::string_view name, std::string_view text,
                              std::string_view payload, int64_t now_ms, sn_replay_cache& seen,
                              const sn_seal_limits& limits) {
  sn_seal s;
  if (auto why = parse_sn_seal(text, s); !why.empty()) {
    return why;
  }
  // the MAC first: nothing of an unauthenticated seal (its id) enters the cache
  auto want = seal_sn_request(secret, name, s.id, s.expires_ms, payload);
  if (!equal_constant_time(want.mac, s.mac)) {
    return "the request's seal does not verify for service node " + std::string{name};
  }
  if (s.expires_ms < now_ms) {
    return "the request expired " + std::to_string(now_ms - s.expires_ms) + " ms ago";
  }
  if (s.expires_ms - now_ms > limits.max_lifetime_ms) {
    return "the request expires too far ahead (" + std::to_string(s.expires_ms - now_ms)
           + " ms; at most " + std::to_string(limits.max_lifetime_ms) + ")";
  }
  return seen.admit(s.id, s.expires_ms, now_ms);
}

int64_t sn_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

} // namespace cws::api
