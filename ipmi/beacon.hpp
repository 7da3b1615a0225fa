#pragma once

// rbeacon's conversation: Chassis Identify to light the chassis' identify LED (on: until told
// otherwise, blink: for 255 seconds, off), Get Chassis Status to read it (stat).

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ipmi/engine.hpp"

namespace cws::ipmi {

/// rbeacon's actions (xCAT's names).
enum class beacon_op { on, off, blink, stat };

/// Parses an rbeacon action: on, off, blink, stat.
std::optional<beacon_op> parse_beacon(std::string_view word);

/// The conversation. The answer is the action (`on`, `off`, `blink`); for `stat` the state
/// the BMC reports (`on`, `off`, `blink`), or xCAT's error when the BMC does not report it.
std::shared_ptr<action> beacon_action(beacon_op op);

/// The identify state in Get Chassis Status's answer (`on`, `off`, `blink`), or nothing when
/// the BMC does not report it (byte 4 bit 6 clear, or a short answer).
std::optional<std::string> identify_state(const bytes& chassis_status);

} // namespace cws::ipmi
