#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cws::test {

/// Builds FRU device data (Platform Management FRU Information Storage Definition 1.0): the
/// common header and chassis, board and product info areas, each padded to 8 bytes with its
/// checksum. Fields are 8-bit ASCII; a field written `6:TEXT` is packed as 6-bit ASCII.
class fru_builder {
 public:
  /// Chassis area: part number, serial number, then custom fields.
  void chassis(std::vector<std::string> fields, uint8_t type = 23);
  /// Board area: manufacturing date (minutes since 1996-01-01), manufacturer, name, serial,
  /// part number, FRU file id, then custom fields.
  void board(uint32_t minutes, std::vector<std::string> fields);
  /// Product area: manufacturer, name, part/model, version, serial, asset tag, FRU file id,
  /// then custom fields.
  void product(std::vector<std::string> fields);

  /// The whole device.
  std::vector<uint8_t> bytes() const;

 private:
  std::vector<uint8_t> chassis_, board_, product_;
};

} // namespace cws::test
