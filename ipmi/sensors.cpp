#include "ipmi/sensors.hpp"

#include <algorithm>

#include "base/text.hpp"

namespace cws::ipmi {

namespace {

constexpr uint8_t netfn_chassis = 0x00;
constexpr uint8_t netfn_sensor = 0x04;
constexpr uint8_t netfn_storage = 0x0a;
constexpr uint8_t cmd_chassis_status = 0x01;
constexpr uint8_t cmd_sensor_reading = 0x2d;
constexpr uint8_t cmd_sdr_info = 0x20;
constexpr uint8_t cmd_reserve_sdr = 0x22;
constexpr uint8_t cmd_get_sdr = 0x23;

/// Bytes asked for per Get SDR after the header (xCAT's 22); halved when the BMC says it
/// cannot return that many.
constexpr uint8_t first_chunk = 22;
constexpr uint8_t least_chunk = 4;
/// Reservations taken again after the BMC cancelled one, before giving up.
constexpr int max_reservations = 8;

uint32_t le32(const bytes& d, size_t at) {
  return static_cast<uint32_t>(d[at]) | (static_cast<uint32_t>(d[at + 1]) << 8)
         | (static_cast<uint32_t>(d[at + 2]) << 16) | (static_cast<uint32_t>(d[at + 3]) << 24);
}

step fail(std::string message) {
  step s;
  s.error = base::node_errc::ipmi;
  s.message = std::move(message);
  return s;
}

step ask(uint8_t netfn, uint8_t cmd, bytes data = {}) {
  step s;
  s.next = request{netfn, cmd, std::move(data)};
  return s;
}

/// One planned piece of the answer, in xCAT's order.
struct item {
  enum kind { chassis, sensor, power_status, text } what;
  const sensor_record* record = nullptr;
  std::string line;
};

class vitals : public action {
 public:
  vitals(vitals_filter f, std::shared_ptr<sdr_cache> cache, std::string bmc, sdr_limits limits)
      : filter_(f), cache_(std::move(cache)), bmc_(std::move(bmc)), limits_(limits) {
  }

  request first() override {
    // xCAT asks Get Device ID first (its SDR cache key, IBM's LEDs): neither is needed here
    return {netfn_storage, cmd_sdr_info, {}};
  }

  step next(const response& r) override {
    if (r.netfn == netfn_sensor && r.cmd == cmd_sensor_reading) {
      return reading(r);
    }
    if (r.netfn == netfn_chassis && r.cmd == cmd_chassis_status) {
      if (r.code != 0) {
        return fail(completion_text(r.code));
      }
      const auto& it = items_[at_];
      add(it.what == item::chassis
            ? chassis_lines(r.data)
            : std::string{"Power Status: "}
                + ((!r.data.empty() && (r.data[0] & 1) != 0) ? "on" : "off"));
      ++at_;
      return advance();
    }
    if (r.code == 0xc5 && r.netfn == netfn_storage && r.cmd == cmd_get_sdr) {
      // the reservation was cancelled (the repository changed): take a new one, start the
      // record again
      if (++reservations_ > max_reservations) {
        return fail(completion_text(r.code));
      }
      record_.clear();
      return ask(netfn_storage, cmd_reserve_sdr);
    }
    if (r.netfn == netfn_storage && r.cmd == cmd_get_sdr && chunk_ > least_chunk && !record_.empty()
        && (r.code == 0xca || r.code == 0xc7 || r.code == 0xc8)) {
      chunk_ = static_cast<uint8_t>(std::max<int>(least_chunk, chunk_ / 2));
      return body();
    }
    if (r.code != 0) {
      return fail(completion_text(r.code));
    }
    switch (r.netfn == netfn_storage ? r.cmd : 0) {
      case cmd_sdr_info: return repository_info(r.data);
      case cmd_reserve_sdr:
        if (r.data.size() < 2) {
          return fail(completion_text(0xca));
        }
        reservation_ = {r.data[0], r.data[1]};
        return header();
      case cmd_get_sdr: return sdr_part(r.data);
      default: break;
    }
    return fail("unexpected answer from the BMC");
  }

 private:
  step repository_info(const bytes& d) {
    if (d.size() < 14) {
      return fail(completion_text(0xca));
    }
    if (d[0] != 0x51) {
      return fail("SDR version unsupported."); // xCAT's message
    }
    fresh_ = std::make_shared<sdr_repository>();
    fresh_->count = static_cast<uint16_t>(d[1] | (d[2] << 8));
    fresh_->added = le32(d, 5);
    fresh_->erased = le32(d, 9);
    if (cache_) {
      if (auto hit = cache_->find(bmc_, fresh_->added, fresh_->erased, fresh_->count)) {
        repo_ = std::move(hit);
        fresh_.reset();
        return plan();
      }
    }
    if (fresh_->count == 0) {
      return finish_repository();
    }
    if (fresh_->count > limits_.max_records) {
      return too_many();
    }
    if ((d[13] & 0x02) == 0) {
      return fail("SDR reservation unsupported."); // xCAT's message
    }
    return ask(netfn_storage, cmd_reserve_sdr);
  }

