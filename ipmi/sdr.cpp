#include "ipmi/sdr.hpp"

#include <cmath>
#include <cstdio>

namespace cws::ipmi {

namespace {

/// A `bits`-wide two's complement field as a signed number.
int signed_field(unsigned v, int bits) {
  unsigned sign = 1u << (bits - 1);
  v &= (1u << bits) - 1;
  return (v & sign) != 0 ? static_cast<int>(v) - static_cast<int>(1u << bits) : static_cast<int>(v);
}

/// IPMI table 43-15 as xCAT spells it (ipmi.pm %units).
constexpr const char* units[] = {"",
                                 "C",
                                 "F",
                                 "K",
                                 "Volts",
                                 "Amps",
                                 "Watts",
                                 "Joules",
                                 "Coulombs",
                                 "VA",
                                 "Nits",
                                 "lumen",
                                 "lux",
                                 "Candela",
                                 "kPa",
                                 "PSI",
                                 "Newton",
                                 "CFM",
                                 "RPM",
                                 "Hz",
                                 "microsecond",
                                 "millisecond",
                                 "second",
                                 "minute",
                                 "hour",
                                 "day",
                                 "week",
                                 "mil",
                                 "inches",
                                 "feet",
                                 "cu in",
                                 "cu feet",
                                 "mm",
                                 "cm",
                                 "m",
                                 "cu cm",
                                 "cu m",
                                 "liters",
                                 "fluid ounce",
                                 "radians",
                                 "steradians",
                                 "revolutions",
                                 "cycles",
                                 "gravities",
                                 "ounce",
                                 "pound",
                                 "ft-lb",
                                 "oz-in",
                                 "gauss",
                                 "gilberts",
                                 "henry",
                                 "millihenry",
                                 "farad",
                                 "microfarad",
                                 "ohms",
                                 "siemens",
                                 "mole",
                                 "becquerel",
                                 "PPM",
                                 "reserved",
                                 "Decibels",
                                 "DbA",
                                 "DbC",
                                 "gray",
                                 "sievert",
                                 "color temp deg K",
                                 "bit",
                                 "kilobit",
                                 "megabit",
                                 "gigabit",
                                 "byte",
                                 "kilobyte",
                                 "megabyte",
                                 "gigabyte",
                                 "word",
                                 "dword",
                                 "qword",
                                 "line",
                                 "hit",
                                 "miss",
                                 "retry",
                                 "reset",
                                 "overflow",
                                 "underrun",
                                 "collision",
                                 "packets",
                                 "messages",
                                 "characters",
                                 "error",
                                 "correctable error",
                                 "uncorrectable error"};

/// Sensor-specific states (IPMI table 42-3) by sensor type, one word per offset bit, as
/// xCAT's sensor_was_read names them.
struct state_names {
  uint8_t sensor_type;
  const char* names[8];
};

constexpr state_names specific_states[] = {
  {0x07,
   {"IERR", "Thermal trip", "FRB1/BIST failure", "FRB2/Hang in POST due to processor",
    "FRB3/Processor Initialization failure", "Configuration error",
    "Uncorrectable CPU-complex error", "Present"}},
  {0x08,
   {"Present", "Failed", "Failure predicted", "AC Lost", "AC input lost or out of range",
    "AC input out of range", "Configuration error", nullptr}},
  {0x09,
   {"Power off", "Power off", "240VA Power Down", "Interlock Power Down", "AC lost",
    "Soft power control failure", "Power unit failure", "Power unit failure predicted"}},
  {0x0c,
   {"Correctable error(s)", "Uncorrectable error(s)", "Parity", "Memory scrub failure",
    "DIMM disabled", "Correctable error limit reached", "Present", "Configuration error"}},
  {0x0d,
   {"Present", "Fault", "Failure Predicted", "Hot Spare", "Consistency Check", "Critical Array",
    "Failed Array", "Rebuilding"}},
  {0x0f, {"POST error", "Firmware hang", "Firmware progress", nullptr}},
  {0x12,
   {"System Reconfigured", "OEM System Boot Event", "Undetermined system hardware failure",
    "Aux log manipulated", "PEF Action", nullptr}},
  {0x13,
   {"Front panel NMI/Diagnostic", "Bus timeout", "I/O channel check NMI", "Software NMI",
    "PCI PERR", "PCI SERR", "EISA failsafe timeout", "Bus correctable error"}},
  {0x21,
   {"Fault", "Identify", "Installed/attached", "Ready for install", "Ready for removal",
    "Powered off", "Removal requested", "Interlocked"}},
  {0x23, {"Expired", "Hard Reset", "Power Down", "Power Cycle", nullptr}},
  {0x25, {"Present", "Absent", "Disabled", nullptr}},
};

} // namespace

std::string decode_id(uint8_t type_bits, const uint8_t* data, size_t size) {
  std::string out;
  switch ((type_bits >> 6) & 3) {
    case 3: // 8-bit ASCII + Latin-1
      for (size_t i = 0; i < size && data[i] != 0; ++i) {
        out.push_back(static_cast<char>(data[i]));
      }
      break;
    case 2: { // 6-bit packed ASCII: 4 characters in 3 bytes, least significant bits first
      uint32_t acc = 0;
      int have = 0;
      for (size_t i = 0; i < size; ++i) {
        acc |= static_cast<uint32_t>(data[i]) << have;
        have += 8;
        while (have >= 6) {
          out.push_back(static_cast<char>((acc & 0x3f) + 0x20));
          acc >>= 6;
          have -= 6;
        }
      }
      while (!out.empty() && out.back() == ' ') {
        out.pop_back();
      }
      break;
    }
    case 1: { // BCD plus, high digit first
      static const char digits[] = "0123456789 -.:,_";
      for (size_t i = 0; i < size; ++i) {
        out.push_back(digits[data[i] >> 4]);
        out.push_back(digits[data[i] & 0x0f]);
      }
      break;
    }
    default: return size > 0 ? "unicode unsupported" : "";
  }
  return out;
}

std::optional<sensor_record> parse_sdr(const uint8_t* d, size_t size) {
  if (size < 5) {
    return std::nullopt;
  }
  sensor_record r;
  r.type = d[3];
  size_t id_at = 0;
  if (r.type == sdr_full) {
    id_at = 47;
  } else if (r.type == sdr_compact) {
    id_at = 31;
  } else {
    return std::nullopt;
  }
  if (size < id_at + 1) {
    return std::nullopt;
  }
  r.owner = d[5];
  r.lun = d[6] & 3;
  r.number = d[7];
  r.sensor_type = d[12];
  r.event_type = d[13];
  r.units1 = d[20];
  r.unit = d[21];
  if (r.type == sdr_full) {
    r.linearization = d[23] & 0x7f;
    r.m = signed_field(static_cast<unsigned>(d[24]) | ((d[25] & 0xc0u) << 2), 10);
    r.b = signed_field(static_cast<unsigned>(d[26]) | ((d[27] & 0xc0u) << 2), 10);
    r.r_exp = signed_field(d[29] >> 4, 4);
    r.b_exp = signed_field(d[29] & 0x0f, 4);
  }
  size_t len = d[id_at] & 0x1f;
  size_t avail = size - id_at - 1;
  r.id = decode_id(d[id_at], d + id_at + 1, len < avail ? len : avail);
  if (r.id.empty()) {
    r.id = "no description"; // xCAT's word for a record without a name
  }
  return r;
}

std::optional<double> sensor_value(const sensor_record& r, uint8_t raw) {
  int x = raw;
  switch (r.units1 >> 6) {
    case 1: x = (raw & 0x80) != 0 ? -static_cast<int>(static_cast<uint8_t>(~raw)) : raw; break;
    case 2: x = static_cast<int8_t>(raw); break;
    default: break;
  }
  if (r.type != sdr_full) {
    return static_cast<double>(x);
  }
  if (r.linearization != 0) {
    return std::nullopt;
  }
  return (r.m * static_cast<double>(x) + r.b * std::pow(10.0, r.b_exp)) * std::pow(10.0, r.r_exp);
}

std::string perl_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  std::string s = buf;
  return s == "-0" ? "0" : s;
}

