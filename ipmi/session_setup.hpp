#pragma once

// An RMCP+ session with one BMC, without I/O: the set-up (Open Session, RAKP 1-4, Set
// Session Privilege Level) as a state machine that takes the BMC's datagrams and says what to
// send next, and the established session that wraps requests and opens their answers. The
// caller owns the socket, the clock and the retries: the batch engine (ipmi/engine.hpp) drives
// it from its epoll loop, a console (Serial-over-LAN) can drive it from its own.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ipmi/rmcp.hpp"

namespace cws::ipmi {

/// An established RMCP+ session: both ids, the keys, and the sequence numbers. One request
/// is outstanding at a time.
class session {
 public:
  session() = default;

  /// A session agreed by `h` with keys `keys` (what session_setup ends with).
  session(handshake h, session_keys keys);

  /// Makes `r` the outstanding request, with the next request sequence number (0-63).
  void ask(request r);

  /// The outstanding request as a datagram. Each call takes the next session sequence
  /// number and a fresh IV, so a send again is a new datagram to the BMC.
  bytes packet();

  /// A request is outstanding.
  bool waiting() const {
    return pending_.has_value();
  }

  /// Opens a datagram from the BMC. @returns the outstanding request's answer (and ends the
  /// wait for it), or nothing for anything else: a late answer to an earlier send, another
  /// session's datagram, a wrong integrity code, noise.
  std::optional<response> answer(const uint8_t* data, size_t size);

  /// The Close Session request (no answer is awaited; the outstanding request is dropped).
  bytes close_packet();

  /// Seals `body` as an in-session payload of `type` (Serial-over-LAN): the next session
  /// sequence number, encrypted with K2 and signed with K1.
  bytes seal(payload type, const bytes& body);

  /// Opens an in-session datagram of payload `type` from the BMC (integrity checked,
  /// decrypted). @returns nothing for anything else (another payload, another session, noise).
  std::optional<bytes> open(payload type, const uint8_t* data, size_t size) const;

  /// What the set-up agreed (ids, user, role).
  const handshake& agreed() const {
    return h_;
  }

 private:
  bytes wrap(const request& r, uint8_t seq);

  handshake h_;
  session_keys keys_;
  uint32_t out_seq_ = 1;
  uint8_t rq_seq_ = 0;
  std::optional<request> pending_;
  uint8_t pending_seq_ = 0;
};

/// The set-up of one RMCP+ session at cipher suite 3 (RAKP-HMAC-SHA1, HMAC-SHA1-96,
/// AES-CBC-128): Open Session Request, RAKP 1 and 3, then Set Session Privilege Level.
class session_setup {
 public:
  /// Where the set-up is.
  enum class phase : uint8_t { opening, rakp1, rakp3, privilege, established, failed };

  /// What a datagram from the BMC did.
  enum class progress : uint8_t {
    ignored,     ///< it did not answer the current step (noise, a late answer): nothing to do
    next,        ///< the step was answered: send `packet()`, the next step's message
    established, ///< the session is up: `take()` it
    failed,      ///< the BMC refused (`message()` says why; the node's error is `auth`)
  };

  /// A set-up for `user` at `role` with `password`; the console's session id and random
  /// number are drawn from OpenSSL's generator.
  session_setup(std::string user, std::string password, uint8_t role = privilege_admin);

  /// The same with the console's session id and random number given (tests).
  session_setup(std::string user, std::string password, uint8_t role, uint32_t console_sid,
                const rand16& console_rand);

  /// The current step's message: what to send first, and again when its answer is late.
  /// Set-up messages are sent again as they were; the privilege request is wrapped anew.
  bytes packet();

  /// One datagram from the BMC.
  progress feed(const uint8_t* data, size_t size);

  /// Where the set-up is.
  phase at() const {
    return at_;
  }

  /// Why it failed (the BMC's status or completion code in words).
  const std::string& message() const {
    return message_;
  }

  /// The established session (once `at() == phase::established`).
  session take();

 private:
  progress fail(std::string message);
  progress send(phase next, bytes packet);

  handshake h_;
  phase at_ = phase::opening;
  uint8_t tag_ = 0;
  bytes packet_;
  session_keys keys_;
  session session_;
  std::string message_;
};

} // namespace cws::ipmi
