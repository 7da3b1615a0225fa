#pragma once

// DNS UPDATE messages (RFC 2136) signed with TSIG (RFC 8945, hmac-sha256), and the reading
// of a server's answer to one: what makedns sends to named. Sans-IO: bytes in, bytes out.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cws::api::dns {

/// The record types makedns writes.
enum class rtype : uint16_t { a = 1, ns = 2, cname = 5, soa = 6, ptr = 12, tsig = 250 };

/// "A", "PTR", "CNAME" (as a zone file writes them).
const char* type_name(rtype t);

/// One record: `name` and, for PTR and CNAME, `data` are absolute names with their final
/// dot; an A record's `data` is a dotted IPv4 address.
struct record {
  std::string name;
  rtype type = rtype::a;
  std::string data;

  bool operator==(const record& o) const {
    return type == o.type && name == o.name && data == o.data;
  }
  bool operator<(const record& o) const;
};

/// One change of an UPDATE: add `rr` (with `ttl`), or delete every record of `rr.name` with
/// `rr.type` (an RRset, `data` unused).
struct change {
  enum class kind : uint8_t { add, delete_rrset };
  kind what = kind::add;
  record rr;
  uint32_t ttl = 86400;
};

/// The text of a change as the dry run lists it: `add NAME TTL IN TYPE DATA` or
/// `delete NAME TYPE`.
std::string describe(const change& c);

/// A TSIG key (only hmac-sha256).
struct tsig_key {
  std::string name;   ///< the key's name, e.g. `xcat_key`
  std::string secret; ///< the raw secret bytes (not base64)
};

/// The unsigned UPDATE message for `zone` carrying `changes`, with message id `id`.
/// @returns false (and `error` says why) for a name or address that cannot be encoded.
bool encode_update(uint16_t id, std::string_view zone, const std::vector<change>& changes,
                   std::string& out, std::string& error);

/// Appends a TSIG record signed with `key` at time `now` (seconds since the epoch, fudge
/// 300 s) to `message` and counts it in the header. `mac` receives the request's MAC, which
/// the answer's signature covers.
void sign(std::string& message, const tsig_key& key, uint64_t now, std::string& mac);

/// Limits of reading an answer (a name server's bytes are not trusted).
constexpr size_t max_message_bytes = 65535;

/// What an answer to an UPDATE says.
struct answer {
  uint16_t id = 0;
  unsigned rcode = 0;        ///< the header's RCODE (NOERROR 0, NOTAUTH 9, ...)
  bool signed_ = false;      ///< it carries a TSIG record
  unsigned tsig_error = 0;   ///< that record's error (BADSIG 16, BADKEY 17, BADTIME 18)
  bool signature_ok = false; ///< its MAC verifies with the key against the request
};

/// Reads `bytes` (one DNS message) and, when it is signed, checks its TSIG against `key`,
/// the request's `request_mac` and time `now`.
/// @returns "" or why the bytes are not a well-formed DNS message.
std::string read_answer(std::string_view bytes, const tsig_key& key, std::string_view request_mac,
                        uint64_t now, answer& out);

/// "NOERROR", "NOTAUTH", ... ("RCODE17" for one without a name).
std::string rcode_name(unsigned rcode);

/// The wire form of an absolute or relative `name` (a final dot optional), lower-cased when
/// `canonical`. @returns false for an empty label, a label over 63 bytes or a name over 255.
bool encode_name(std::string_view name, std::string& out, bool canonical = false);

/// Reads a `key "NAME" { algorithm hmac-sha256; secret "BASE64"; };` file as tsig-keygen
/// writes it. @returns "" or what is wrong with it.
std::string parse_key_file(std::string_view text, tsig_key& out);

/// A key file with a new random 256-bit secret named `name`, as `tsig-keygen -a hmac-sha256`
/// writes one.
std::string new_key_file(std::string_view name);

} // namespace cws::api::dns
