#include "ipmi/fru.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "base/text.hpp"
#include "ipmi/sdr.hpp"

namespace cws::ipmi {

namespace {

constexpr uint8_t netfn_app = 0x06;
constexpr uint8_t netfn_storage = 0x0a;
constexpr uint8_t cmd_device_id = 0x01;
constexpr uint8_t cmd_system_guid = 0x37;
constexpr uint8_t cmd_fru_info = 0x10;
constexpr uint8_t cmd_fru_read = 0x11;
/// Bytes asked for per Read FRU Data (xCAT's 16: the size every BMC serves).
constexpr uint8_t fru_chunk = 16;
/// Seconds from 1970 to 1996-01-01 00:00 UTC, where FRU dates count from.
constexpr long long fru_epoch = 820454400;

/// xCAT's getascii: printable ASCII kept, everything else a space, runs of spaces one.
std::string ascii_text(const uint8_t* d, size_t n) {
  std::string t;
  for (size_t i = 0; i < n; ++i) {
    char c = (d[i] > 0x20 && d[i] < 0x7f) ? static_cast<char>(d[i]) : ' ';
    if (c == ' ' && (t.empty() || t.back() == ' ')) {
      continue;
    }
    t.push_back(c);
  }
  while (!t.empty() && t.back() == ' ') {
    t.pop_back();
  }
  return t;
}

/// Reads the fields of an area from `at` until 0xC1 or the area's end; empty fields (length
/// 0 or 1 byte) are kept as absent, as xCAT's extractfield does.
std::vector<std::optional<fru_field>> area_fields(const uint8_t* a, size_t size, size_t at) {
  std::vector<std::optional<fru_field>> out;
  while (at < size && a[at] != 0xc1) {
    uint8_t tl = a[at];
    size_t len = tl & 0x3f;
    if (at + 1 + len > size) {
      break; // a field running past its area ends the area
    }
    if (len == 0) {
      out.emplace_back();
    } else {
      out.push_back(fru_field{fru_field_text(tl, a + at + 1, len), (tl >> 6) == 3});
    }
    at += 1 + len;
  }
  return out;
}

/// The area `index` of the common header points to: its bytes, or nothing if absent or
/// broken (wrong version, running past the data).
bool area(const uint8_t* d, size_t size, uint8_t offset8, const uint8_t** a, size_t* len) {
  if (offset8 == 0) {
    return false;
  }
  size_t at = static_cast<size_t>(offset8) * 8;
  if (at + 2 > size || d[at] != 1) {
    return false;
  }
  size_t n = static_cast<size_t>(d[at + 1]) * 8;
  *a = d + at;
  *len = std::min(n, size - at);
  return true;
}

std::optional<fru_field> field(const std::vector<std::optional<fru_field>>& f, size_t i) {
  return i < f.size() ? f[i] : std::nullopt;
}

void extras(const std::vector<std::optional<fru_field>>& f, size_t from,
            std::vector<fru_field>& out) {
  for (size_t i = from; i < f.size(); ++i) {
    if (f[i]) {
      out.push_back(*f[i]);
    }
  }
}

/// Perl's `scalar localtime` text, in UTC.
std::string perl_time(long long t) {
  time_t tt = static_cast<time_t>(t);
  tm parts{};
  gmtime_r(&tt, &parts);
  char buf[64];
  strftime(buf, sizeof buf, "%a %b %e %H:%M:%S %Y", &parts);
  return buf;
}

/// A line of rinv's answer: xCAT's sort key, its record types, the description and value.
struct entry {
  std::string key;
  std::vector<std::string> types;
  std::string desc;
  std::string value;
};

bool wanted(const inventory_filter& f, const std::vector<std::string>& types) {
  for (const auto& t : types) {
    if ((t == "model" && f.model) || (t == "serial" && f.serial) || (t == "asset" && f.asset)
        || (t == "misc" && f.misc) || (t == "deviceid" && f.deviceid) || (t == "mprom" && f.mprom)
        || (t == "guid" && f.guid) || (t == "firmware" && f.firmware) || (t == "hw" && f.hw)) {
      return true;
    }
  }
  return false;
}

/// FRU device 0's entries in xCAT's order (initfru_zero); keys are their indexes.
std::vector<entry> fru_entries(const fru_info& info) {
  std::vector<entry> out;
  auto add = [&out](const char* type, const char* desc, const std::string& value) {
    out.push_back({std::to_string(out.size()), {type}, desc, value});
  };
  auto opt = [&add](const std::optional<fru_field>& f, const char* type, const char* desc) {
    if (f) {
      add(type, desc, f->text);
    }
  };
  opt(info.product_maker, "misc", "System Manufacturer");
  opt(info.product_name, "model", "System Description");
  opt(info.product_part, "model", "System Model/MTM");
  opt(info.product_version, "misc", "System Revision");
  opt(info.product_serial, "serial", "System Serial Number");
  opt(info.product_asset, "asset", "System Asset Number");
  for (const auto& e : info.product_extra) {
    if (e.ascii) { // xCAT prints only text extra fields
      add("misc", "Product Extra data", e.text);
    }
  }
  opt(info.chassis_serial, "serial", "Chassis Serial Number");
  opt(info.chassis_part, "model", "Chassis Part Number");
  for (const auto& e : info.chassis_extra) {
    if (e.ascii) {
      add("misc", "Chassis Extra data", e.text);
    }
  }
  if (info.board_minutes != 0) {
    add("misc", "Board manufacture date",
        perl_time(fru_epoch + static_cast<long long>(info.board_minutes) * 60));
  }
  opt(info.board_maker, "misc", "Board manufacturer");
  opt(info.board_name, "misc", "Board Description");
  opt(info.board_serial, "misc", "Board Serial Number");
  opt(info.board_part, "misc", "Board Model Number");
  for (const auto& e : info.board_extra) {
    if (e.ascii) {
      add("misc", "Board Extra data", e.text);
    }
  }
  return out;
}

/// xCAT's names for some manufacturers and products (ipmi.pm %MFG_ID, %PROD_ID).
std::string manufacturer_text(uint32_t mfg) {
  if (mfg == 2 || mfg == 20301) {
    return "IBM (" + std::to_string(mfg) + ")";
  }
  if (mfg == 343) {
    return "Intel (343)";
  }
  return std::to_string(mfg);
}

std::string product_text(uint32_t mfg, uint32_t product) {
  struct known {
    uint32_t mfg, product;
    const char* name;
  };
  static const known names[] = {{2, 34869, "e325"},
                                {2, 3, "x346"},
                                {2, 4, "x336"},
                                {343, 258, "Tiger 2"},
                                {343, 256, "Tiger 4"}};
  for (const auto& k : names) {
    if (k.mfg == mfg && k.product == product) {
      return std::string{k.name} + " (" + std::to_string(product) + ")";
    }
  }
  return std::to_string(product);
}

class inventory : public action {
 public:
  inventory(inventory_filter f, size_t max_bytes) : filter_(f), max_bytes_(max_bytes) {
  }

