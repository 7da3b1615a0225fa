#include "ipmi/beacon.hpp"

namespace cws::ipmi {

namespace {

constexpr uint8_t netfn_chassis = 0x00;
constexpr uint8_t cmd_status = 0x01;
constexpr uint8_t cmd_identify = 0x04;

class beacon : public action {
 public:
  explicit beacon(beacon_op op) : op_(op) {
  }

  request first() override {
    switch (op_) {
      // interval 0 with "force on": lit until told otherwise (IPMI 2.0, as xCAT's ipmi.pm)
      case beacon_op::on: return {netfn_chassis, cmd_identify, {0, 1}};
      case beacon_op::off: return {netfn_chassis, cmd_identify, {0, 0}};
      // the longest interval the command takes; the BMC turns it off by itself
      case beacon_op::blink: return {netfn_chassis, cmd_identify, {0xff, 0}};
      case beacon_op::stat: break;
    }
    return {netfn_chassis, cmd_status, {}};
  }

  step next(const response& r) override {
    step s;
    if (r.code != 0) {
      s.error = base::node_errc::ipmi;
      s.message = completion_text(r.code);
      return s;
    }
    if (op_ != beacon_op::stat) {
      s.out = op_ == beacon_op::on ? "on" : op_ == beacon_op::off ? "off" : "blink";
      return s;
    }
    if (auto state = identify_state(r.data)) {
      s.out = *state;
      return s;
    }
    // xCAT's answer for an ipmi node: the state cannot be read back
    s.error = base::node_errc::unsupported;
    s.message = "please specify on or off for ipmi nodes (stat impossible)";
    return s;
  }

 private:
  beacon_op op_;
};

} // namespace

std::optional<beacon_op> parse_beacon(std::string_view w) {
  if (w == "on") {
    return beacon_op::on;
  }
  if (w == "off") {
    return beacon_op::off;
  }
  if (w == "blink") {
    return beacon_op::blink;
  }
  if (w == "stat") {
    return beacon_op::stat;
  }
  return std::nullopt;
}

std::shared_ptr<action> beacon_action(beacon_op op) {
  return std::make_shared<beacon>(op);
}

std::optional<std::string> identify_state(const bytes& d) {
  // byte 4 (misc. chassis state): bit 6 "identify state reported", bits 5-4 the state
  if (d.size() < 4 || (d[3] & 0x40) == 0) {
    return std::nullopt;
  }
  switch ((d[3] >> 4) & 0x03) {
    case 0: return "off";
    case 1: return "blink"; // on for a time
    case 2: return "on";    // on until turned off
    default: break;
  }
  return std::nullopt;
}

} // namespace cws::ipmi
