#include "ipmi/sel.hpp"

#include <cstdio>
#include <ctime>
#include <deque>

#include "ipmi/sel_record.hpp"

namespace cws::ipmi {

namespace {

constexpr uint8_t netfn_storage = 0x0a;
constexpr uint8_t cmd_sel_info = 0x40;
constexpr uint8_t cmd_reserve = 0x42;
constexpr uint8_t cmd_get_entry = 0x43;
constexpr uint8_t cmd_clear = 0x47;
constexpr uint8_t cmd_sel_time = 0x48;
constexpr uint8_t initiate_erase = 0xaa;
constexpr uint8_t erase_status = 0x00;
constexpr uint16_t last_record = 0xffff;

step failed(std::string message) {
  step s;
  s.error = base::node_errc::ipmi;
  s.message = std::move(message);
  return s;
}

step ask(uint8_t cmd, bytes data = {}) {
  step s;
  s.next = request{netfn_storage, cmd, std::move(data)};
  return s;
}

class eventlog : public action {
 public:
  eventlog(const sel_request& what, const sel_limits& limits) : what_(what), limits_(limits) {
  }

  request first() override {
    // a new session after a stale pooled one starts the conversation again
    lines_.clear();
    read_ = 0;
    polls_ = 0;
    clock_offset_ = 0;
    if (what_.clear) {
      return {netfn_storage, cmd_sel_info, {}};
    }
    return {netfn_storage, cmd_sel_time, {}};
  }

  step next(const response& r) override {
    if (r.code != 0) {
      return failed(completion_text(r.code));
    }
    switch (r.cmd) {
      case cmd_sel_time:
        if (r.data.size() < 4) {
          return failed(completion_text(0xca));
        }
        clock_offset_ = sel_clock_offset(r.data[0] | (r.data[1] << 8) | (r.data[2] << 16)
                                           | (uint32_t{r.data[3]} << 24),
                                         static_cast<int64_t>(std::time(nullptr)));
        return ask(cmd_sel_info);
      case cmd_sel_info: return on_info(r.data);
      case cmd_get_entry: return on_entry(r.data);
      case cmd_reserve:
        if (r.data.size() < 2) {
          return failed(completion_text(0xca));
        }
        reservation_[0] = r.data[0];
        reservation_[1] = r.data[1];
        return clear(initiate_erase);
      case cmd_clear:
        // erasure progress in the low nibble: 1 done, 0 in progress
        if (!r.data.empty() && (r.data[0] & 0x0f) == 1) {
          step s;
          s.out = "SEL cleared";
          return s;
        }
        if (polls_++ >= limits_.clear_polls) {
          return failed("SEL erase still in progress after " + std::to_string(limits_.clear_polls)
                        + " polls (ipmi_sel_clear_polls)");
        }
        return clear(erase_status);
      default: break;
    }
    return failed(completion_text(0xff));
  }

 private:
  step on_info(const bytes& d) {
    if (d.size() < 14) {
      return failed(completion_text(0xca));
    }
    if (d[0] != 0x51) {
      char buf[80];
      std::snprintf(buf, sizeof buf, "SEL version 51h support only, version reported: %x", d[0]);
      return failed(buf);
    }
    if ((d[1] | (d[2] << 8)) == 0) {
      step s;
      s.out = "no SEL entries";
      return s;
    }
    if (what_.clear) {
      if ((d[13] & 0x02) == 0) {
        return failed("SEL reservation not supported");
      }
      return ask(cmd_reserve);
    }
    return entry(0);
  }

  step on_entry(const bytes& d) {
    if (d.size() < 2 + sel_record_size) {
      return failed(completion_text(0xca));
    }
    ++read_;
    if (auto text = sel_record_text(d.data() + 2, d.size() - 2, clock_offset_)) {
      lines_.push_back(std::move(*text));
      // only the newest `count` are kept: memory stays bounded by what is answered
      if (what_.count > 0 && lines_.size() > what_.count) {
        lines_.pop_front();
      }
    }
    uint16_t next_id = d[0] | (d[1] << 8);
    if (next_id == last_record) {
      return done(false);
    }
    if (read_ >= limits_.max_entries) {
      return done(true);
    }
    return entry(next_id);
  }

  step done(bool cut) {
    step s;
    auto emit = [&s](const std::string& line) {
      if (!s.out.empty()) {
        s.out += '\n';
      }
      s.out += line;
    };
    if (what_.newest_first) {
      for (auto it = lines_.rbegin(); it != lines_.rend(); ++it) {
        emit(*it);
      }
    } else {
      for (const auto& line : lines_) {
        emit(line);
      }
    }
    if (cut) {
      emit("More entries on the BMC: read the first " + std::to_string(limits_.max_entries)
           + " (ipmi_sel_max_entries)");
    }
    return s;
  }

  static step entry(uint16_t id) {
    // no reservation (0): a walk is not atomic, so an event logged meanwhile does not end it
    return ask(cmd_get_entry,
               {0, 0, static_cast<uint8_t>(id & 0xff), static_cast<uint8_t>(id >> 8), 0, 0xff});
  }

  step clear(uint8_t what) {
    return ask(cmd_clear, {reservation_[0], reservation_[1], 'C', 'L', 'R', what});
  }

  sel_request what_;
  sel_limits limits_;
  std::deque<std::string> lines_;
  size_t read_ = 0;
  int polls_ = 0;
  int64_t clock_offset_ = 0;
  uint8_t reservation_[2] = {0, 0};
};

} // namespace

std::optional<sel_request> parse_eventlog(std::string_view words) {
  sel_request out;
  bool have = false;
  bool sort = false;
  while (!words.empty()) {
    auto space = words.find(' ');
    auto w = words.substr(0, space);
    words = space == std::string_view::npos ? std::string_view{} : words.substr(space + 1);
    if (w.empty()) {
      continue;
    }
    if (w == "-s") {
      if (sort) {
        return std::nullopt;
      }
      sort = true;
      continue;
    }
    if (have) {
      return std::nullopt; // xCAT: "reventlog all 5 invalid"
    }
    have = true;
    if (w == "all") {
      continue;
    }
    if (w == "clear") {
      out.clear = true;
      continue;
    }
    if (w.size() > 9 || w.find_first_not_of("0123456789") != std::string_view::npos) {
      return std::nullopt;
    }
    out.count = std::stoul(std::string{w});
    if (out.count == 0) {
      return std::nullopt;
    }
  }
  if (out.clear && sort) {
    return std::nullopt;
  }
  out.newest_first = sort;
  return out;
}

std::shared_ptr<action> eventlog_action(const sel_request& what, const sel_limits& limits) {
  return std::make_shared<eventlog>(what, limits);
}

} // namespace cws::ipmi
