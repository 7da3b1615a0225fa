#include "api/dns_message.hpp"

#include <arpa/inet.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cctype>
#include <stdexcept>
#include <tuple>

namespace cws::api::dns {

namespace {

constexpr uint16_t class_in = 1;
constexpr uint16_t class_none = 254;
constexpr uint16_t class_any = 255;
constexpr uint16_t opcode_update = 5;
constexpr uint16_t fudge = 300;
constexpr std::string_view algorithm = "hmac-sha256.";
constexpr size_t header_bytes = 12;

void put16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v & 0xff));
}

void put32(std::string& out, uint32_t v) {
  put16(out, static_cast<uint16_t>(v >> 16));
  put16(out, static_cast<uint16_t>(v & 0xffff));
}

void put48(std::string& out, uint64_t v) {
  put16(out, static_cast<uint16_t>((v >> 32) & 0xffff));
  put32(out, static_cast<uint32_t>(v & 0xffffffff));
}

uint16_t get16(std::string_view b, size_t at) {
  return static_cast<uint16_t>((static_cast<uint8_t>(b[at]) << 8)
                               | static_cast<uint8_t>(b[at + 1]));
}

void set16(std::string& b, size_t at, uint16_t v) {
  b[at] = static_cast<char>(v >> 8);
  b[at + 1] = static_cast<char>(v & 0xff);
}

std::string hmac(std::string_view secret, std::string_view data) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len);
  return std::string(reinterpret_cast<char*>(mac), len);
}

/// The TSIG variables the MAC covers after the message (RFC 8945 4.3.3).
std::string tsig_variables(std::string_view key_wire, std::string_view alg_wire, uint64_t time,
                           uint16_t fudge_s, uint16_t error, std::string_view other) {
  std::string v{key_wire};
  put16(v, class_any);
  put32(v, 0);
  v.append(alg_wire);
  put48(v, time);
  put16(v, fudge_s);
  put16(v, error);
  put16(v, static_cast<uint16_t>(other.size()));
  v.append(other);
  return v;
}

/// Reads the (possibly compressed) name at `pos` of `msg` into its canonical wire form;
/// `pos` moves past it. Pointers may only go backwards, so a name cannot loop.
bool read_name(std::string_view msg, size_t& pos, std::string* wire) {
  size_t at = pos;
  bool jumped = false;
  size_t total = 0;
  for (;;) {
    if (at >= msg.size()) {
      return false;
    }
    auto len = static_cast<uint8_t>(msg[at]);
    if ((len & 0xc0) == 0xc0) {
      if (at + 1 >= msg.size()) {
        return false;
      }
      size_t target = static_cast<size_t>(get16(msg, at) & 0x3fff);
      if (target >= at) {
        return false;
      }
      if (!jumped) {
        pos = at + 2;
        jumped = true;
      }
      at = target;
      continue;
    }
    if ((len & 0xc0) != 0) {
      return false; // extended label types are not used in answers to UPDATE
    }
    if (at + 1 + len > msg.size()) {
      return false;
    }
    total += len + 1u;
    if (total > 255) {
      return false;
    }
    if (wire) {
      wire->push_back(static_cast<char>(len));
      for (size_t i = 0; i < len; ++i) {
        wire->push_back(
          static_cast<char>(std::tolower(static_cast<unsigned char>(msg[at + 1 + i]))));
      }
    }
    at += 1u + len;
    if (len == 0) {
      if (!jumped) {
        pos = at;
      }
      return true;
    }
  }
}

bool parse_ipv4(std::string_view text, std::string& out) {
  in_addr a{};
  std::string s{text};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) {
    return false;
  }
  out.append(reinterpret_cast<const char*>(&a), 4);
  return true;
}

} // namespace

const char* type_name(rtype t) {
  switch (t) {
    case rtype::a: return "A";
    case rtype::ns: return "NS";
    case rtype::cname: return "CNAME";
    case rtype::soa: return "SOA";
    case rtype::ptr: return "PTR";
    case rtype::tsig: return "TSIG";
  }
  return "?";
}

bool record::operator<(const record& o) const {
  return std::tie(name, type, data) < std::tie(o.name, o.type, o.data);
}

std::string describe(const change& c) {
  if (c.what == change::kind::delete_rrset) {
    return "delete " + c.rr.name + " " + type_name(c.rr.type);
  }
  return "add " + c.rr.name + " " + std::to_string(c.ttl) + " IN " + type_name(c.rr.type) + " "
         + c.rr.data;
}

bool encode_name(std::string_view name, std::string& out, bool canonical) {
  if (!name.empty() && name.back() == '.') {
    name.remove_suffix(1);
  }
  size_t total = 1;
  while (!name.empty()) {
    auto dot = name.find('.');
    auto label = name.substr(0, dot);
    if (label.empty() || label.size() > 63) {
      return false;
    }
    total += label.size() + 1;
    if (total > 255) {
      return false;
    }
    out.push_back(static_cast<char>(label.size()));
    for (char ch : label) {
      out.push_back(canonical ? static_cast<char>(std::tolower(static_cast<unsigned char>(ch)))
                              : ch);
    }
    name = dot == std::string_view::npos ? std::string_view{} : name.substr(dot + 1);
  }
  out.push_back('\0');
  return true;
}

