#pragma once

// Serial-over-LAN consoles on one event loop (base::event_loop): each console is a UDP socket,
// the RMCP+ set-up (ipmi/session_setup.hpp), then the SOL state machine (ipmi/sol.hpp). No
// thread per console: the loop's one thread runs them all and calls back on it.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ipmi/sol.hpp"

namespace cws::ipmi {

/// Where a console is and how it is opened.
struct console_target {
  std::string address; ///< numeric IPv4 or IPv6 (the caller resolves names)
  uint16_t port = 623;
  std::string user;
  std::string password;
  sol_options options;
};

/// Every console of a process, on one loop thread.
class console_sessions {
 public:
  /// What the consoles say, called on the loop's thread. `event` ends a console when its
  /// kind is already_active, error, lost or closed (its id may then be opened again).
  struct callbacks {
    std::function<void(uint64_t id, std::string bytes)> output;
    std::function<void(uint64_t id, const sol_event& e)> event;
  };

  /// Sends of the set-up's messages before a console is `lost`, and their interval.
  static constexpr unsigned setup_tries = 4;
  static constexpr std::chrono::milliseconds setup_interval{1000};

  explicit console_sessions(callbacks cb);
  /// Deactivates every console's payload (best effort: the answers are not awaited) and
  /// stops the loop.
  ~console_sessions();

  console_sessions(const console_sessions&) = delete;
  console_sessions& operator=(const console_sessions&) = delete;

  /// Opens console `id` (any thread). An id already open is an `error` event.
  void open(uint64_t id, console_target t);
  /// Keystrokes for console `id` (any thread); what its queue cannot take is a `dropped` event.
  void write(uint64_t id, std::string keys);
  /// A break to console `id`'s host (any thread).
  void send_break(uint64_t id);
  /// Closes console `id` (any thread): `closed` follows.
  void close(uint64_t id);

 private:
  struct impl;
  std::unique_ptr<impl> p_;
};

} // namespace cws::ipmi
