#include "cli/rcons_escape.hpp"

namespace cws::cli {

namespace {

void send(std::vector<rcons_event>& out, std::string_view bytes) {
  if (bytes.empty()) {
    return;
  }
  if (!out.empty() && out.back().action == rcons_action::send) {
    out.back().bytes.append(bytes);
  } else {
    out.push_back({rcons_action::send, std::string{bytes}});
  }
}

void act(std::vector<rcons_event>& out, rcons_action a, std::string keys = {}) {
  out.push_back({a, std::move(keys)});
}

} // namespace

void rcons_escape::feed(std::string_view keys, std::vector<rcons_event>& out) {
  size_t plain_from = 0; // plain keys are sent in runs, not one by one
  for (size_t i = 0; i < keys.size(); ++i) {
    char k = keys[i];
    switch (at_) {
      case state::plain:
        if (k == rcons_escape_char) {
          send(out, keys.substr(plain_from, i - plain_from));
          at_ = state::escape;
          held_.assign(1, k);
          plain_from = i + 1;
        }
        continue;
      case state::escape:
        if (k == 'c') {
          at_ = state::command;
          held_.push_back(k);
        } else if (k == rcons_escape_char) {
          send(out, held_); // the first ^E was a key; this one may begin the escape
        } else {
          held_.push_back(k);
          send(out, held_);
          at_ = state::plain;
        }
        break;
      case state::command:
        at_ = state::plain;
        switch (k) {
          case '.': act(out, rcons_action::quit); break;
          case 'f': act(out, rcons_action::force); break;
          case 's': act(out, rcons_action::spy); break;
          case 'a': act(out, rcons_action::attach); break;
          case '?': act(out, rcons_action::help); break;
          case '\r':
          case '\n': act(out, rcons_action::ignored); break;
          case 'l':
            at_ = state::brk;
            held_.assign(1, k);
            break;
          case '\\':
            at_ = state::octal;
            held_.clear();
            break;
          default: act(out, rcons_action::unknown, std::string(1, k)); break;
        }
        break;
      case state::brk:
        at_ = state::plain;
        if (k == '0') {
          act(out, rcons_action::send_break);
        } else if (k == '?') {
          act(out, rcons_action::break_list);
        } else {
          act(out, rcons_action::unknown, "l" + std::string(1, k));
        }
        break;
      case state::octal:
        if (k < '0' || k > '7' || (held_.empty() && k > '3')) {
          // not three octal digits (at most \377): the sequence is discarded
          act(out, rcons_action::unknown, "\\" + held_ + std::string(1, k));
          at_ = state::plain;
          break;
        }
        held_.push_back(k);
        if (held_.size() == 3) {
          int code = (held_[0] - '0') * 64 + (held_[1] - '0') * 8 + (held_[2] - '0');
          send(out, std::string(1, static_cast<char>(code)));
          at_ = state::plain;
        }
        break;
    }
    plain_from = i + 1;
  }
  if (at_ == state::plain) {
    send(out, keys.substr(plain_from));
  }
}

} // namespace cws::cli
