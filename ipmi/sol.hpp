#pragma once

// Serial-over-LAN (IPMI v2.0 section 15) on an established RMCP+ session, without I/O: a
// console is a long-lived session, not a batch. The state machine takes the BMC's datagrams,
// time and keystrokes; it says which datagrams to send, hands over the console's bytes and
// reports events. The caller owns the socket and the clock (an epoll loop, a test).
//
// What it does, in order: (with `force`) Deactivate Payload first; Activate Payload (SOL,
// instance 1, encrypted and authenticated); a packet flushing the BMC's outbound side (what an
// earlier session left unacknowledged there must not hold back this one's first characters:
// ipmi_sim otherwise waits for its 1 s retry); Get SOL Configuration (retry count and interval;
// defaults when the BMC does not say); then SOL packets both ways: the BMC's characters are
// acknowledged with their accepted count, a packet sent again (the same sequence number) is
// acknowledged again and not delivered twice; keystrokes are queued (bounded), sent in
// packets of at most what the BMC accepts, sent again each retry interval until acknowledged,
// the part a partial acknowledgement did not take sent next; break; a keepalive request
// (Get Device ID) every `keepalive` (ipmi_sim drops a session after 30 s without an IPMI
// request); close deactivates the payload and closes the session.
//
// Every buffer is bounded by a named limit (sol_options); nothing grows with the BMC's input.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "ipmi/rmcp.hpp"
#include "ipmi/session_setup.hpp"

namespace cws::ipmi {

using sol_clock = std::chrono::steady_clock;

/// The completion code of Activate Payload when the payload is active on another session.
constexpr uint8_t sol_already_active = 0x80;

/// Default limits and timers of a SOL console (the daemon's settings start from these).
constexpr size_t sol_default_max_keystrokes = 4096; ///< keystrokes queued, not yet acknowledged
constexpr size_t sol_default_max_output = 65536;    ///< console bytes not yet taken by the caller
constexpr size_t sol_max_packet_chars = 255;    ///< characters in one SOL packet (a 1-byte count)
constexpr unsigned sol_default_retry_count = 3; ///< when the BMC does not say
constexpr std::chrono::milliseconds sol_default_retry_interval{500}; ///< when the BMC does not say
constexpr std::chrono::milliseconds sol_default_request_timeout{1000}; ///< an IPMI request's wait
constexpr unsigned sol_default_request_retries = 3; ///< IPMI requests sent again before "lost"
constexpr std::chrono::milliseconds sol_default_keepalive{15000}; ///< below ipmi_sim's 30 s

/// How a console is opened and its limits.
struct sol_options {
  uint8_t instance = 1;
  uint8_t channel = 1; ///< for Get SOL Configuration (never 0x0E: ipmi_sim crashes on it)
  bool force = false;  ///< deactivate the payload first (take it over from another session)
  size_t max_keystrokes = sol_default_max_keystrokes;
  size_t max_output = sol_default_max_output;
  std::chrono::milliseconds request_timeout = sol_default_request_timeout;
  unsigned request_retries = sol_default_request_retries;
  std::chrono::milliseconds keepalive = sol_default_keepalive;
};

/// The 4-byte SOL payload header and its characters (section 15.9).
struct sol_packet {
  uint8_t seq = 0;      ///< packet sequence number 1-15; 0: an acknowledgement only
  uint8_t ack_seq = 0;  ///< the packet acknowledged (1-15); 0: none
  uint8_t accepted = 0; ///< characters of that packet accepted
  uint8_t status = 0;   ///< operation (console to BMC) or status (BMC to console) bits
  bytes data;
};

/// Operation bits (console to BMC) and status bits (BMC to console) of byte 4.
constexpr uint8_t sol_nack = 0x40;              ///< both ways: the packet was not accepted
constexpr uint8_t sol_op_break = 0x10;          ///< console: generate a break
constexpr uint8_t sol_op_cts_pause = 0x08;      ///< console: deassert CTS (pause the host)
constexpr uint8_t sol_op_dcd_dsr_off = 0x04;    ///< console: deassert DCD/DSR
constexpr uint8_t sol_op_flush_outbound = 0x01; ///< console: drop the BMC's pending output
constexpr uint8_t sol_st_unavailable = 0x20;    ///< BMC: character transfer unavailable
constexpr uint8_t sol_st_deactivating = 0x10;   ///< BMC: SOL is being deactivated
constexpr uint8_t sol_st_overrun = 0x08;        ///< BMC: characters were dropped
constexpr uint8_t sol_st_break = 0x04;          ///< BMC: a break was detected on the host side

/// Parses a decrypted SOL payload (untrusted; fuzzed by fuzz/fuzz_sol.cpp).
/// @returns nothing if it is shorter than the header or its sequence numbers exceed 15.
std::optional<sol_packet> parse_sol_packet(const uint8_t* data, size_t size);

/// The bytes of a SOL payload.
bytes encode_sol_packet(const sol_packet& p);

/// What happened on a console (`sol::take_events`).
struct sol_event {
  enum class kind : uint8_t {
    active,         ///< the payload is active: characters flow
    already_active, ///< Activate Payload said 0x80: another session holds it (retry with force)
    error,          ///< activation failed (message: the completion code in words)
    lost,           ///< the BMC stopped answering, or deactivated the payload
    break_detected, ///< the BMC saw a break on the host's side
    dropped,        ///< keystrokes not acknowledged after every retry were dropped (count)
    closed,         ///< close() finished: the payload deactivated and the session closed
  };
  kind what = kind::active;
  std::string message;
  size_t count = 0;
};

/// One SOL console on one established session.
class sol {
 public:
  /// Where the console is.
  enum class phase : uint8_t { deactivating, activating, configuring, active, closing, done };

