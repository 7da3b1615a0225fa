#pragma once

// rcons's keystroke parser (docs/consoles.md, "rcons"): conserver's escape sequence `^Ec`
// followed by a command, taken out of what the user types; everything else goes to the
// console. Pure: bytes in, actions out, no I/O (fuzzed: fuzz/fuzz_rcons_escape.cpp).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cws::cli {

/// What typed bytes mean.
enum class rcons_action : uint8_t {
  send,       ///< `bytes` go to the console
  quit,       ///< `^Ec.`: disconnect
  force,      ///< `^Ecf`: take the console over (read-write)
  spy,        ///< `^Ecs`: watch only (read-only)
  attach,     ///< `^Eca`: read-write if nobody writes
  send_break, ///< `^Ecl0`: a serial break to the host
  break_list, ///< `^Ecl?`: the break sequences there are
  help,       ///< `^Ec?`: the commands
  ignored,    ///< `^Ec` then return: nothing (conserver's "ignore/abort command")
  unknown,    ///< anything else after `^Ec` (or `^Ecl`): `command` holds the key(s), discarded
};

/// One action, in the order typed.
struct rcons_event {
  rcons_action action = rcons_action::send;
  /// send: the bytes; unknown: the keys after `^Ec`.
  std::string bytes;

  friend bool operator==(const rcons_event& a, const rcons_event& b) {
    return a.action == b.action && a.bytes == b.bytes;
  }
};

/// The escape sequence's first character: control-E (conserver's default `^Ec`).
constexpr char rcons_escape_char = '\x05';

/// Splits typed bytes into what goes to the console and the escape commands, across calls
/// (an escape may arrive one key at a time). As conserver: `^E` followed by anything but
/// `c` sends both characters; `^Ec` followed by an unknown key discards all three;
/// `^Ec\ooo` sends the character with octal code ooo (how `^E` itself is sent).
class rcons_escape {
 public:
  /// Appends the actions `keys` make to `out` (consecutive bytes to send joined into one).
  void feed(std::string_view keys, std::vector<rcons_event>& out);

  /// True while an escape sequence is begun and not finished (its keys are held).
  bool pending() const noexcept {
    return at_ != state::plain;
  }

 private:
  enum class state : uint8_t { plain, escape, command, brk, octal };

  state at_ = state::plain;
  std::string held_; ///< the keys of the escape begun
};

} // namespace cws::cli
