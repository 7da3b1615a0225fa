#pragma once

// A console watcher for a client outside the actor system (the console WebSocket,
// http/ws_console.hpp): an actor that attaches to the console server and hands what it
// receives to plain callbacks, and a handle through which the client types, sends a break
// and acknowledges what it wrote out.

#include <caf/actor_system.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "actors/console_actor.hpp"

namespace cws::actors {

/// What a console attachment tells its client. Each is called on an actor thread, in the
/// order the console server sent them (post them on in that order); `attached` comes once,
/// before any bytes or notices are handed on.
struct console_handlers {
  /// The attach's answer (error != none: not attached, nothing else follows), and again
  /// after each reattach.
  std::function<void(console_attach_reply)> attached;
  std::function<void(std::string)> bytes;
  std::function<void(console_notice)> notice;
  /// The console server let go (`why`: "too slow", "console no longer held", "stopped").
  std::function<void(std::string)> detached;
};

/// One client's attachment to one console: detached when destroyed.
class console_attachment {
 public:
  console_attachment(console_actor console, console_watcher bridge, std::string node)
      : console_(std::move(console)), bridge_(std::move(bridge)), node_(std::move(node)) {
    // nop
  }
  ~console_attachment();
  console_attachment(const console_attachment&) = delete;
  console_attachment& operator=(const console_attachment&) = delete;

  /// Keystrokes (the console server refuses them from anyone but the writer).
  void input(std::string keys) const;
  /// A break to the node's host (the writer only).
  void send_break() const;
  /// The client wrote out `bytes` more of what it received (flow control).
  void ack(uint64_t bytes) const;
  /// Attaches again in mode `m` (rcons's `^Ecf`, `^Ecs`, `^Eca`), without replay: the console
  /// server ends the earlier attachment and makes the new one in one step, so no byte is
  /// lost or doubled; `attached` gets the new answer (an error there ends the attachment).
  void reattach(console_mode m) const;

 private:
  console_actor console_;
  console_watcher bridge_;
  std::string node_;
};

/// Attaches to `console` as `req` asks; what comes goes to `h`.
std::unique_ptr<console_attachment> attach_console(caf::actor_system& sys, console_actor console,
                                                   console_attach req, console_handlers h);

} // namespace cws::actors
