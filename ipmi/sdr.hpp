#pragma once

// Sensor Data Records (IPMI v2.0 section 43) as pure code: parsing full and compact sensor
// records, decoding their ID strings, converting raw readings to values with the record's
// M, B and exponents, and the text xCAT's rvitals prints for a reading. Every parser takes
// untrusted bytes (fuzz/fuzz_sdr.cpp). The SDR cache per BMC is here too.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ipmi/rmcp.hpp"

namespace cws::ipmi {

/// SDR record types this code reads.
constexpr uint8_t sdr_full = 0x01;
constexpr uint8_t sdr_compact = 0x02;

/// One sensor, from a full (0x01) or compact (0x02) sensor record.
struct sensor_record {
  uint8_t type = 0; ///< the record type (sdr_full or sdr_compact)
  uint8_t owner = 0;
  uint8_t lun = 0;
  uint8_t number = 0;
  uint8_t sensor_type = 0; ///< 1 temperature, 2 voltage, 3 current, 4 fan, ...
  uint8_t event_type = 0;  ///< event/reading type code (1: threshold, 0x6f: sensor specific)
  uint8_t units1 = 0;      ///< analog data format in bits 7:6
  uint8_t unit = 0;        ///< base unit code
  uint8_t linearization = 0;
  int m = 1;
  int b = 0;
  int r_exp = 0;
  int b_exp = 0;
  std::string id;
};

/// Parses one SDR record (its 5-byte header included). Records of other types, or too short
/// for their type, give nothing.
std::optional<sensor_record> parse_sdr(const uint8_t* data, size_t size);

/// Decodes an ID string by its type/length byte's type (bits 7:6): 8-bit ASCII (stops at a
/// NUL), 6-bit packed ASCII, BCD plus; unicode gives "unicode unsupported". `size` bytes.
std::string decode_id(uint8_t type_bits, const uint8_t* data, size_t size);

/// The number a reading stands for: the raw byte as the analog data format says (unsigned,
/// 1's or 2's complement), then (M * x + B * 10^Bexp) * 10^Rexp. Compact records carry no
/// factors: their value is the raw byte. Linearizations other than linear give nothing.
std::optional<double> sensor_value(const sensor_record& r, uint8_t raw);

/// xCAT's text of a reading (ipmi.pm translate_sensor): the value as Perl prints a number,
/// then the unit, with Fahrenheit next to Celsius, Celsius next to Fahrenheit and BTU/hr next
/// to watts: `45 C (113 F)`, `12.06 Volts`, `3000 RPM`. A non-linear record gives
/// `RAW(<linearization>) <raw>`.
std::string reading_text(const sensor_record& r, uint8_t raw);

/// The name of a unit code (IPMI table 43-15, xCAT's spelling); "" for unspecified/unknown.
std::string unit_name(uint8_t code);

/// Perl's text of a number (`%.15g`): 45, 12.06, 0.3.
std::string perl_number(double v);

/// xCAT's words for a sensor's state (Get Sensor Reading's third byte): the threshold
/// crossed for threshold sensors, the asserted states for sensor-specific ones; "" if none.
std::string state_text(const sensor_record& r, uint8_t state);

/// A BMC's SDR repository as read: the records kept (sensors) and the repository
/// information it was read under (the cache key).
struct sdr_repository {
  uint32_t added = 0;  ///< most recent addition timestamp
  uint32_t erased = 0; ///< most recent erase timestamp
  uint16_t count = 0;  ///< record count
  std::vector<sensor_record> sensors;
};

/// SDR repositories per BMC, so a second rvitals costs only the readings (xCAT caches SDRs
/// too). An entry is used only while the BMC reports the same addition and erase timestamps
/// and record count. Thread-safe.
class sdr_cache {
 public:
  /// At most `max_bmcs` repositories; the least recently used goes first.
  explicit sdr_cache(size_t max_bmcs);

  /// The repository of `bmc` read under this repository information, or null.
  std::shared_ptr<const sdr_repository> find(const std::string& bmc, uint32_t added,
                                             uint32_t erased, uint16_t count);
  /// Keeps `repo` for `bmc`.
  void store(const std::string& bmc, std::shared_ptr<const sdr_repository> repo);

  struct counters {
    uint64_t hits = 0;    ///< repositories taken from the cache
    uint64_t misses = 0;  ///< repositories read from a BMC
    uint64_t records = 0; ///< SDR records read from BMCs
  };
  counters stats() const;
  /// Counts one SDR record read from a BMC.
  void count_record();

 private:
  struct entry {
    std::shared_ptr<const sdr_repository> repo;
    uint64_t used = 0;
  };
  mutable std::mutex mu_;
  size_t max_;
  uint64_t tick_ = 0;
  std::map<std::string, entry> entries_;
  counters stats_;
};

} // namespace cws::ipmi