bool encode_update(uint16_t id, std::string_view zone, const std::vector<change>& changes,
                   std::string& out, std::string& error) {
  out.clear();
  put16(out, id);
  put16(out, static_cast<uint16_t>(opcode_update << 11));
  put16(out, 1); // ZOCOUNT
  put16(out, 0); // PRCOUNT
  put16(out, static_cast<uint16_t>(changes.size()));
  put16(out, 0); // ADCOUNT (TSIG comes with sign())
  if (changes.size() > 0xffff || !encode_name(zone, out)) {
    error = "zone '" + std::string{zone} + "' cannot be encoded";
    return false;
  }
  put16(out, static_cast<uint16_t>(rtype::soa));
  put16(out, class_in);
  for (const auto& c : changes) {
    if (!encode_name(c.rr.name, out)) {
      error = "name '" + c.rr.name + "' is not a valid DNS name";
      return false;
    }
    put16(out, static_cast<uint16_t>(c.rr.type));
    if (c.what == change::kind::delete_rrset) {
      put16(out, class_any);
      put32(out, 0);
      put16(out, 0);
      continue;
    }
    put16(out, class_in);
    put32(out, c.ttl);
    std::string rdata;
    bool ok = c.rr.type == rtype::a ? parse_ipv4(c.rr.data, rdata) : encode_name(c.rr.data, rdata);
    if (!ok) {
      error = std::string{type_name(c.rr.type)} + " data '" + c.rr.data + "' of " + c.rr.name
              + " is not valid";
      return false;
    }
    put16(out, static_cast<uint16_t>(rdata.size()));
    out += rdata;
  }
  if (out.size() > max_message_bytes - 512) {
    error = "the update is too large for one message (lower dns_update_batch)";
    return false;
  }
  return true;
}

void sign(std::string& message, const tsig_key& key, uint64_t now, std::string& mac) {
  std::string key_wire, alg_wire;
  encode_name(key.name, key_wire, true);
  encode_name(algorithm, alg_wire, true);
  mac = hmac(key.secret, message + tsig_variables(key_wire, alg_wire, now, fudge, 0, {}));
  uint16_t id = get16(message, 0);
  message += key_wire;
  put16(message, static_cast<uint16_t>(rtype::tsig));
  put16(message, class_any);
  put32(message, 0);
  std::string rdata = alg_wire;
  put48(rdata, now);
  put16(rdata, fudge);
  put16(rdata, static_cast<uint16_t>(mac.size()));
  rdata += mac;
  put16(rdata, id);
  put16(rdata, 0); // error
  put16(rdata, 0); // other len
  put16(message, static_cast<uint16_t>(rdata.size()));
  message += rdata;
  set16(message, 10, static_cast<uint16_t>(get16(message, 10) + 1));
}

std::string read_answer(std::string_view bytes, const tsig_key& key, std::string_view request_mac,
                        uint64_t now, answer& out) {
  out = answer{};
  if (bytes.size() > max_message_bytes) {
    return "the answer is larger than a DNS message can be";
  }
  if (bytes.size() < header_bytes) {
    return "the answer is shorter than a DNS header";
  }
  out.id = get16(bytes, 0);
  uint16_t flags = get16(bytes, 2);
  if ((flags & 0x8000) == 0) {
    return "the answer is not a response";
  }
  out.rcode = flags & 0x000f;
  size_t counts[4] = {get16(bytes, 4), get16(bytes, 6), get16(bytes, 8), get16(bytes, 10)};
  size_t pos = header_bytes;
  for (size_t i = 0; i < counts[0]; ++i) {
    if (!read_name(bytes, pos, nullptr) || pos + 4 > bytes.size()) {
      return "the answer's zone section is cut short";
    }
    pos += 4;
  }
  size_t records = counts[1] + counts[2] + counts[3];
  size_t last_start = 0;
  uint16_t last_type = 0;
  for (size_t i = 0; i < records; ++i) {
    size_t start = pos;
    if (!read_name(bytes, pos, nullptr) || pos + 10 > bytes.size()) {
      return "the answer's records are cut short";
    }
    uint16_t type = get16(bytes, pos);
    size_t rdlen = get16(bytes, pos + 8);
    pos += 10;
    if (pos + rdlen > bytes.size()) {
      return "a record of the answer is cut short";
    }
    if (type == static_cast<uint16_t>(rtype::tsig) && i + 1 != records) {
      return "the answer has a TSIG record that is not its last";
    }
    pos += rdlen;
    last_start = start;
    last_type = type;
  }
  if (pos != bytes.size()) {
    return "the answer has bytes after its last record";
  }
  if (counts[3] == 0 || last_type != static_cast<uint16_t>(rtype::tsig)) {
    return "";
  }
  // the TSIG record: owner, fixed fields, algorithm, time, fudge, MAC, id, error, other
  size_t at = last_start;
  std::string key_wire;
  if (!read_name(bytes, at, &key_wire)) {
    return "the answer's TSIG record is malformed";
  }
  at += 10;
  std::string alg_wire;
  if (!read_name(bytes, at, &alg_wire) || at + 10 > bytes.size()) {
    return "the answer's TSIG record is malformed";
  }
  uint64_t time = (static_cast<uint64_t>(get16(bytes, at)) << 32)
                  | (static_cast<uint64_t>(get16(bytes, at + 2)) << 16) | get16(bytes, at + 4);
  uint16_t fudge_s = get16(bytes, at + 6);
  size_t mac_len = get16(bytes, at + 8);
  at += 10;
  if (at + mac_len + 6 > bytes.size()) {
    return "the answer's TSIG record is malformed";
  }
  auto mac = bytes.substr(at, mac_len);
  at += mac_len;
  uint16_t original_id = get16(bytes, at);
  out.tsig_error = get16(bytes, at + 2);
  size_t other_len = get16(bytes, at + 4);
  at += 6;
  if (at + other_len != bytes.size()) {
    return "the answer's TSIG record is malformed";
  }
  auto other = bytes.substr(at, other_len);
  out.signed_ = true;

  std::string want_key, want_alg;
  encode_name(key.name, want_key, true);
  encode_name(algorithm, want_alg, true);
  if (key_wire != want_key || alg_wire != want_alg || mac.empty() || request_mac.empty()) {
    return "";
  }
  std::string covered;
  put16(covered, static_cast<uint16_t>(request_mac.size()));
  covered.append(request_mac);
  std::string prefix{bytes.substr(0, last_start)};
  set16(prefix, 0, original_id);
  set16(prefix, 10, static_cast<uint16_t>(counts[3] - 1));
  covered += prefix;
  covered += tsig_variables(key_wire, alg_wire, time, fudge_s, out.tsig_error, other);
  auto expected = hmac(key.secret, covered);
  uint64_t skew = time > now ? time - now : now - time;
  out.signature_ok = expected.size() == mac.size()
                     && CRYPTO_memcmp(expected.data(), mac.data(), mac.size()) == 0
                     && skew <= fudge_s;
  return "";
}