  step too_many() {
    return fail("the BMC's SDR repository has more than " + std::to_string(limits_.max_records)
                + " records (ipmi_sdr_max_records)");
  }

  request get_sdr(uint8_t offset, uint8_t count) const {
    return {netfn_storage,
            cmd_get_sdr,
            {reservation_[0], reservation_[1], static_cast<uint8_t>(record_id_ & 0xff),
             static_cast<uint8_t>(record_id_ >> 8), offset, count}};
  }

  step header() {
    record_.clear();
    step s;
    s.next = get_sdr(0, 5);
    return s;
  }

  step body() {
    size_t want = std::min<size_t>(chunk_, record_len_ - record_.size());
    step s;
    s.next = get_sdr(static_cast<uint8_t>(record_.size()), static_cast<uint8_t>(want));
    return s;
  }

  step sdr_part(const bytes& d) {
    if (d.size() < 2) {
      return fail(completion_text(0xca));
    }
    if (record_.empty()) {
      if (d.size() < 2 + 5) {
        return fail(completion_text(0xca));
      }
      next_id_ = static_cast<uint16_t>(d[0] | (d[1] << 8));
      record_.assign(d.begin() + 2, d.begin() + 7);
      record_len_ = 5 + static_cast<size_t>(record_[4]);
      uint8_t type = record_[3];
      if (type != sdr_full && type != sdr_compact) {
        return next_record(); // not a sensor: only its header was read
      }
    } else {
      if (d.size() == 2) {
        return fail(completion_text(0xca));
      }
      record_.insert(record_.end(), d.begin() + 2, d.end());
    }
    if (record_.size() < record_len_) {
      return body();
    }
    if (auto s = parse_sdr(record_.data(), std::min(record_.size(), record_len_))) {
      // a sensor the BMC lists twice (owner, LUN, number): the later record wins, as xCAT
      auto& all = fresh_->sensors;
      all.erase(std::remove_if(all.begin(), all.end(),
                               [&](const sensor_record& o) {
                                 return o.owner == s->owner && o.lun == s->lun
                                        && o.number == s->number;
                               }),
                all.end());
      all.push_back(std::move(*s));
    }
    return next_record();
  }

  step next_record() {
    if (cache_) {
      cache_->count_record();
    }
    if (++records_read_ > limits_.max_records) {
      return too_many();
    }
    if (next_id_ == 0xffff) {
      return finish_repository();
    }
    record_id_ = next_id_;
    return header();
  }

  step finish_repository() {
    repo_ = fresh_;
    if (cache_) {
      cache_->store(bmc_, fresh_);
    }
    fresh_.reset();
    return plan();
  }

  /// The readings to make, in xCAT's order: chassis status, the sensors by name, the LED
  /// answer, the power state.
  step plan() {
    bool sensors = filter_.all || filter_.temp || filter_.voltage || filter_.watt || filter_.fan
                   || filter_.power;
    if (filter_.chassis) {
      items_.push_back({item::chassis, nullptr, {}});
    }
    std::vector<const sensor_record*> chosen;
    for (const auto& s : repo_->sensors) {
      bool take = filter_.all ? s.sensor_type != 0xed
                              : s.type == sdr_full
                                  && ((filter_.temp && s.sensor_type == 1)
                                      || (filter_.voltage && s.sensor_type == 2)
                                      || ((filter_.watt || filter_.power) && s.sensor_type == 3)
                                      || (filter_.fan && s.sensor_type == 4));
      if (take) {
        chosen.push_back(&s);
      }
    }
    std::stable_sort(chosen.begin(), chosen.end(),
                     [](const sensor_record* a, const sensor_record* b) { return a->id < b->id; });
    if (sensors && repo_->sensors.empty()) {
      items_.push_back({item::text, nullptr, "SDR repository is empty"});
    }
    for (const auto* s : chosen) {
      items_.push_back({item::sensor, s, {}});
    }
    if (filter_.leds) {
      // the LED state needs IBM's OEM commands; xCAT answers this for every other BMC
      items_.push_back({item::text, nullptr, "LED status not supported on this system"});
    }
    if (filter_.power && !filter_.chassis) {
      items_.push_back({item::power_status, nullptr, {}});
    }
    if (filter_.energy) {
      items_.push_back({item::text, nullptr,
                        "Energy data requires additional IBM::EnergyManager plugin in "
                        "conjunction with IMM managed IBM equipment"});
    }
    return advance();
  }

  step advance() {
    while (at_ < items_.size() && items_[at_].what == item::text) {
      add(items_[at_++].line);
    }
    if (at_ == items_.size()) {
      step s;
      s.out = std::move(out_);
      return s;
    }
    const auto& it = items_[at_];
    if (it.what == item::sensor) {
      return ask(netfn_sensor, cmd_sensor_reading, {it.record->number});
    }
    return ask(netfn_chassis, cmd_chassis_status);
  }

