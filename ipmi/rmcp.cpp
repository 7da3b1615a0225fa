#include "ipmi/rmcp.hpp"

#include <cstdio>
#include <cstring>
#include <memory>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace cws::ipmi {

namespace {

constexpr uint8_t rmcp_header[4] = {0x06, 0x00, 0xff, 0x07}; // RMCP 1.0, no ack, class IPMI
constexpr uint8_t auth_rmcpp = 0x06;                         // session header format 2.0
constexpr size_t session_header = 12; // auth type, payload type, id, sequence, length
constexpr size_t auth_code_size = 12; // HMAC-SHA1-96
constexpr uint8_t bmc_address = 0x20;
constexpr uint8_t console_address = 0x81; // a remote console software ID

void put32(bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) {
    b.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
}

uint32_t get32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8
         | static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

std::array<uint8_t, 20> hmac_sha1(const uint8_t* key, size_t key_size, const bytes& data) {
  std::array<uint8_t, 20> out{};
  unsigned int n = 0;
  HMAC(EVP_sha1(), key, static_cast<int>(key_size), data.data(), data.size(), out.data(), &n);
  return out;
}

/// The RAKP key: the user's password (HMAC pads it with zeros as IPMI does).
std::array<uint8_t, 20> kuid_hmac(const handshake& h, const bytes& data) {
  auto size = std::min(h.password.size(), max_password);
  return hmac_sha1(reinterpret_cast<const uint8_t*>(h.password.data()), size, data);
}

/// ROLE, ULENGTH, UNAME: the tail of every RAKP code.
void put_role_user(bytes& b, const handshake& h) {
  auto n = std::min(h.user.size(), max_user);
  b.push_back(h.role);
  b.push_back(static_cast<uint8_t>(n));
  b.insert(b.end(), h.user.begin(), h.user.begin() + static_cast<std::ptrdiff_t>(n));
}

uint8_t checksum(const uint8_t* p, size_t n) {
  uint8_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    sum = static_cast<uint8_t>(sum + p[i]);
  }
  return static_cast<uint8_t>(-sum);
}

struct cipher_ctx {
  EVP_CIPHER_CTX* p = EVP_CIPHER_CTX_new();
  ~cipher_ctx() {
    EVP_CIPHER_CTX_free(p);
  }
};

} // namespace

std::optional<datagram> parse_datagram(const uint8_t* data, size_t size,
                                       const std::array<uint8_t, 20>* k1) {
  if (size < sizeof rmcp_header + session_header || std::memcmp(data, rmcp_header, 4) != 0) {
    return std::nullopt;
  }
  const uint8_t* s = data + 4;
  size_t rest = size - 4;
  if (s[0] != auth_rmcpp) {
    return std::nullopt;
  }
  datagram d;
  d.encrypted = (s[1] & 0x80) != 0;
  d.authenticated = (s[1] & 0x40) != 0;
  d.type = static_cast<payload>(s[1] & 0x3f);
  d.session_id = get32(s + 2);
  d.sequence = get32(s + 6);
  size_t len = static_cast<size_t>(s[10]) | static_cast<size_t>(s[11]) << 8;
  if (len > rest - session_header) {
    return std::nullopt;
  }
  if (d.authenticated) {
    // pad (0-3 bytes of 0xff), pad length, next header (0x07), then the code
    size_t covered = session_header + len;
    size_t pad = (4 - (covered + 2) % 4) % 4;
    if (rest != covered + pad + 2 + auth_code_size) {
      return std::nullopt;
    }
    if (s[covered + pad] != pad || s[covered + pad + 1] != 0x07) {
      return std::nullopt;
    }
    if (k1 == nullptr) {
      return std::nullopt;
    }
    bytes signed_part(s, s + covered + pad + 2);
    auto mac = hmac_sha1(k1->data(), k1->size(), signed_part);
    if (CRYPTO_memcmp(mac.data(), s + covered + pad + 2, auth_code_size) != 0) {
      return std::nullopt;
    }
  }
  d.body.assign(s + session_header, s + session_header + len);
  return d;
}