  request first() override {
    return {netfn_app, cmd_device_id, {}};
  }

  step next(const response& r) override {
    if (r.netfn == netfn_app && r.cmd == cmd_device_id) {
      if (r.code != 0 || r.data.size() < 11) {
        return fail(r.code != 0 ? completion_text(r.code) : completion_text(0xca));
      }
      uint32_t mfg = r.data[6] | (r.data[7] << 8) | ((r.data[8] & 0x0f) << 16);
      uint32_t product = r.data[9] | (r.data[10] << 8);
      add("mfg_id", {"deviceid"}, "Manufacturer ID", manufacturer_text(mfg));
      add("prod_id", {"deviceid"}, "Product ID", product_text(mfg, product));
      add("device_id", {"deviceid"}, "Device ID", std::to_string(r.data[0]));
      char fw[32];
      std::snprintf(fw, sizeof fw, "%d.%02X", r.data[2] & 0x7f, r.data[3]);
      add("mprom", {"mprom", "firmware", "bmc", "imm"}, "BMC Firmware", fw);
      return ask(netfn_app, cmd_system_guid);
    }
    if (r.netfn == netfn_app && r.cmd == cmd_system_guid) {
      if (r.code == 0 && r.data.size() >= 16) {
        char g[40];
        const auto& d = r.data;
        std::snprintf(g, sizeof g,
                      "%02X%02X%02X%02X-%02X%02X-%02X%02X-%02X%02X-%02X%02X%02X%02X%02X%02X", d[0],
                      d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8], d[9], d[10], d[11], d[12],
                      d[13], d[14], d[15]);
        add("guid", {"guid"}, "UUID/GUID", g);
      }
      if (!filter_.needs_fru()) {
        return done();
      }
      return ask(netfn_storage, cmd_fru_info, {0});
    }
    if (r.cmd == cmd_fru_info) {
      if (r.code != 0 || r.data.size() < 2) {
        // xCAT: "Not Present" for 0xCB, else "Unable to read (<reason>)"
        not_read(r.code == 0xcb
                   ? "Not Present"
                   : "Unable to read (" + completion_text(r.code ? r.code : 0xca) + ")");
        return done();
      }
      size_ = std::min<size_t>(r.data[0] | (r.data[1] << 8), max_bytes_);
      if (size_ == 0) {
        not_read("Not Present");
        return done();
      }
      return read_more();
    }
    if (r.cmd == cmd_fru_read) {
      if (r.code != 0 || r.data.empty() || r.data[0] == 0 || r.data.size() < 1u + r.data[0]) {
        if (data_.empty()) {
          not_read("Unable to read (" + completion_text(r.code ? r.code : 0xca) + ")");
          return done();
        }
        return parsed(); // parse what was read
      }
      data_.insert(data_.end(), r.data.begin() + 1, r.data.begin() + 1 + r.data[0]);
      if (data_.size() >= size_) {
        data_.resize(size_);
        return parsed();
      }
      return read_more();
    }
    return fail("unexpected answer from the BMC");
  }