std::string unit_name(uint8_t code) {
  return code < sizeof units / sizeof units[0] ? units[code] : "";
}

std::string reading_text(const sensor_record& r, uint8_t raw) {
  auto value = sensor_value(r, raw);
  auto unit = unit_name(r.unit);
  if (!value) {
    return "RAW(" + std::to_string(r.linearization) + ") " + std::to_string(raw) + " " + unit;
  }
  double v = *value;
  // Perl's int() truncates toward zero
  auto rounded = [](double x) {
    return std::to_string(static_cast<long long>(std::trunc(x)));
  };
  if (unit == "Watts") {
    unit = "Watts (" + rounded(v * 3.413 + .5) + " BTUs/hr)";
  } else if (unit == "C") {
    unit = "C (" + rounded(v * 9 / 5 + 32 + .5) + " F)";
  } else if (unit == "F") {
    unit = "F (" + rounded((v - 32) * 5 / 9 + .5) + " C)";
  }
  return perl_number(v) + " " + unit;
}

std::string state_text(const sensor_record& r, uint8_t state) {
  if (r.event_type == 0x01) {
    // the highest crossing wins on each side; a low one replaces a high one (xCAT's order)
    std::string t;
    if ((state & 0x20) != 0) {
      t = "At or above upper non-recoverable threshold";
    } else if ((state & 0x10) != 0) {
      t = "At or above upper critical threshold";
    } else if ((state & 0x08) != 0) {
      t = "At or above upper non-critical threshold";
    }
    if ((state & 0x04) != 0) {
      t = "At or below lower non-critical threshold";
    } else if ((state & 0x02) != 0) {
      t = "At or below lower critical threshold";
    } else if ((state & 0x01) != 0) {
      t = "At or below lower non-recoverable threshold";
    }
    return t;
  }
  if (r.event_type != 0x6f) {
    return "";
  }
  if (r.sensor_type == 0x10) { // event logging disabled
    std::string t;
    auto add = [&t](const char* w) {
      t += (t.empty() ? "" : ",") + std::string{w};
    };
    if ((state & 0x10) != 0) {
      add("SEL full");
    } else if ((state & 0x20) != 0) {
      add("SEL almost full");
    }
    if ((state & 0x01) != 0) {
      add("Correctable Memory Error Logging Disabled");
    }
    if ((state & 0x08) != 0) {
      add("All logging disabled");
    } else if ((state & 0x02) != 0) {
      add("Some logging disabled");
    }
    return t;
  }
  for (const auto& s : specific_states) {
    if (s.sensor_type != r.sensor_type) {
      continue;
    }
    std::string t;
    for (int bit = 0; bit < 8; ++bit) {
      if ((state & (1u << bit)) != 0 && s.names[bit] != nullptr) {
        t += (t.empty() ? "" : ",") + std::string{s.names[bit]};
      }
    }
    return t;
  }
  return "xCAT needs to add support for " + std::to_string(r.sensor_type);
}

