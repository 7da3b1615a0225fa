#pragma once

// reventlog's conversation with a BMC, as xCAT's ipmi.pm holds it: Get SEL Time (to read
// timestamps in this host's clock), Get SEL Info, then either Get SEL Entry from the first
// record to the last, or Reserve SEL and Clear SEL (polled until the erase is done).

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ipmi/engine.hpp"

namespace cws::ipmi {

/// What reventlog asks for.
struct sel_request {
  bool clear = false;
  /// The newest `count` entries (0: all of them).
  size_t count = 0;
  /// `-s`: newest first (xCAT's sort).
  bool newest_first = false;
};

/// Bounds of one BMC's SEL work (docs/hardware.md).
struct sel_limits {
  /// Most entries read from one BMC; a longer log ends with a line saying so.
  size_t max_entries = 2048;
  /// Most Clear SEL status polls after the erase was started, before the node fails.
  int clear_polls = 20;
};

/// Parses reventlog's words: `all`, `clear` or a number of entries, each optionally followed
/// (or preceded) by `-s`, separated by spaces. Nothing for anything else (`0`, `clear -s`, two
/// counts).
std::optional<sel_request> parse_eventlog(std::string_view words);

/// The conversation. The answer: one line per entry (oldest first, or newest first with
/// `-s`), `no SEL entries` for an empty log, `SEL cleared` after a clear.
std::shared_ptr<action> eventlog_action(const sel_request& what, const sel_limits& limits);

} // namespace cws::ipmi