 private:
  static step fail(std::string message) {
    step s;
    s.error = base::node_errc::ipmi;
    s.message = std::move(message);
    return s;
  }

  static step ask(uint8_t netfn, uint8_t cmd, bytes data = {}) {
    step s;
    s.next = request{netfn, cmd, std::move(data)};
    return s;
  }

  step read_more() {
    size_t at = data_.size();
    auto n = static_cast<uint8_t>(std::min<size_t>(fru_chunk, size_ - at));
    return ask(netfn_storage, cmd_fru_read,
               {0, static_cast<uint8_t>(at & 0xff), static_cast<uint8_t>(at >> 8), n});
  }

  void add(std::string key, std::vector<std::string> types, std::string desc, std::string value) {
    entries_.push_back({std::move(key), std::move(types), std::move(desc), std::move(value)});
  }

  /// FRU 0 could not be read: xCAT's one line without a description (record type hw).
  void not_read(std::string why) {
    add("", {"hw", "model", "serial", "asset", "misc"}, "", std::move(why));
  }

  step parsed() {
    auto p = parse_fru(data_.data(), data_.size());
    if (!p.info) {
      not_read(p.error);
      return done();
    }
    for (auto& e : fru_entries(*p.info)) {
      entries_.push_back(std::move(e));
    }
    return done();
  }

  step done() {
    // xCAT prints its hash sorted by key: FRU lines (by index, as text), then device id,
    // guid, manufacturer, firmware, product
    std::stable_sort(entries_.begin(), entries_.end(),
                     [](const entry& a, const entry& b) { return a.key < b.key; });
    std::string out;
    for (const auto& e : entries_) {
      if (!wanted(filter_, e.types)) {
        continue;
      }
      if (!out.empty()) {
        out += '\n';
      }
      out += e.desc.empty() ? e.value : e.desc + ": " + e.value;
    }
    step s;
    s.out = std::move(out);
    return s;
  }