std::string rcode_name(unsigned rcode) {
  static const char* names[] = {"NOERROR",  "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED",
                                "YXDOMAIN", "YXRRSET", "NXRRSET",  "NOTAUTH",  "NOTZONE"};
  if (rcode < sizeof names / sizeof names[0]) {
    return names[rcode];
  }
  switch (rcode) {
    case 16: return "BADSIG";
    case 17: return "BADKEY";
    case 18: return "BADTIME";
    case 22: return "BADTRUNC";
  }
  return "RCODE" + std::to_string(rcode);
}

std::string parse_key_file(std::string_view text, tsig_key& out) {
  auto quoted_after = [&](std::string_view word, std::string& value) {
    auto at = text.find(word);
    if (at == std::string_view::npos) {
      return false;
    }
    auto open = text.find('"', at + word.size());
    auto close = open == std::string_view::npos ? open : text.find('"', open + 1);
    if (close == std::string_view::npos) {
      return false;
    }
    value = std::string{text.substr(open + 1, close - open - 1)};
    return true;
  };
  std::string b64;
  if (!quoted_after("key", out.name) || out.name.empty()) {
    return "it has no key \"NAME\" statement";
  }
  auto alg = text.find("algorithm");
  if (alg == std::string_view::npos
      || text.substr(alg).substr(0, 40).find("hmac-sha256") == std::string_view::npos) {
    return "its algorithm is not hmac-sha256";
  }
  if (!quoted_after("secret", b64) || b64.empty() || b64.size() > 1024) {
    return "it has no secret \"BASE64\"";
  }
  std::string raw(b64.size(), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(raw.data()),
                          reinterpret_cast<const unsigned char*>(b64.data()),
                          static_cast<int>(b64.size()));
  if (n <= 0 || b64.size() % 4 != 0) {
    return "its secret is not base64";
  }
  size_t pad = 0;
  for (auto it = b64.rbegin(); it != b64.rend() && *it == '='; ++it) {
    ++pad;
  }
  if (pad > 2 || static_cast<size_t>(n) < pad) { // "====" decodes to 3 bytes, not -1
    return "its secret is not base64";
  }
  raw.resize(static_cast<size_t>(n) - pad);
  out.secret = std::move(raw);
  return "";
}

std::string new_key_file(std::string_view name) {
  unsigned char secret[32];
  if (RAND_bytes(secret, sizeof secret) != 1) {
    throw std::runtime_error("no random bytes for a TSIG key");
  }
  unsigned char b64[64];
  int n = EVP_EncodeBlock(b64, secret, sizeof secret);
  OPENSSL_cleanse(secret, sizeof secret);
  std::string text = "key \"" + std::string{name} + "\" {\n\talgorithm hmac-sha256;\n\tsecret \""
                     + std::string(reinterpret_cast<char*>(b64), static_cast<size_t>(n))
                     + "\";\n};\n";
  OPENSSL_cleanse(b64, sizeof b64);
  return text;
}

} // namespace cws::api::dns