bytes wrap_plain(payload type, const bytes& body) {
  bytes b(rmcp_header, rmcp_header + 4);
  b.push_back(auth_rmcpp);
  b.push_back(static_cast<uint8_t>(type));
  put32(b, 0);
  put32(b, 0);
  b.push_back(static_cast<uint8_t>(body.size()));
  b.push_back(static_cast<uint8_t>(body.size() >> 8));
  b.insert(b.end(), body.begin(), body.end());
  return b;
}

bytes wrap_session(uint32_t bmc_sid, uint32_t sequence, const session_keys& keys, const bytes& msg,
                   payload type) {
  // confidentiality: IV, then AES-CBC over msg + pad 1..n + n, a multiple of 16
  bytes plain = msg;
  size_t pad = (16 - (plain.size() + 1) % 16) % 16;
  for (size_t i = 1; i <= pad; ++i) {
    plain.push_back(static_cast<uint8_t>(i));
  }
  plain.push_back(static_cast<uint8_t>(pad));
  bytes body(16 + plain.size());
  RAND_bytes(body.data(), 16);
  cipher_ctx ctx;
  int n = 0;
  EVP_EncryptInit_ex(ctx.p, EVP_aes_128_cbc(), nullptr, keys.k2.data(), body.data());
  EVP_CIPHER_CTX_set_padding(ctx.p, 0);
  EVP_EncryptUpdate(ctx.p, body.data() + 16, &n, plain.data(), static_cast<int>(plain.size()));

  bytes b(rmcp_header, rmcp_header + 4);
  b.push_back(auth_rmcpp);
  b.push_back(0xc0 | static_cast<uint8_t>(type));
  put32(b, bmc_sid);
  put32(b, sequence);
  b.push_back(static_cast<uint8_t>(body.size()));
  b.push_back(static_cast<uint8_t>(body.size() >> 8));
  b.insert(b.end(), body.begin(), body.end());
  size_t covered = session_header + body.size();
  size_t ipad = (4 - (covered + 2) % 4) % 4;
  b.insert(b.end(), ipad, 0xff);
  b.push_back(static_cast<uint8_t>(ipad));
  b.push_back(0x07);
  bytes signed_part(b.begin() + 4, b.end());
  auto mac = hmac_sha1(keys.k1.data(), keys.k1.size(), signed_part);
  b.insert(b.end(), mac.begin(), mac.begin() + auth_code_size);
  return b;
}

std::optional<bytes> decrypt_payload(const bytes& body, const std::array<uint8_t, 16>& k2) {
  if (body.size() < 32 || body.size() % 16 != 0) {
    return std::nullopt;
  }
  bytes plain(body.size() - 16);
  cipher_ctx ctx;
  int n = 0;
  EVP_DecryptInit_ex(ctx.p, EVP_aes_128_cbc(), nullptr, k2.data(), body.data());
  EVP_CIPHER_CTX_set_padding(ctx.p, 0);
  if (EVP_DecryptUpdate(ctx.p, plain.data(), &n, body.data() + 16, static_cast<int>(plain.size()))
        != 1
      || static_cast<size_t>(n) != plain.size()) {
    return std::nullopt;
  }
  size_t pad = plain.back();
  if (pad >= 16 || pad + 1 > plain.size()) {
    return std::nullopt;
  }
  for (size_t i = 0; i < pad; ++i) {
    if (plain[plain.size() - 1 - pad + i] != i + 1) {
      return std::nullopt;
    }
  }
  plain.resize(plain.size() - 1 - pad);
  return plain;
}

bytes encode_request(const request& r, uint8_t seq) {
  bytes b{bmc_address,     static_cast<uint8_t>(r.netfn << 2),      0,
          console_address, static_cast<uint8_t>((seq & 0x3f) << 2), r.cmd};
  b[2] = checksum(b.data(), 2);
  b.insert(b.end(), r.data.begin(), r.data.end());
  b.push_back(checksum(b.data() + 3, b.size() - 3));
  return b;
}

