#include "ipmi/chassis.hpp"

namespace cws::ipmi {

namespace {

constexpr uint8_t netfn_chassis = 0x00;
constexpr uint8_t cmd_status = 0x01;
constexpr uint8_t cmd_control = 0x02;
constexpr uint8_t cmd_set_boot = 0x08;
constexpr uint8_t cmd_get_boot = 0x09;
constexpr uint8_t boot_flags_param = 5;

step refused(uint8_t code) {
  step s;
  s.error = base::node_errc::ipmi;
  s.message = completion_text(code);
  return s;
}

step answer(std::string out) {
  step s;
  s.out = std::move(out);
  return s;
}

class power : public action {
 public:
  explicit power(power_op op) : op_(op) {
  }

  request first() override {
    return {netfn_chassis, cmd_status, {}};
  }

  step next(const response& r) override {
    if (r.code != 0) {
      return refused(r.code);
    }
    if (r.cmd == cmd_control) {
      return answer(sent_);
    }
    if (r.data.empty()) {
      return refused(0xca);
    }
    bool on = (r.data[0] & 1) != 0;
    switch (op_) {
      case power_op::stat: return answer(on ? "on" : "off");
      case power_op::on:
        if (on) {
          return answer("on");
        }
        return control(1, "on");
      case power_op::off:
      case power_op::softoff:
      case power_op::reset:
        if (!on) {
          return answer("off");
        }
        return op_ == power_op::off       ? control(0, "off")
               : op_ == power_op::softoff ? control(5, "softoff")
                                          : control(3, "reset");
      case power_op::boot: return on ? control(3, "reset") : control(1, "on");
    }
    return answer("");
  }

 private:
  step control(uint8_t what, std::string out) {
    sent_ = std::move(out);
    step s;
    s.next = request{netfn_chassis, cmd_control, {what}};
    return s;
  }

  power_op op_;
  std::string sent_;
};

class boot : public action {
 public:
  boot(boot_op op, bool uefi) : op_(op), uefi_(uefi) {
  }

  request first() override {
    if (op_ == boot_op::stat) {
      return get();
    }
    // valid, next boot only, legacy BIOS (-u: EFI, bit 5); then the device selector (xCAT's
    // values)
    uint8_t flags = uefi_ ? 0xa0 : 0x80;
    uint8_t device = 0;
    switch (op_) {
      case boot_op::net: device = 0x04; break;
      case boot_op::hd: device = 0x08; break;
      case boot_op::cd: device = 0x14; break;
      case boot_op::def: flags = 0; break;
      case boot_op::stat: break;
    }
    return {netfn_chassis, cmd_set_boot, {boot_flags_param, flags, device, 0, 0, 0}};
  }

  step next(const response& r) override {
    if (r.code != 0) {
      return refused(r.code);
    }
    if (r.cmd == cmd_set_boot) {
      step s;
      s.next = get();
      return s;
    }
    // parameter version, parameter (valid bit 7), then the five boot flag bytes
    if (r.data.size() < 4) {
      return refused(0xca);
    }
    return answer(boot_text(r.data[2], r.data[3]));
  }

 private:
  static request get() {
    return {netfn_chassis, cmd_get_boot, {boot_flags_param, 0, 0}};
  }

  boot_op op_;
  bool uefi_;
};

} // namespace

std::optional<power_op> parse_power(std::string_view w) {
  if (w == "stat" || w == "state" || w == "status") {
    return power_op::stat;
  }
  if (w == "on") {
    return power_op::on;
  }
  if (w == "off") {
    return power_op::off;
  }
  if (w == "reset") {
    return power_op::reset;
  }
  if (w == "boot") {
    return power_op::boot;
  }
  if (w == "softoff") {
    return power_op::softoff;
  }
  return std::nullopt;
}

std::optional<boot_op> parse_boot(std::string_view w) {
  if (w == "net") {
    return boot_op::net;
  }
  if (w == "hd") {
    return boot_op::hd;
  }
  if (w == "cd") {
    return boot_op::cd;
  }
  if (w.substr(0, 3) == "def") {
    return boot_op::def;
  }
  if (w.substr(0, 4) == "stat") {
    return boot_op::stat;
  }
  return std::nullopt;
}

std::string boot_text(uint8_t flags, uint8_t device) {
  int selector = (device & 0x3c) >> 2;
  if ((flags & 0x80) == 0 && selector == 0) {
    return "boot override inactive";
  }
  switch (selector) {
    case 0: return "BIOS default";
    case 1: return "Network";
    case 2: return "Hard Drive";
    case 5: return "CD/DVD";
    case 6: return "BIOS Setup";
    case 15: return "Floppy";
    default: break;
  }
  return "Unknown boot device " + std::to_string(selector);
}

std::shared_ptr<action> power_action(power_op op) {
  return std::make_shared<power>(op);
}

std::shared_ptr<action> boot_action(boot_op op, bool uefi) {
  return std::make_shared<boot>(op, uefi);
}

} // namespace cws::ipmi
