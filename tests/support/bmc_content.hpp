#pragma once

// The sensors and FRU the rvitals and rinv tests give their simulated BMCs, and the lines
// clusterws must print for them (the raw readings converted with the records' factors).

#include "bmc_farm.hpp"
#include "fru_builder.hpp"

namespace cws::test {

/// Four threshold sensors compiled by sdrcomp: a temperature (M 1, degrees C), a voltage
/// whose name sdrcomp packs as 6-bit ASCII (M 6, R-exp -2, volts), a fan (M 50, RPM) and a
/// current-type power sensor (M 2, watts); raw readings 45, 201, 60, 100.
inline bmc_hardware sample_hardware(bool with_fan = true) {
  bmc_hardware hw;
  auto record = [](int number, int type, int unit, int entity, const char* m, const char* r_exp,
                   const char* id) {
    return std::string{"sdr type 1\n  sensor_owner_id 0x20\n  sensor_owner_lun 0\n"
                       "  channel_number 0\n  sensor_number "}
           + std::to_string(number) + "\n  entity_id " + std::to_string(entity)
           + "\n  entity_instance 1\n  sensor_type " + std::to_string(type)
           + "\n  event_reading_type_code 1\n  analog_data_format unsigned\n  base_unit "
           + std::to_string(unit) + "\n  linearization 0\n  m " + m + "\n  b 0\n  r_exp " + r_exp
           + "\n  b_exp 0\n  init_scanning true\n  default_sensor_scan_on true\n" + "  id_string \""
           + id + "\"\nendsdr\n";
  };
  hw.sdrs = record(1, 1, 1, 3, "1", "0", "CPU Temp") + record(2, 2, 4, 7, "6", "-2", "12V")
            + record(4, 3, 6, 10, "2", "0", "PSU Power");
  hw.sensors = {{1, 1, 1, 45}, {2, 2, 1, 201}, {4, 3, 1, 100}};
  if (with_fan) {
    hw.sdrs += record(3, 4, 18, 29, "50", "0", "Fan 1");
    hw.sensors.push_back({3, 4, 1, 60});
  }
  fru_builder fru;
  fru.chassis({"CH-PART", "6:CHSER42"});
  fru.board(12345, {"Board Maker", "Board Name", "BRD-SER", "BRD-PART", ""});
  fru.product({"Prod Maker", "Prod Name", "MODEL-1", "v2", "SYS-SER", "ASSET-9", ""});
  hw.fru = fru.bytes();
  return hw;
}

/// The sensor lines rvitals prints for sample_hardware(), in xCAT's order (by name).
constexpr const char* sample_sensor_lines = "12V: 12.06 Volts\n"
                                            "CPU Temp: 45 C (113 F)\n"
                                            "Fan 1: 3000 RPM\n"
                                            "PSU Power: 200 Watts (683 BTUs/hr)";

} // namespace cws::test