std::optional<response> parse_response(const uint8_t* data, size_t size) {
  // rqAddr, netFn/LUN, checksum, rsAddr, rqSeq/LUN, cmd, completion code, data..., checksum
  if (size < 8 || checksum(data, 2) != data[2] || checksum(data + 3, size - 4) != data[size - 1]) {
    return std::nullopt;
  }
  if ((data[1] >> 2) % 2 != 1) {
    return std::nullopt; // not a response
  }
  response r;
  r.netfn = static_cast<uint8_t>((data[1] >> 2) - 1);
  r.seq = static_cast<uint8_t>(data[4] >> 2);
  r.cmd = data[5];
  r.code = data[6];
  r.data.assign(data + 7, data + size - 1);
  return r;
}

bytes open_session_request(uint8_t tag, uint32_t console_sid, uint8_t role) {
  bytes b{tag, role, 0, 0};
  put32(b, console_sid);
  // authentication RAKP-HMAC-SHA1, integrity HMAC-SHA1-96, confidentiality AES-CBC-128
  for (uint8_t kind = 0; kind < 3; ++kind) {
    b.insert(b.end(), {kind, 0, 0, 8, 1, 0, 0, 0});
  }
  return b;
}

std::optional<open_session_response> parse_open_session_response(const bytes& body) {
  if (body.size() < 8) {
    return std::nullopt;
  }
  open_session_response r;
  r.tag = body[0];
  r.status = body[1];
  r.console_sid = get32(body.data() + 4);
  if (r.status != 0) {
    return r; // an error answer ends after the console's session id
  }
  if (body.size() < 36) {
    return std::nullopt;
  }
  r.bmc_sid = get32(body.data() + 8);
  r.auth = body[16];
  r.integrity = body[24];
  r.confidentiality = body[32];
  return r;
}

bytes rakp1(uint8_t tag, const handshake& h) {
  bytes b{tag, 0, 0, 0};
  put32(b, h.bmc_sid);
  b.insert(b.end(), h.console_rand.begin(), h.console_rand.end());
  b.insert(b.end(), {h.role, 0, 0});
  auto n = std::min(h.user.size(), max_user);
  b.push_back(static_cast<uint8_t>(n));
  b.insert(b.end(), h.user.begin(), h.user.begin() + static_cast<std::ptrdiff_t>(n));
  return b;
}

std::optional<rakp2_message> parse_rakp2(const bytes& body) {
  if (body.size() < 8) {
    return std::nullopt;
  }
  rakp2_message m;
  m.tag = body[0];
  m.status = body[1];
  m.console_sid = get32(body.data() + 4);
  if (m.status != 0) {
    return m;
  }
  if (body.size() < 40 + 20) {
    return std::nullopt;
  }
  std::memcpy(m.bmc_rand.data(), body.data() + 8, 16);
  std::memcpy(m.bmc_guid.data(), body.data() + 24, 16);
  m.code.assign(body.begin() + 40, body.end());
  return m;
}

bool rakp2_valid(const handshake& h, const bytes& code) {
  bytes d;
  put32(d, h.console_sid);
  put32(d, h.bmc_sid);
  d.insert(d.end(), h.console_rand.begin(), h.console_rand.end());
  d.insert(d.end(), h.bmc_rand.begin(), h.bmc_rand.end());
  d.insert(d.end(), h.bmc_guid.begin(), h.bmc_guid.end());
  put_role_user(d, h);
  auto mac = kuid_hmac(h, d);
  return code.size() == mac.size() && CRYPTO_memcmp(code.data(), mac.data(), mac.size()) == 0;
}

