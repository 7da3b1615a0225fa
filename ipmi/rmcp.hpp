#pragma once

// IPMI 2.0 / RMCP+ datagrams (IPMI v2.0 spec, sections 13.6-13.32) for cipher suite 3:
// RAKP-HMAC-SHA1 authentication, HMAC-SHA1-96 integrity, AES-CBC-128 confidentiality.
// Pure functions over bytes: building requests, checking and opening answers, and the key
// derivation. Every parser takes untrusted bytes and is fuzzed (fuzz/fuzz_rmcp.cpp).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cws::ipmi {

using bytes = std::vector<uint8_t>;
using rand16 = std::array<uint8_t, 16>;

/// RMCP+ payload types used here.
enum class payload : uint8_t {
  ipmi = 0x00,
  sol = 0x01, ///< Serial-over-LAN (IPMI 2.0 section 15.9)
  open_request = 0x10,
  open_response = 0x11,
  rakp1 = 0x12,
  rakp2 = 0x13,
  rakp3 = 0x14,
  rakp4 = 0x15,
};

/// Privilege levels (RAKP role, Set Session Privilege Level).
constexpr uint8_t privilege_operator = 0x03;
constexpr uint8_t privilege_admin = 0x04;

/// Longest user name (RAKP message 1) and password (the RAKP key) IPMI 2.0 allows.
constexpr size_t max_user = 16;
constexpr size_t max_password = 20;

/// An IPMI request inside a session (to the BMC at 0x20, LUN 0).
struct request {
  uint8_t netfn = 0;
  uint8_t cmd = 0;
  bytes data;
};

/// An IPMI response: completion code and data.
struct response {
  uint8_t netfn = 0; ///< the request's netfn (the response's is one more)
  uint8_t cmd = 0;
  uint8_t seq = 0; ///< rqSeq, matching the request
  uint8_t code = 0;
  bytes data;
};

/// The keys of an established session.
struct session_keys {
  std::array<uint8_t, 20> sik{};
  std::array<uint8_t, 20> k1{}; ///< integrity (HMAC-SHA1-96)
  std::array<uint8_t, 16> k2{}; ///< confidentiality (AES-128), the first 16 bytes of K2
};

/// What the handshake has agreed so far: both session ids, both random numbers, the BMC's
/// GUID, and the requested role with the user name (they enter every RAKP code).
struct handshake {
  uint32_t console_sid = 0;
  uint32_t bmc_sid = 0;
  rand16 console_rand{};
  rand16 bmc_rand{};
  rand16 bmc_guid{};
  uint8_t role = privilege_admin;
  std::string user;
  std::string password;
};

// -- datagrams ---------------------------------------------------------------------

/// A datagram as received, after the RMCP and session headers were checked.
struct datagram {
  payload type = payload::ipmi;
  bool encrypted = false;
  bool authenticated = false;
  uint32_t session_id = 0;
  uint32_t sequence = 0;
  /// The payload as it was on the wire (still encrypted if `encrypted`).
  bytes body;
};

/// Parses an RMCP / IPMI 2.0 datagram. An authenticated one is checked against `k1` (when
/// given): a wrong code gives nothing. Never reads past `size`.
/// @returns nothing for anything that is not a well-formed IPMI 2.0 datagram.
std::optional<datagram> parse_datagram(const uint8_t* data, size_t size,
                                       const std::array<uint8_t, 20>* k1);

/// A pre-session datagram (session id 0, neither encrypted nor authenticated).
bytes wrap_plain(payload type, const bytes& body);

/// An in-session datagram of payload `type` (IPMI by default): `msg` encrypted with K2
/// (random IV) and signed with K1.
bytes wrap_session(uint32_t bmc_sid, uint32_t sequence, const session_keys& keys, const bytes& msg,
                   payload type = payload::ipmi);

/// Decrypts an AES-CBC-128 payload (IV first) and strips its confidentiality pad.
/// @returns nothing if the sizes or the pad are wrong.
std::optional<bytes> decrypt_payload(const bytes& body, const std::array<uint8_t, 16>& k2);

// -- IPMI messages (LAN format) ----------------------------------------------------

/// The LAN-format IPMI message of `r` with sequence `seq` (0-63), checksums included.
bytes encode_request(const request& r, uint8_t seq);

/// Parses a LAN-format IPMI response (checksums checked).
std::optional<response> parse_response(const uint8_t* data, size_t size);

// -- session set-up ------------------------------------------------------------------

/// RMCP+ Open Session Request asking for cipher suite 3 at `role`.
bytes open_session_request(uint8_t tag, uint32_t console_sid, uint8_t role);

/// The answer to the Open Session Request.
struct open_session_response {
  uint8_t tag = 0;
  uint8_t status = 0;
  uint32_t console_sid = 0;
  uint32_t bmc_sid = 0;
  uint8_t auth = 0, integrity = 0, confidentiality = 0;
};
std::optional<open_session_response> parse_open_session_response(const bytes& body);

/// RAKP Message 1.
bytes rakp1(uint8_t tag, const handshake& h);

/// RAKP Message 2 (the BMC's random number, GUID and key exchange code).
struct rakp2_message {
  uint8_t tag = 0;
  uint8_t status = 0;
  uint32_t console_sid = 0;
  rand16 bmc_rand{};
  rand16 bmc_guid{};
  bytes code;
};
std::optional<rakp2_message> parse_rakp2(const bytes& body);

/// True if RAKP 2's code proves the BMC knows the password (`h` holds bmc_rand and GUID).
bool rakp2_valid(const handshake& h, const bytes& code);

/// RAKP Message 3 (the console's proof of the password).
bytes rakp3(uint8_t tag, const handshake& h);

/// RAKP Message 4.
struct rakp4_message {
  uint8_t tag = 0;
  uint8_t status = 0;
  uint32_t console_sid = 0;
  bytes icv;
};
std::optional<rakp4_message> parse_rakp4(const bytes& body);

/// The session keys of a completed RAKP exchange.
session_keys derive_keys(const handshake& h);

/// True if RAKP 4's integrity check value matches the session's SIK.
bool rakp4_valid(const handshake& h, const session_keys& k, const bytes& icv);

/// The text of an RMCP+ status code (Open Session Response, RAKP 2 and 4).
std::string status_text(uint8_t status);

/// The text of an IPMI completion code (xCAT's table; "Unknown error code XXh" otherwise).
std::string completion_text(uint8_t code);

} // namespace cws::ipmi
