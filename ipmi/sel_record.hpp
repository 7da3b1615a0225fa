#pragma once

// System Event Log records as xCAT's reventlog prints them (ipmi.pm got_sel): plain functions
// on untrusted bytes, fuzzed (fuzz/fuzz_sel.cpp).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace cws::ipmi {

/// Bytes of one SEL record (record id, type, then 13 bytes of content).
constexpr size_t sel_record_size = 16;

/// Seconds to subtract from a BMC's SEL timestamps so they read in this host's clock
/// (xCAT's tfactor): `bmc_now - now` when the BMC's clock is set (at or past 0x20000000), else 0.
int64_t sel_clock_offset(uint32_t bmc_now, int64_t now);

/// A SEL timestamp as xCAT prints it: `MM/DD/YYYY HH:MM:SS` in local time after the clock
/// offset, or `BMC Uptime %6d s` for a timestamp below 0x20000000 (the BMC's time since it
/// started: the spec's "pre-init" range, which no offset corrects).
std::string sel_time_text(uint32_t timestamp, int64_t clock_offset);

/// The sensor type's name and the event's text for a sensor-specific event, or for a
/// generic event type (`event_type` 0x01-0x0c), xCAT's words. Exposed for tests.
std::string sensor_type_name(uint8_t sensor_type);
std::string sensor_event_text(uint8_t sensor_type, uint8_t offset);
std::string generic_event_text(uint8_t event_type, uint8_t offset);

/// One record's line: for a system event (type 02h)
/// `<time> <sensor type>, <event> (Sensor 0xNN)` with ` - Recovered` for a deassertion;
/// timestamped OEM records (30h-DFh) `<time> Unknown OEM SEL Type XX: <hex> (<text>)`;
/// others `SEL Type XX: <hex> (<text>)`. Nothing if `size` is short of a record.
std::optional<std::string> sel_record_text(const uint8_t* record, size_t size,
                                           int64_t clock_offset);

} // namespace cws::ipmi
