#pragma once

// rvitals over IPMI, as xCAT's ipmi.pm does it: the SDR repository (from the per-BMC cache
// while its timestamps match, else read record by record in partial reads), then Get Chassis
// Status and Get Sensor Reading per chosen sensor. The answer is one line
// per reading, `CPU Temp: 45 C (113 F)`, in xCAT's order.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ipmi/engine.hpp"
#include "ipmi/sdr.hpp"

namespace cws::ipmi {

/// What rvitals reads (xCAT's keywords, matched as substrings as xCAT does: `voltage` is
/// volt, `fanspeed` fan, `wattage` watt, `cputemp` temp).
struct vitals_filter {
  bool all = false;
  bool temp = false;    ///< sensor type 1
  bool voltage = false; ///< sensor type 2
  bool watt = false;    ///< sensor type 3 (current, where BMCs keep power)
  bool fan = false;     ///< sensor type 4
  bool power = false;   ///< watt sensors and `Power Status`
  bool energy = false;
  bool leds = false;
  bool chassis = false; ///< Get Chassis Status's lines
};

/// Parses rvitals' keywords (space, comma or `;` separated; none is `all`).
/// @returns nothing if no keyword is known (xCAT: "Unrecognized rvitals arguments ...").
std::optional<vitals_filter> parse_vitals(std::string_view words);

/// Limits of one BMC's SDR repository read.
struct sdr_limits {
  /// Records read at most; a larger repository fails the node.
  size_t max_records = 1024;
};

/// The rvitals conversation with one BMC. `bmc` names it in the cache ("address:port").
std::shared_ptr<action> vitals_action(vitals_filter f, std::shared_ptr<sdr_cache> cache,
                                      std::string bmc, sdr_limits limits);

/// The lines of Get Chassis Status's answer as xCAT's rvitals prints them (`Power Status:
/// on`, ...).
std::string chassis_lines(const bytes& data);

} // namespace cws::ipmi
