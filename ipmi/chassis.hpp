#pragma once

// The chassis conversations of rpower and rsetboot, as xCAT's ipmi.pm holds them: power
// state first, then the change only when it is needed; boot device set, then read back.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ipmi/engine.hpp"

namespace cws::ipmi {

/// rpower's actions (xCAT's names; `state` and `status` are `stat`).
enum class power_op { stat, on, off, reset, boot, softoff };

/// Parses an rpower action: on, off, reset, boot, softoff, stat, state, status.
std::optional<power_op> parse_power(std::string_view word);

/// rsetboot's actions.
enum class boot_op { net, hd, cd, def, stat };

/// Parses an rsetboot action: net, hd, cd, def/default, stat.
std::optional<boot_op> parse_boot(std::string_view word);

/// Get Chassis Status, then (unless it is already so) Chassis Control. The answer is xCAT's:
/// `on`, `off`, `reset`, `softoff`; `boot` answers `reset` (it was on) or `on` (it was off).
std::shared_ptr<action> power_action(power_op op);

/// Set System Boot Options (boot flags, next boot only), then Get System Boot Options; `stat`
/// only reads. The answer: `Network`, `Hard Drive`, `CD/DVD`, `BIOS Setup`, `Floppy`,
/// `BIOS default` or `boot override inactive`.
/// `uefi` (rsetboot -u): the BIOS boot type bit says EFI.
std::shared_ptr<action> boot_action(boot_op op, bool uefi = false);

/// The text of boot flags (parameter 5's first two data bytes). A BMC that reports a device
/// without the valid bit (ipmi_sim does) is read by its device (docs/compatibility.md).
std::string boot_text(uint8_t flags, uint8_t device);

} // namespace cws::ipmi