  step reading(const response& r) {
    const auto& s = *items_[at_].record;
    ++at_;
    std::string data = "N/A";
    std::string extra;
    if (r.code == 0 && r.data.size() >= 2 && (r.data[1] & 0x20) == 0) {
      data = reading_text(s, r.data[0]);
      if (r.data.size() >= 3) {
        extra = state_text(s, r.data[2]);
      }
    }
    std::string line = s.id + ": ";
    if (extra.empty()) {
      while (!data.empty() && data.back() == ' ') {
        data.pop_back();
      }
      line += data;
    } else { // xCAT pads the reading to 20 columns before the state
      data.resize(std::max<size_t>(data.size(), 20), ' ');
      line += data + " (" + extra + ")";
    }
    add(line);
    return advance();
  }

  void add(const std::string& lines) {
    if (!out_.empty()) {
      out_ += '\n';
    }
    out_ += lines;
  }

  vitals_filter filter_;
  std::shared_ptr<sdr_cache> cache_;
  std::string bmc_;
  sdr_limits limits_;
  int reservations_ = 0;
  std::array<uint8_t, 2> reservation_{};
  uint16_t record_id_ = 0;
  uint16_t next_id_ = 0;
  size_t records_read_ = 0;
  bytes record_;
  size_t record_len_ = 0;
  uint8_t chunk_ = first_chunk;
  std::shared_ptr<sdr_repository> fresh_;
  std::shared_ptr<const sdr_repository> repo_;
  std::vector<item> items_;
  size_t at_ = 0;
  std::string out_;
};

} // namespace

std::optional<vitals_filter> parse_vitals(std::string_view words) {
  vitals_filter f;
  bool any = false;
  bool none = true;
  for (auto w : base::split_words(words, " ,;")) {
    none = false;
    auto has = [&w](const char* part) {
      return w.find(part) != std::string_view::npos;
    };
    bool known = false;
    if (w == "all") {
      f.all = f.chassis = f.leds = known = true;
    }
    if (has("temp")) {
      f.temp = known = true;
    }
    if (has("volt")) {
      f.voltage = known = true;
    }
    if (has("watt")) {
      f.watt = known = true;
    }
    if (has("fan")) {
      f.fan = known = true;
    }
    if (has("power")) {
      // xCAT adds its IBM energy meter here and reports it missing on every other BMC; only an
      // explicit `energy` says so (docs/compatibility.md)
      f.power = known = true;
    }
    if (has("energy")) {
      f.energy = known = true;
    }
    if (has("led")) {
      f.leds = known = true;
    }
    if (has("chassis")) {
      f.chassis = known = true;
    }
    any = any || known;
  }
  if (none) {
    f.all = f.chassis = f.leds = true;
    return f;
  }
  if (!any) {
    return std::nullopt;
  }
  return f;
}

std::string chassis_lines(const bytes& d) {
  if (d.size() < 3) {
    return "Power Status: " + std::string{!d.empty() && (d[0] & 1) != 0 ? "on" : "off"};
  }
  auto yes = [](bool b) {
    return b ? "true" : "false";
  };
  auto act = [](bool b) {
    return b ? "active" : "inactive";
  };
  static const char* policies[] = {"Always off", "Last State", "Always on", "Unknown"};
  std::string t;
  t += std::string{"Power Status: "} + ((d[0] & 1) != 0 ? "on" : "off");
  t += std::string{"\nPower Overload: "} + yes((d[0] & 0x02) != 0);
  t += std::string{"\nPower Interlock: "} + act((d[0] & 0x04) != 0);
  t += std::string{"\nPower Fault: "} + yes((d[0] & 0x08) != 0);
  t += std::string{"\nPower Control Fault: "} + yes((d[0] & 0x10) != 0);
  t += std::string{"\nPower Restore Policy: "} + policies[(d[0] >> 5) & 3];
  std::string events;
  static const char* causes[]
    = {"AC failed", "Power overload", "Interlock activated", "Power Fault", "By Request"};
  for (int bit = 0; bit < 5; ++bit) {
    if ((d[1] & (1u << bit)) != 0) {
      events += (events.empty() ? "" : ",") + std::string{causes[bit]};
    }
  }
  t += "\nLast Power Event: " + events;
  t += std::string{"\nChassis intrusion: "} + act((d[2] & 0x01) != 0);
  t += std::string{"\nFront Panel Lockout: "} + act((d[2] & 0x02) != 0);
  t += std::string{"\nDrive Fault: "} + yes((d[2] & 0x04) != 0);
  t += std::string{"\nCooling Fault: "} + yes((d[2] & 0x08) != 0);
  if ((d[2] & 0x40) != 0) {
    static const char* light[] = {"off", "on", "on", "unknown"};
    t += std::string{"\nIdentify Light: "} + light[(d[2] >> 4) & 3];
  }
  return t;
}

std::shared_ptr<action> vitals_action(vitals_filter f, std::shared_ptr<sdr_cache> cache,
                                      std::string bmc, sdr_limits limits) {
  return std::make_shared<vitals>(f, std::move(cache), std::move(bmc), limits);
}

} // namespace cws::ipmi