  /// Starts on `s` at `now`: the first datagram (Deactivate or Activate Payload) is queued.
  sol(session s, sol_options o, sol_clock::time_point now);

  /// One datagram from the BMC (anything not for this console is ignored).
  void feed(const uint8_t* data, size_t size, sol_clock::time_point now);

  /// Time passed: retries, retransmissions, keepalives. Call at `deadline()` at the latest.
  void tick(sol_clock::time_point now);

  /// When `tick` must be called next.
  sol_clock::time_point deadline() const;

  /// Queues keystrokes. @returns how many were taken (fewer when the queue is full).
  size_t write(const uint8_t* data, size_t size, sol_clock::time_point now);

  /// Sends a break to the host's serial port (with the next packet).
  void send_break(sol_clock::time_point now);

  /// Deactivates the payload and closes the session (`closed` follows, or at once when the
  /// console never became active).
  void close(sol_clock::time_point now);

  /// The datagrams to send now, in order (the queue is emptied).
  std::vector<bytes> take_datagrams();

  /// The console's bytes received since the last call (at most `max_output` are held; while
  /// the caller does not take them, the BMC's packets are refused and it sends them again).
  std::string take_output();

  /// The events since the last call.
  std::vector<sol_event> take_events();

  phase at() const {
    return at_;
  }
  /// Characters per SOL packet the BMC accepts (from Activate Payload).
  size_t packet_chars() const {
    return packet_chars_;
  }
  unsigned retry_count() const {
    return retry_count_;
  }
  std::chrono::milliseconds retry_interval() const {
    return retry_interval_;
  }
  /// Keystrokes queued and not yet acknowledged.
  size_t queued() const {
    return keys_.size();
  }

 private:
  void ask(request r, sol_clock::time_point now);
  void answered(const response& r, sol_clock::time_point now);
  void on_packet(const sol_packet& p, sol_clock::time_point now);
  void send_sol(const sol_packet& p);
  void pump(sol_clock::time_point now);
  void finish(sol_event e);
  void event(sol_event::kind k, std::string message = {}, size_t count = 0);

  session s_;
  sol_options o_;
  phase at_ = phase::activating;

  // IPMI requests (activation, configuration, keepalive, deactivation)
  uint8_t asked_cmd_ = 0;
  unsigned tries_ = 0;
  sol_clock::time_point request_due_{};
  sol_clock::time_point keepalive_due_{};

  // console to BMC: the queue, and the packet in flight (its characters are the queue's head)
  std::deque<uint8_t> keys_;
  bool break_pending_ = false;
  uint8_t out_seq_ = 0; ///< the last packet sequence number used (1-15)
  bool in_flight_ = false;
  sol_packet flight_;
  unsigned flight_tries_ = 0;
  sol_clock::time_point flight_due_{};
  sol_clock::time_point paused_until_{}; ///< after a NACK: the BMC is sent nothing until then

  // BMC to console
  uint8_t last_in_seq_ = 0;
  uint8_t last_in_accepted_ = 0;
  std::string output_;

  size_t packet_chars_ = 0;
  unsigned retry_count_ = sol_default_retry_count;
  std::chrono::milliseconds retry_interval_ = sol_default_retry_interval;

  std::vector<bytes> datagrams_;
  std::vector<sol_event> events_;
};

} // namespace cws::ipmi
