#pragma once

// rinv over IPMI, as xCAT's ipmi.pm does it: Get Device ID, Get System GUID, then FRU
// device 0 (Get FRU Inventory Area Info, Read FRU Data in chunks) parsed as the Platform
// Management FRU Information Storage Definition says: the common header, the chassis, board
// and product areas and their type/length fields. The parser takes untrusted bytes
// (fuzz/fuzz_fru.cpp).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipmi/engine.hpp"

namespace cws::ipmi {

/// One type/length field's text: 8-bit ASCII (whitespace collapsed, as xCAT's getascii),
/// 6-bit packed ASCII and BCD plus decoded, binary as xCAT's hex (`01 02 `).
std::string fru_field_text(uint8_t type_length, const uint8_t* data, size_t size);

/// A FRU field read from an area: its text and whether it was 8-bit ASCII.
struct fru_field {
  std::string text;
  bool ascii = false;
};

/// The areas of a FRU device that rinv prints (absent fields are empty optionals).
struct fru_info {
  // chassis info area
  std::optional<fru_field> chassis_part, chassis_serial;
  std::vector<fru_field> chassis_extra;
  // board info area
  uint32_t board_minutes = 0; ///< manufacturing date: minutes since 1996-01-01 00:00
  std::optional<fru_field> board_maker, board_name, board_serial, board_part;
  std::vector<fru_field> board_extra;
  // product info area
  std::optional<fru_field> product_maker, product_name, product_part, product_version,
    product_serial, product_asset;
  std::vector<fru_field> product_extra;
};

/// Parses a FRU device's bytes. @returns the areas, or the words xCAT gives for data it
/// cannot read (`Unrecognized FRU format`, ...).
struct fru_parse {
  std::optional<fru_info> info;
  std::string error;
};
fru_parse parse_fru(const uint8_t* data, size_t size);

/// rinv's keywords (xCAT's FRU record types). `firm` is `firmware`.
struct inventory_filter {
  bool model = false, serial = false, asset = false, misc = false, deviceid = false, mprom = false,
       guid = false, firmware = false, hw = false;
  /// Only Get Device ID and the GUID are needed (xCAT's skipfru).
  bool needs_fru() const {
    return model || serial || asset || misc || hw;
  }
};

/// Parses rinv's keywords (space, comma or `;` separated; none is `all`).
/// @returns nothing for a keyword it does not know.
std::optional<inventory_filter> parse_inventory(std::string_view words,
                                                std::string* unknown = nullptr);

/// The rinv conversation with one BMC; FRU data beyond `max_fru_bytes` is not read.
std::shared_ptr<action> inventory_action(inventory_filter f, size_t max_fru_bytes);

/// The lines rinv prints from FRU data, in xCAT's order, for the types `f` asks for.
std::vector<std::pair<std::string, std::string>> fru_lines(const fru_info& info,
                                                           const inventory_filter& f);

} // namespace cws::ipmi
