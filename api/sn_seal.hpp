#pragma once

// The trust between the head and its service nodes above TLS (docs/service-nodes.md): CAF's
// TLS accepts any certificate its CA signed and forwards messages between peers (BASP
// routing), so each service node proves its name with its own secret, and each request the
// head delegates carries a seal under that secret: an HMAC-SHA256 over the service node's
// name, a request id, an expiry and the request's bytes. A seal for another service node, an
// expired one or one seen before is refused. No CAF here: the actors and the tests use it
// alike, and the verify side (which reads another process's text) is fuzzed.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cws::api {

/// The version of the head <-> service node protocol (registration, heartbeats and the
/// delegated requests): a service node of another version is refused at registration.
/// 2: the heartbeat's format, the wire targets and a copy's files in a share changed.
constexpr uint32_t sn_protocol_version = 2;

/// Bytes of a per-service-node secret (random, written hex-encoded: 64 characters).
constexpr size_t sn_secret_bytes = 32;

/// True if `name` can name a service node: 1 to 64 of [A-Za-z0-9._-], not starting with '.'
/// or '-' (it names a file of the head's).
bool valid_sn_name(std::string_view name);

/// A new random secret, hex-encoded. @throws std::runtime_error if the RNG fails.
std::string make_sn_secret();

/// A new random challenge for a registration, hex-encoded (16 bytes).
std::string make_sn_challenge();

/// Checks a secret's text: 64 lowercase hex digits. @returns "" or why not.
std::string check_sn_secret(std::string_view secret);

/// True if `a` and `b` are equal, in time that depends only on their lengths.
bool equal_constant_time(std::string_view a, std::string_view b);

/// The proof a service node sends at registration: the HMAC under its secret over its name,
/// its protocol version and the head's challenge.
std::string sn_registration_proof(std::string_view secret, std::string_view name, uint32_t version,
                                  std::string_view challenge);

/// True if `proof` is the registration proof of `name` for `challenge` (constant time).
bool sn_check_registration(std::string_view secret, std::string_view name, uint32_t version,
                           std::string_view challenge, std::string_view proof);

/// Which way a heartbeat goes: each direction has its own proof, so one cannot be reflected
/// as the other.
enum class sn_heartbeat_from : uint8_t { service_node, head };

/// A heartbeat's proof: the HMAC under the service node's secret over the direction, its
/// name, the challenge of its current registration, the heartbeat's number and load. It binds
/// the heartbeat to that registration and to the secret, never to the sender's actor address
/// (which CAF's BASP lets a peer write): another peer cannot keep a service node's liveness up.
std::string sn_heartbeat_proof(std::string_view secret, sn_heartbeat_from from,
                               std::string_view name, std::string_view challenge, uint64_t seq,
                               uint32_t load);

/// True if `proof` is that heartbeat's proof (constant time).
bool sn_check_heartbeat(std::string_view secret, sn_heartbeat_from from, std::string_view name,
                        std::string_view challenge, uint64_t seq, uint32_t load,
                        std::string_view proof);

/// A request's seal: its id, when it expires (milliseconds since the epoch) and the MAC.
struct sn_seal {
  uint64_t id = 0;
  int64_t expires_ms = 0;
  /// hex HMAC-SHA256 over name, id, expiry and the payload.
  std::string mac;
};

/// Seals `payload` for service node `name` under its `secret`: request `id`, valid until
/// `expires_ms`.
sn_seal seal_sn_request(std::string_view secret, std::string_view name, uint64_t id,
                        int64_t expires_ms, std::string_view payload);

/// The seal as one line of text: `v1.<id>.<expires_ms>.<mac>`.
std::string to_text(const sn_seal& s);

/// Reads a seal's text (to_text's form; at most 128 bytes). @returns "" or why it is no seal.
std::string parse_sn_seal(std::string_view text, sn_seal& out);

/// The ids of sealed requests seen and not yet expired, bounded: a seal seen again is a
/// replay. Ids expire with their seal; when `max` ids are alive a new one is refused (the
/// cache is never emptied to make room, which would let a replay through).
class sn_replay_cache {
 public:
  explicit sn_replay_cache(size_t max) : max_(max) {
    // nop
  }
  /// Records `id` valid until `expires_ms` (now `now_ms`). @returns "" or why it is refused
  /// (seen before, or the cache full).
  std::string admit(uint64_t id, int64_t expires_ms, int64_t now_ms);
  size_t size() const noexcept {
    return by_id_.size();
  }

 private:
  void purge(int64_t now_ms);
  size_t max_;
  std::unordered_map<uint64_t, int64_t> by_id_;
  std::multimap<int64_t, uint64_t> by_expiry_;
};

/// The bounds a seal is checked against.
struct sn_seal_limits {
  /// The farthest in the future an expiry may be (a seal valid for a year is refused).
  int64_t max_lifetime_ms = 300000;
};

/// Verifies the seal `text` of `payload` for service node `name` under `secret` at `now_ms`:
/// well formed, MAC right (constant time), not expired, not too far ahead, not seen before
/// (then `seen` records it). @returns "" or why the request is refused.
std::string verify_sn_request(std::string_view secret, std::string_view name, std::string_view text,
                              std::string_view payload, int64_t now_ms, sn_replay_cache& seen,
                              const sn_seal_limits& limits = {});

/// Milliseconds since the epoch (the seals' clock).
int64_t sn_now_ms();

} // namespace cws::api
