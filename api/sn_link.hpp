#pragma once

// The messages of the link between the head and a service node (docs/service-nodes.md):
// registration (hello, challenge, join, welcome) and heartbeats, both ways. Plain types with
// CAF 0.17's `inspect()` (written without CAF: api/ stays CAF-free); actors/type_ids.cpp
// registers them. The delegated requests themselves are api/wire.hpp's.

#include <cstdint>
#include <string>

namespace cws::api::wire {

/// A service node's first message after the TLS link is up: who it says it is.
struct sn_hello {
  uint32_t version = 0;
  std::string name;
};

/// The head's answer to a hello: a challenge to prove the name with, or why the service
/// node is refused (another protocol version, a name the head does not know).
struct sn_challenge {
  /// The head's protocol version.
  uint32_t version = 0;
  /// 32 hex digits, valid for this link's next join only ("" when refused).
  std::string nonce;
  /// "" or why the service node is refused (it stops: the refusal is permanent).
  std::string refused;
};

/// The proof: HMAC-SHA256 under the service node's secret over its name, version and the
/// nonce (api/sn_seal.hpp, sn_registration_proof).
struct sn_join {
  uint32_t version = 0;
  std::string name;
  std::string nonce;
  std::string proof;
};

/// The head's answer to a join: registered, or why not.
struct sn_welcome {
  std::string refused;
  /// The head's host name (for the service node's log).
  std::string head;
  /// The head's heartbeat interval and dead time (the service node logs a mismatch).
  int64_t heartbeat_ms = 0;
  int64_t dead_after_ms = 0;
};

/// A heartbeat, either way: its number (rising within a registration), the sender's load
/// (nodes in flight), the service node's name and the proof (api::sn_heartbeat_proof: under
/// its secret, bound to the registration's challenge). A heartbeat without a right proof or
/// with a number not above the last one is dropped, whoever sent it.
struct sn_heartbeat {
  uint64_t seq = 0;
  uint32_t load = 0;
  std::string name;
  std::string proof;
};

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, sn_hello& x) {
  return f(x.version, x.name);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, sn_challenge& x) {
  return f(x.version, x.nonce, x.refused);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, sn_join& x) {
  return f(x.version, x.name, x.nonce, x.proof);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, sn_welcome& x) {
  return f(x.refused, x.head, x.heartbeat_ms, x.dead_after_ms);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, sn_heartbeat& x) {
  return f(x.seq, x.load, x.name, x.proof);
}

} // namespace cws::api::wire