  inventory_filter filter_;
  size_t max_bytes_;
  size_t size_ = 0;
  bytes data_;
  std::vector<entry> entries_;
};

} // namespace

std::string fru_field_text(uint8_t tl, const uint8_t* d, size_t n) {
  switch (tl >> 6) {
    case 3: return ascii_text(d, n);
    case 2: return decode_id(0x80, d, n);
    case 1: {
      auto t = decode_id(0x40, d, n);
      while (!t.empty() && t.back() == ' ') {
        t.pop_back();
      }
      return t;
    }
    default: break;
  }
  std::string hex; // xCAT's phex
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x ", d[i]);
    hex += buf;
  }
  return hex;
}

fru_parse parse_fru(const uint8_t* d, size_t size) {
  fru_parse p;
  if (size < 8) {
    p.error = "Unrecognized FRU format";
    return p;
  }
  if (d[0] != 1) {
    // xCAT: all 0 or all 1 bits is an empty FRU ("clear"); anything else unknown
    p.error = (d[0] == 0 || d[0] == 0xff) ? "clear" : "Unrecognized FRU format";
    return p;
  }
  fru_info info;
  const uint8_t* a = nullptr;
  size_t n = 0;
  if (area(d, size, d[2], &a, &n)) {
    auto f = area_fields(a, n, 3);
    info.chassis_part = field(f, 0);
    info.chassis_serial = field(f, 1);
    extras(f, 2, info.chassis_extra);
  }
  if (area(d, size, d[3], &a, &n)) {
    if (n >= 6) {
      info.board_minutes = a[3] | (a[4] << 8) | (a[5] << 16);
    }
    auto f = area_fields(a, n, 6);
    info.board_maker = field(f, 0);
    info.board_name = field(f, 1);
    info.board_serial = field(f, 2);
    info.board_part = field(f, 3);
    extras(f, 5, info.board_extra); // after the FRU file id
  }
  if (area(d, size, d[4], &a, &n)) {
    auto f = area_fields(a, n, 3);
    info.product_maker = field(f, 0);
    info.product_name = field(f, 1);
    info.product_part = field(f, 2);
    info.product_version = field(f, 3);
    info.product_serial = field(f, 4);
    info.product_asset = field(f, 5);
    extras(f, 7, info.product_extra);
  }
  p.info = std::move(info);
  return p;
}

std::optional<inventory_filter> parse_inventory(std::string_view words, std::string* unknown) {
  inventory_filter f;
  bool none = true;
  for (auto w : base::split_words(words, " ,;")) {
    none = false;
    if (w == "all") {
      f.model = f.serial = f.asset = f.misc = f.deviceid = f.mprom = f.guid = f.firmware = f.hw
        = true;
    } else if (w == "model") {
      f.model = true;
    } else if (w == "serial") {
      f.serial = true;
    } else if (w == "asset") {
      f.asset = true;
    } else if (w == "misc") {
      f.misc = true;
    } else if (w == "vpd") {
      f.model = f.serial = f.deviceid = f.mprom = true;
    } else if (w == "mprom" || w == "bmc" || w == "imm") {
      f.mprom = true;
    } else if (w == "deviceid") {
      f.deviceid = true;
    } else if (w == "guid" || w == "uuid") {
      f.guid = true;
    } else if (w == "firm" || w == "firmware") {
      f.firmware = true;
    } else if (w == "hw") {
      f.hw = true;
    } else {
      if (unknown != nullptr) {
        *unknown = std::string{w};
      }
      return std::nullopt;
    }
  }
  if (none) {
    return parse_inventory("all", unknown);
  }
  return f;
}

std::vector<std::pair<std::string, std::string>> fru_lines(const fru_info& info,
                                                           const inventory_filter& f) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : fru_entries(info)) {
    if (wanted(f, e.types)) {
      out.emplace_back(e.desc, e.value);
    }
  }
  return out;
}

std::shared_ptr<action> inventory_action(inventory_filter f, size_t max_fru_bytes) {
  return std::make_shared<inventory>(f, max_fru_bytes);
}

} // namespace cws::ipmi
