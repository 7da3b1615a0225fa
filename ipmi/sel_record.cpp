#include "ipmi/sel_record.hpp"

#include <cstdio>
#include <ctime>

namespace cws::ipmi {

namespace {

/// One row of the IPMI spec's event tables in xCAT's words (`offset` -1: any offset).
struct event_row {
  uint8_t code;
  int offset;
  const char* type;
  const char* event;
};

// Sensor types and their sensor-specific offsets (IPMI 2.0 table 42-3), as xCAT names them.
constexpr event_row sensor_rows[] = {
  {0x00, -1, "reserved", "Reserved"},
  {0x01, -1, "Temperature", "Temperature"},
  {0x02, -1, "Voltage", "Voltage"},
  {0x03, -1, "Current", "Current"},
  {0x04, -1, "Fan", "Fan"},
  {0x05, 0, "Physical Security", "General Chassis Intrusion"},
  {0x05, 1, "Physical Security", "Drive Bay Intrusion"},
  {0x05, 2, "Physical Security", "I/O Card area Intrusion"},
  {0x05, 3, "Physical Security", "Processor area Intrusion"},
  {0x05, 4, "Physical Security", "LAN Leash Lost (system has been unplugged from LAN)"},
  {0x05, 5, "Physical Security", "Unauthorized Dock/Undock"},
  {0x05, 6, "Physical Security", "FAN area intrusion"},
  {0x06, 0, "Platform Security Violation Attempt", "Secure Mode Violation Attempt"},
  {0x06, 1, "Platform Security Violation Attempt", "Pre-boot Password Violation - user password"},
  {0x06, 2, "Platform Security Violation Attempt",
   "Pre-boot Password Violation Attempt - setup password"},
  {0x06, 3, "Platform Security Violation Attempt",
   "Pre-boot Password Violation - network boot password"},
  {0x06, 4, "Platform Security Violation Attempt", "Other pre-boot Password Violation"},
  {0x06, 5, "Platform Security Violation Attempt", "Out-of-band Access Password Violation"},
  {0x07, 0, "Processor", "IERR"},
  {0x07, 1, "Processor", "Thermal Trip"},
  {0x07, 2, "Processor", "FRB1/BIST Failure"},
  {0x07, 3, "Processor", "FRB2/Hang in POST Failure"},
  {0x07, 4, "Processor", "FRB3/Processor Startup/Initialization failure (CPU didn't start)"},
  {0x07, 5, "Processor", "Configuration Error (for DMI)"},
  {0x07, 6, "Processor", "SM BIOS Uncorrectable CPU-complex Error"},
  {0x07, 7, "Processor", "Processor Presence Detected"},
  {0x07, 8, "Processor", "Processor Disabled"},
  {0x07, 9, "Processor", "Terminator Presence Detected"},
  {0x08, 0, "Power Supply", "Presence Detected"},
  {0x08, 1, "Power Supply", "Power Supply Failure Detected"},
  {0x08, 2, "Power Supply", "Predictive Failure Asserted"},
  {0x08, 3, "Power Supply", "Power Supply AC lost"},
  {0x08, 4, "Power Supply", "AC lost or out-of-range"},
  {0x08, 5, "Power Supply", "AC out-of-range, but present"},
  {0x08, 6, "Power Supply", "Configuration error"},
  {0x09, 0, "Power Unit", "Power Off / Power Down"},
  {0x09, 1, "Power Unit", "Power Cycle"},
  {0x09, 2, "Power Unit", "240VA Power Down"},
  {0x09, 3, "Power Unit", "Interlock Power Down"},
  {0x09, 4, "Power Unit", "A/C Lost"},
  {0x09, 5, "Power Unit", "Soft Power Control Failure"},
  {0x09, 6, "Power Unit", "Power Unit Failure Detected"},
  {0x09, 7, "Power Unit", "Predictive Failure"},
  {0x0a, -1, "Cooling Device", "-"},
  {0x0b, -1, "Other Units-based Sensor", "-"},
  {0x0c, 0, "Memory", "Correctable ECC"},
  {0x0c, 1, "Memory", "Uncorrectable ECC"},
  {0x0c, 2, "Memory", "Parity"},
  {0x0c, 3, "Memory", "Memory Scrub Failed (stuck bit)"},
  {0x0c, 4, "Memory", "Memory Device Disabled"},
  {0x0c, 5, "Memory", "Correctable ECC (logging limit reached)"},
  {0x0c, 6, "Memory", "Presence detected"},
  {0x0c, 7, "Memory", "Configuration Error"},
  {0x0c, 8, "Memory", "Spare"},
  {0x0c, 9, "Memory", "Throttled"},
  {0x0c, 10, "Memory", "Critical Overtemperature"},
  {0x0d, 0, "Drive Bay", "Present"},
  {0x0d, 1, "Drive Bay", "Fault"},
  {0x0d, 2, "Drive Bay", "Failure Predicted"},
  {0x0d, 3, "Drive Bay", "Hot Spare"},
  {0x0d, 4, "Drive Bay", "Consistency Checking"},
  {0x0d, 5, "Drive Bay", "Array Critical"},
  {0x0d, 6, "Drive Bay", "Array Failed"},
  {0x0d, 7, "Drive Bay", "Rebuilding"},
  {0x0d, 8, "Drive Bay", "Rebuild aborted"},
  {0x0d, -1, "Drive Slot", "-"},
  {0x0e, -1, "POST Memory Resize", "-"},
  {0x0f, 0, "System Firmware Progress", "POST Error"},
  {0x0f, 1, "System Firmware Progress", "System Firmware Hung"},
  {0x0f, 2, "System Firmware Progress", "System Firmware Progress"},
  {0x10, 0, "Event Logging Disabled", "Correctable Memory Error Logging Disabled"},
  {0x10, 1, "Event Logging Disabled", "Event 'Type' Logging Disabled"},
  {0x10, 2, "Event Logging Disabled", "Log Area Reset/Cleared"},
  {0x10, 3, "Event Logging Disabled", "All Event Logging Disabled"},
  {0x10, 4, "Event Logging Disabled", "SEL Full"},
  {0x10, 5, "Event Logging Status", "SEL Almost Full"},
  {0x10, 6, "Event Logging Status", "Correctable Machine Check Error Logging Disabled"},
  {0x11, 0, "Watchdog 1", "BIOS Watchdog Reset"},
  {0x11, 1, "Watchdog 1", "OS Watchdog Reset"},
  {0x11, 2, "Watchdog 1", "OS Watchdog Shut Down"},
  {0x11, 3, "Watchdog 1", "OS Watchdog Power Down"},
  {0x11, 4, "Watchdog 1", "OS Watchdog Power Cycle"},
  {0x11, 5, "Watchdog 1", "OS Watchdog NMI"},
  {0x11, 6, "Watchdog 1", "OS Watchdog Expired, status only"},
  {0x11, 7, "Watchdog 1", "OS Watchdog Pre-timeout Interrupt, non-NMI"},
  {0x12, 0, "System Event", "System Reconfigured"},
  {0x12, 1, "System Event", "Boot"},
  {0x12, 2, "System Event", "Undetermined system hardware failure"},
  {0x12, 3, "System Event", "Entry added to Auxiliary Log"},
  {0x12, 4, "System Event", "PEF Action"},
  {0x12, 5, "System Event", "BMC Time synchronization event"},
  {0x13, 0, "Critical Interrupt", "Front Panel NMI"},
  {0x13, 1, "Critical Interrupt", "Bus Timeout"},
  {0x13, 2, "Critical Interrupt", "I/O Channel Check NMI"},
  {0x13, 3, "Critical Interrupt", "Software NMI"},
  {0x13, 4, "Critical Interrupt", "PCI PERR"},
  {0x13, 5, "Critical Interrupt", "PCI SERR"},
  {0x13, 6, "Critical Interrupt", "EISA Fail Safe Timeout"},
  {0x13, 7, "Critical Interrupt", "Bus Correctable Error"},
  {0x13, 8, "Critical Interrupt", "Bus Uncorrectable Error"},
  {0x13, 9, "Critical Interrupt", "Fatal NMI (port 61h, bit 7)"},
  {0x13, 10, "Critical Interrupt", "Bus Fatal Error"},
  {0x13, 11, "Critical Interrupt", "Bus Degraded"},
  {0x14, 0, "Button", "Power Button pressed"},
  {0x14, 1, "Button", "Sleep Button pressed"},
  {0x14, 2, "Button", "Reset Button pressed"},
  {0x14, 3, "Button", "FRU latch open"},
  {0x14, 4, "Button", "FRU service request button"},
  {0x15, -1, "Module / Board", "-"},
  {0x16, -1, "Microcontroller / Coprocessor", "-"},
  {0x17, -1, "Add-in Card", "-"},
  {0x18, -1, "Chassis", "-"},
  {0x19, 0, "Chip Set", "Soft Power Control Failure"},
  {0x19, 1, "Chip Set", "Thermal Trip"},
  {0x1a, -1, "Other FRU", "-"},
  {0x1b, 0, "Cable/Interconnect", "Connected"},
  {0x1b, 1, "Cable/Interconnect", "Incorrect configuration"},
  {0x1b, -1, "Cable / Interconnect", "-"},
  {0x1c, -1, "Terminator", "-"},
  {0x1d, 0, "System Boot Initiated", "Initiated by power up"},
  {0x1d, 1, "System Boot Initiated", "Initiated by hard reset"},
  {0x1d, 2, "System Boot Initiated", "Initiated by warm reset"},
  {0x1d, 3, "System Boot Initiated", "User requested PXE boot"},
  {0x1d, 4, "System Boot Initiated", "Automatic boot to diagnostic"},
  {0x1d, 5, "System Boot Initiated", "OS hard reset"},
  {0x1d, 6, "System Boot Initiated", "OS warm reset"},
  {0x1d, 7, "System Boot Initiated", "Restart"},
  {0x1e, 0, "Boot Error", "No bootable media"},
  {0x1e, 1, "Boot Error", "Non-bootable diskette left in drive"},
  {0x1e, 2, "Boot Error", "PXE Server not found"},
  {0x1e, 3, "Boot Error", "Invalid boot sector"},
  {0x1e, 4, "Boot Error", "Timeout waiting for user selection of boot source"},
  {0x1f, 0, "OS Boot", "A: boot completed"},
  {0x1f, 1, "OS Boot", "C: boot completed"},
  {0x1f, 2, "OS Boot", "PXE boot completed"},
  {0x1f, 3, "OS Boot", "Diagnostic boot completed"},
  {0x1f, 4, "OS Boot", "CD-ROM boot completed"},
  {0x1f, 5, "OS Boot", "ROM boot completed"},
  {0x1f, 6, "OS Boot", "Boot completed - boot device not specified"},
  {0x20, 0, "OS Stop", "Critical Stop during OS load / initialization"},
  {0x20, 1, "OS Stop", "Run-time critical Stop (panic/BSOD)"},
  {0x20, 2, "OS Stop", "OS clean shutdown power on"},
  {0x20, 3, "OS Stop", "OS clean shutdown powered down"},
  {0x20, 4, "OS Stop", "Soft shutdown by PEF"},
  {0x20, 5, "OS Stop", "OS Agent not responding to graceful shutdown request"},
  {0x21, 0, "Slot / Connector", "Fault Status asserted"},
  {0x21, 1, "Slot / Connector", "Identify Status asserted"},
  {0x21, 2, "Slot / Connector", "Slot / Connector Device installed/attached"},
  {0x21, 3, "Slot / Connector", "Slot / Connector Ready for Device Installation"},
  {0x21, 4, "Slot / Connector", "Slot/Connector Ready for Device Removal"},
  {0x21, 5, "Slot / Connector", "Slot Power is Off"},
  {0x21, 6, "Slot / Connector", "Slot / Connector Device Removal Request"},
  {0x21, 7, "Slot / Connector", "Interlock asserted"},
  {0x21, 8, "Slot / Connector", "Slot is Disabled"},
  {0x21, 9, "Slot / Connector", "Slot holds spare device"},
  {0x22, 0, "System ACPI Power State", "S0 / G0 working"},
  {0x22, 5, "System ACPI Power State", "S5 / G2 soft-off"},
  {0x22, 7, "System ACPI Power State", "G3 / Mechanical Off"},
  {0x22, 11, "System ACPI Power State", "Legacy ON state"},
  {0x22, 12, "System ACPI Power State", "Legacy OFF state"},
  {0x22, 14, "System ACPI Power State", "Unknown"},
  {0x23, 0, "Watchdog 2", "Timer expired, status only"},
  {0x23, 1, "Watchdog 2", "Hard Reset"},
  {0x23, 2, "Watchdog 2", "Power Down"},
  {0x23, 3, "Watchdog 2", "Power Cycle"},
  {0x23, 8, "Watchdog 2", "Timer interrupt"},
  {0x24, 0, "Platform Alert", "Platform generated page"},
  {0x24, 1, "Platform Alert", "Platform generated LAN alert"},
  {0x24, 2, "Platform Alert",
   "Platform Event Trap generated, formatted per IPMI PET specification"},
  {0x24, 3, "Platform Alert", "Platform generated SNMP trap, OEM format"},
  {0x25, 0, "Entity Presence", "Entity Present"},
  {0x25, 1, "Entity Presence", "Entity Absent"},
  {0x25, 2, "Entity Presence", "Entity Disabled"},
  {0x26, -1, "Monitor ASIC / IC", "-"},
  {0x27, 0, "LAN", "LAN Heartbeat Lost"},
  {0x27, 1, "LAN", "LAN Heartbeat"},
  {0x28, 0, "Management Subsystem Health", "sensor access degraded or unavailable"},
  {0x28, 1, "Management Subsystem Health", "controller access degraded or unavailable"},
  {0x28, 2, "Management Subsystem Health", "management controller off-line"},
  {0x28, 3, "Management Subsystem Health", "management controller unavailable"},
  {0x28, 4, "Management Subsystem Health", "Sensor failure"},
  {0x28, 5, "Management Subsystem Health", "FRU failure"},
  {0x29, 0, "Battery", "battery low (predictive failure)"},
  {0x29, 1, "Battery", "battery failed"},
  {0x29, 2, "Battery", "battery presense detected"},
  {0x2a, 0, "Session Audit", "Session Activated"},
  {0x2a, 1, "Session Audit", "Session Deactivated"},
  {0x2a, 2, "Session Audit", "Invalid Username or Password"},
  {0x2a, 3, "Session Audit", "Account disabled"},
  {0x2b, 0, "Version Change", "Hardware Change Occurred"},
  {0x2b, 1, "Version Change", "Firmware/Software Change occurred"},
  {0x2b, 2, "Version Change", "Hardware Incompatiblitiy"},
  {0x2b, 3, "Version Change", "Firmware/Software Incompatibility"},
  {0x2b, 4, "Version Change", "Unsupported Hardware Version"},
  {0x2b, 5, "Version Change", "Unsupported Firmware/Software Version"},
  {0x2b, 6, "Version Change", "Hardware Change validity"},
  {0x2b, 7, "Version Change", "Software Change validitiy"},
  {0x2c, 0, "FRU State", "FRU Not Installed"},
  {0x2c, 1, "FRU State", "FRU Inactive"},
  {0x2c, 2, "FRU State", "FRU Activation Request"},
  {0x2c, 3, "FRU State", "FRU Activation in Progress"},
  {0x2c, 4, "FRU State", "FRU Active"},
  {0x2c, 5, "FRU State", "FRU Deactivation Request"},
  {0x2c, 6, "FRU State", "FRU Deactivation in Progress"},
  {0x2c, 7, "FRU State", "FRU Communication Lost"},
};

// Generic event/reading types 01h-0Ch (IPMI 2.0 table 42-2).
constexpr event_row generic_rows[] = {
  {0x01, 0, "Threshold", "Lower Non-critical - going low"},
  {0x01, 1, "Threshold", "Lower Non-critical - going high"},
  {0x01, 2, "Threshold", "Lower Critical - going low"},
  {0x01, 3, "Threshold", "Lower Critical - going high"},
  {0x01, 4, "Threshold", "Lower Non-recoverable - going low"},
  {0x01, 5, "Threshold", "Lower Non-recoverable - going high"},
  {0x01, 6, "Threshold", "Upper Non-critical - going low"},
  {0x01, 7, "Threshold", "Upper Non-critical - going high"},
  {0x01, 8, "Threshold", "Upper Critical - going low"},
  {0x01, 9, "Threshold", "Upper Critical - going high"},
  {0x01, 10, "Threshold", "Upper Non-recoverable - going low"},
  {0x01, 11, "Threshold", "Upper Non-recoverable - going high"},
  {0x02, 0, "Discrete", "Transition to Idle"},
  {0x02, 1, "Discrete", "Transition to Active"},
  {0x02, 2, "Discrete", "Transition to Busy"},
  {0x03, 0, "'digital' Discrete", "State Deasserted"},
  {0x03, 1, "'digital' Discrete", "State Asserted"},
  {0x04, 0, "'digital' Discrete", "Predictive Failure Deasserted"},
  {0x04, 1, "'digital' Discrete", "Predictive Failure Asserted"},
  {0x05, 0, "'digital' Discrete", "Limit Not Exceeded"},
  {0x05, 1, "'digital' Discrete", "Limit Exceeded"},
  {0x06, 0, "'digital' Discrete", "Performance Met"},
  {0x06, 1, "'digital' Discrete", "Performance Lags"},
  {0x07, 0, "Discrete", "transition to OK"},
  {0x07, 1, "Discrete", "transition to Non-Critical from OK"},
  {0x07, 2, "Discrete", "transition to Critical from Less Severe"},
  {0x07, 3, "Discrete", "transition to Non-recoverable from Less Severe"},
  {0x07, 4, "Discrete", "transition to Non-Critical from More Severe"},
  {0x07, 5, "Discrete", "transition to Critical from Non-recoverable"},
  {0x07, 6, "Discrete", "transition to Non-recoverable"},
  {0x07, 7, "Discrete", "Monitor"},
  {0x07, 8, "Discrete", "Informational"},
  {0x08, 0, "'digital' Discrete", "Device Removed / Device Absent"},
  {0x08, 1, "'digital' Discrete", "Device Inserted / Device Present"},
  {0x09, 0, "'digital' Discrete", "Device Disabled"},
  {0x09, 1, "'digital' Discrete", "Device Enabled"},
  {0x0a, 0, "Discrete", "transition to Running"},
  {0x0a, 1, "Discrete", "transition to In Test"},
  {0x0a, 2, "Discrete", "transition to Power Off"},
  {0x0a, 3, "Discrete", "transition to On Line"},
  {0x0a, 4, "Discrete", "transition to Off Line"},
  {0x0a, 5, "Discrete", "transition to Off Duty"},
  {0x0a, 6, "Discrete", "transition to Degraded"},
  {0x0a, 7, "Discrete", "transition to Power Save"},
  {0x0a, 8, "Discrete", "Install Error"},
  {0x0b, 0, "Discrete", "Redundancy Regained"},
  {0x0b, 1, "Discrete", "Redundancy Lost"},
  {0x0b, 2, "Discrete", "Redundancy Degraded"},
  {0x0b, 3, "Discrete", "Non-redundant:Sufficient resources"},
  {0x0b, 4, "Discrete", "Non-redundant:Sufficient from insufficient resources"},
  {0x0b, 5, "Discrete", "Non-redundant:Insufficient resources"},
  {0x0b, 6, "Discrete", "Redundancy Degraded from Non-Reduntant"},
  {0x0c, 0, "Discrete", "D0 Power State"},
  {0x0c, 1, "Discrete", "D1 Power State"},
  {0x0c, 2, "Discrete", "D2 Power State"},
  {0x0c, 3, "Discrete", "D3 Power State"},
};

/// The row for (code, offset), else the code's any-offset row, else nothing.
template<size_t N>
const event_row* find_row(const event_row (&rows)[N], uint8_t code, uint8_t offset) {
  const event_row* any = nullptr;
  for (const auto& r : rows) {
    if (r.code == code && r.offset == offset) {
      return &r;
    }
    if (r.code == code && r.offset < 0 && any == nullptr) {
      any = &r;
    }
  }
  return any;
}

std::string hex2(const char* format, unsigned value) {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

/// xCAT's "No Mappings found (XXh)" for a code its tables lack.
std::string no_mapping(uint8_t code) {
  return hex2("No Mappings found (%02Xh)", code);
}

/// Bytes as xCAT's phex prints them: `01 02 (ab)`, letters, digits and `_` kept.
std::string phex(const uint8_t* p, size_t n) {
  std::string hex;
  std::string alpha;
  for (size_t i = 0; i < n; ++i) {
    hex += hex2("%02x ", p[i]);
    bool word = (p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'z')
                || (p[i] >= 'A' && p[i] <= 'Z') || p[i] == '_';
    alpha += word ? static_cast<char>(p[i]) : ' ';
  }
  return hex + "(" + alpha + ")";
}

/// Event data 2 and 3 decoded for the sensor types xCAT decodes (ipmi.pm getaddsensorevent;
/// the common ones).
std::string extra_text(uint8_t sensor_type, uint8_t offset, uint8_t d2, uint8_t d3) {
  if (sensor_type == 0x08 && offset == 6) {
    switch (d3) {
      case 0: return "Vendor mismatch";
      case 1: return "Revision mismatch";
      case 2: return "Processor missing";
      default: return "";
    }
  }
  if (sensor_type == 0x0c) {
    return "Memory module " + std::to_string(d3);
  }
  if (sensor_type == 0x10 && offset == 0) {
    return "Memory module " + std::to_string(d2);
  }
  if (sensor_type == 0x10 && offset == 5) {
    return std::to_string(d3) + "% full";
  }
  if (sensor_type == 0x12 && offset == 4) {
    std::string text;
    const std::pair<uint8_t, const char*> actions[]
      = {{0x20, "NMI"},   {0x10, "OEM action"}, {0x08, "power cycle"},
         {0x04, "reset"}, {0x02, "power off"},  {0x01, "Alert"}};
    for (const auto& [bit, what] : actions) {
      if ((d2 & bit) != 0) {
        text += (text.empty() ? "" : ", ") + std::string{what};
      }
    }
    return text;
  }
  if (sensor_type == 0x2a) {
    auto text = "Channel " + std::to_string(d3 & 0x0f) + ", User " + std::to_string(d2 & 0x3f);
    if (offset == 1) {
      switch (d3 & 0xcf) {
        case 1: text += " at user request"; break;
        case 2: text += " timed out"; break;
        case 3: text += " configuration change"; break;
        default: break;
      }
    }
    return text;
  }
  return "";
}

std::string system_event_text(const uint8_t* r, int64_t clock_offset) {
  uint32_t ts = r[3] | (r[4] << 8) | (r[5] << 16) | (static_cast<uint32_t>(r[6]) << 24);
  uint8_t sensor_type = r[10];
  uint8_t sensor = r[11];
  bool deassertion = (r[12] & 0x80) != 0;
  uint8_t event_type = r[12] & 0x7f;
  uint8_t offset = r[13] & 0x0f;
  const auto* row = find_row(sensor_rows, sensor_type, offset);
  std::string type = row ? row->type : no_mapping(sensor_type);
  std::string desc = row ? row->event : no_mapping(offset);
  if (event_type >= 0x01 && event_type <= 0x0c) {
    const auto* g = find_row(generic_rows, event_type, offset);
    desc = g ? g->event : no_mapping(offset);
  }
  if (type.empty() || type == "-") {
    type = "OEM Sensor Type " + std::to_string(sensor_type);
  }
  if (desc.empty() || desc == "-") {
    desc = "OEM Sensor Event " + std::to_string(offset);
  }
  if (type == desc) {
    desc.clear();
  }
  auto extra = extra_text(sensor_type, offset, r[14], r[15]);
  if (!extra.empty()) {
    desc = desc.empty() ? extra : desc + " " + extra;
  }
  // xCAT's spacing as it is: "<time> <type>, <desc> (<sensor>)"
  auto text = sel_time_text(ts, clock_offset) + " " + type + ", " + desc + " ("
              + hex2("Sensor 0x%02x", sensor) + ")";
  if (deassertion) {
    text += " - Recovered";
  }
  return text;
}

} // namespace

int64_t sel_clock_offset(uint32_t bmc_now, int64_t now) {
  return bmc_now >= 0x20000000 ? static_cast<int64_t>(bmc_now) - now : 0;
}

std::string sel_time_text(uint32_t ts, int64_t clock_offset) {
  if (ts < 0x20000000) {
    return hex2("BMC Uptime %6u s", ts);
  }
  auto t = static_cast<time_t>(static_cast<int64_t>(ts) - clock_offset);
  std::tm tm{};
  if (localtime_r(&t, &tm) == nullptr) {
    return "BMC Uptime " + std::to_string(ts);
  }
  char buf[64];
  std::strftime(buf, sizeof buf, "%m/%d/%Y %H:%M:%S", &tm);
  return buf;
}

std::string sensor_type_name(uint8_t sensor_type) {
  const auto* row = find_row(sensor_rows, sensor_type, 0xff);
  if (row == nullptr) {
    row = find_row(sensor_rows, sensor_type, 0);
  }
  return row ? row->type : no_mapping(sensor_type);
}

std::string sensor_event_text(uint8_t sensor_type, uint8_t offset) {
  const auto* row = find_row(sensor_rows, sensor_type, offset);
  return row ? row->event : no_mapping(offset);
}

std::string generic_event_text(uint8_t event_type, uint8_t offset) {
  const auto* row = find_row(generic_rows, event_type, offset);
  return row ? row->event : no_mapping(offset);
}

std::optional<std::string> sel_record_text(const uint8_t* r, size_t size, int64_t clock_offset) {
  if (r == nullptr || size < sel_record_size) {
    return std::nullopt;
  }
  uint8_t type = r[2];
  if (type == 0x02) {
    return system_event_text(r, clock_offset);
  }
  if (type > 0x2f && type < 0xe0) { // OEM, timestamped
    uint32_t ts = r[3] | (r[4] << 8) | (r[5] << 16) | (static_cast<uint32_t>(r[6]) << 24);
    return sel_time_text(ts, clock_offset) + " " + hex2("Unknown OEM SEL Type %02x:", type) + " "
           + phex(r + 7, 9);
  }
  return hex2("SEL Type %02x:", type) + " " + phex(r + 3, 13);
}

} // namespace cws::ipmi