bytes rakp3(uint8_t tag, const handshake& h) {
  bytes d(h.bmc_rand.begin(), h.bmc_rand.end());
  put32(d, h.console_sid);
  put_role_user(d, h);
  auto mac = kuid_hmac(h, d);
  bytes b{tag, 0, 0, 0};
  put32(b, h.bmc_sid);
  b.insert(b.end(), mac.begin(), mac.end());
  return b;
}

std::optional<rakp4_message> parse_rakp4(const bytes& body) {
  if (body.size() < 8) {
    return std::nullopt;
  }
  rakp4_message m;
  m.tag = body[0];
  m.status = body[1];
  m.console_sid = get32(body.data() + 4);
  m.icv.assign(body.begin() + 8, body.end());
  return m;
}

session_keys derive_keys(const handshake& h) {
  bytes d(h.console_rand.begin(), h.console_rand.end());
  d.insert(d.end(), h.bmc_rand.begin(), h.bmc_rand.end());
  put_role_user(d, h);
  session_keys k;
  k.sik = kuid_hmac(h, d); // Kg is Kuid: no BMC key is set
  k.k1 = hmac_sha1(k.sik.data(), k.sik.size(), bytes(20, 0x01));
  auto k2 = hmac_sha1(k.sik.data(), k.sik.size(), bytes(20, 0x02));
  std::memcpy(k.k2.data(), k2.data(), k.k2.size());
  return k;
}

bool rakp4_valid(const handshake& h, const session_keys& k, const bytes& icv) {
  bytes d(h.console_rand.begin(), h.console_rand.end());
  put32(d, h.bmc_sid);
  d.insert(d.end(), h.bmc_guid.begin(), h.bmc_guid.end());
  auto mac = hmac_sha1(k.sik.data(), k.sik.size(), d);
  return icv.size() == auth_code_size && CRYPTO_memcmp(icv.data(), mac.data(), auth_code_size) == 0;
}

std::string status_text(uint8_t status) {
  static const char* const texts[] = {
    "No errors",
    "Insufficient resources to create a session",
    "Invalid session ID",
    "Invalid payload type",
    "Invalid authentication algorithm",
    "Invalid integrity algorithm",
    "No matching authentication payload",
    "No matching integrity payload",
    "Inactive session ID",
    "Invalid role",
    "Unauthorized role or privilege level requested",
    "Insufficient resources to create a session at the requested role",
    "Invalid name length",
    "Unauthorized name",
    "Unauthorized GUID",
    "Invalid integrity check value",
    "Invalid confidentiality algorithm",
    "No cipher suite match with proposed security algorithms",
    "Illegal or unrecognized parameter",
  };
  if (status < sizeof texts / sizeof texts[0]) {
    return texts[status];
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "Unknown RMCP+ status %02xh", status);
  return buf;
}

std::string completion_text(uint8_t code) {
  switch (code) {
    case 0xc0: return "Node busy";
    case 0xc1: return "Invalid command";
    case 0xc2: return "Invalid command on LUN";
    case 0xc3: return "Timeout";
    case 0xc4: return "Out of space";
    case 0xc5: return "Reservation cancelled or invalid";
    case 0xc6: return "Request data truncated";
    case 0xc7: return "Request data length invalid";
    case 0xc8: return "Request data field length limit exceeded";
    case 0xc9: return "Parameter out of range";
    case 0xca: return "Cannot return number of requested data bytes";
    case 0xcb: return "Requested sensor, data, or record not present";
    case 0xcc: return "Invalid data field in request";
    case 0xcd: return "Command illegal for specified sensor or record type";
    case 0xce: return "Command response could not be provided";
    case 0xcf: return "Cannot execute duplicated request";
    case 0xd0: return "SDR repository in update mode";
    case 0xd1: return "Device firmeware in update mode";
    case 0xd2: return "BMC initialization in progress";
    case 0xd3: return "Destination unavailable";
    case 0xd4: return "Insufficient privilege level";
    case 0xd5: return "Command not supported in present state";
    case 0xff: return "Unspecified error";
    default: break;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "Unknown error code %02xh", code);
  return buf;
}

} // namespace cws::ipmi