sdr_cache::sdr_cache(size_t max_bmcs) : max_(max_bmcs) {
}

std::shared_ptr<const sdr_repository> sdr_cache::find(const std::string& bmc, uint32_t added,
                                                      uint32_t erased, uint16_t count) {
  std::lock_guard<std::mutex> guard{mu_};
  auto it = entries_.find(bmc);
  if (it == entries_.end() || it->second.repo->added != added || it->second.repo->erased != erased
      || it->second.repo->count != count) {
    ++stats_.misses;
    return nullptr;
  }
  ++stats_.hits;
  it->second.used = ++tick_;
  return it->second.repo;
}

void sdr_cache::store(const std::string& bmc, std::shared_ptr<const sdr_repository> repo) {
  std::lock_guard<std::mutex> guard{mu_};
  if (max_ == 0) {
    return;
  }
  if (entries_.size() >= max_ && entries_.find(bmc) == entries_.end()) {
    auto oldest = entries_.begin();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->second.used < oldest->second.used) {
        oldest = it;
      }
    }
    entries_.erase(oldest);
  }
  entries_[bmc] = {std::move(repo), ++tick_};
}

sdr_cache::counters sdr_cache::stats() const {
  std::lock_guard<std::mutex> guard{mu_};
  return stats_;
}

void sdr_cache::count_record() {
  std::lock_guard<std::mutex> guard{mu_};
  ++stats_.records;
}

} // namespace cws::ipmi
