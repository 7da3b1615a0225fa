#include "http/json_writer.hpp"

#include <cstdint>

namespace cws::http {

namespace {

/// Length of the valid UTF-8 sequence at `s[i]`, or 0 if it is not valid.
size_t utf8_length(std::string_view s, size_t i) {
  auto c = static_cast<uint8_t>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size()) {
    return 0;
  }
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<uint8_t>(s[i + k]) & 0xc0) != 0x80) {
      return 0;
    }
  }
  uint32_t cp = n == 1 ? c : n == 2 ? (c & 0x1fu) : n == 3 ? (c & 0x0fu) : (c & 0x07u);
  for (size_t k = 1; k < n; ++k) {
    cp = (cp << 6) | (static_cast<uint8_t>(s[i + k]) & 0x3fu);
  }
  static constexpr uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_for_len[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    return 0; // overlong, out of range or a surrogate
  }
  return n;
}

} // namespace

void json_writer::quote(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      auto n = utf8_length(s, i);
      if (n == 0) {
        out += "\xef\xbf\xbd";
        ++i;
      } else {
        out.append(s.substr(i, n));
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(hex[c >> 4]);
          out.push_back(hex[c & 0xf]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out.push_back('"');
}

void json_writer::newline() {
  if (pretty_) {
    out_.push_back('\n');
    out_.append(static_cast<size_t>(depth_) * 3, ' ');
  }
}

void json_writer::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ > 0) {
    if (!first_) {
      out_.push_back(',');
    }
    newline();
  }
  first_ = false;
}

void json_writer::begin_object() {
  before_value();
  out_.push_back('{');
  ++depth_;
  first_ = true;
}

void json_writer::end_object() {
  --depth_;
  if (!first_) {
    newline();
  }
  out_.push_back('}');
  first_ = false;
}

void json_writer::begin_array() {
  before_value();
  out_.push_back('[');
  ++depth_;
  first_ = true;
}

void json_writer::end_array() {
  end_object();
  out_.back() = ']';
}

void json_writer::key(std::string_view k) {
  before_value();
  quote(out_, k);
  out_.push_back(':');
  after_key_ = true;
}

void json_writer::value(std::string_view v) {
  before_value();
  quote(out_, v);
}

void json_writer::number(long long v) {
  before_value();
  out_ += std::to_string(v);
}

} // namespace cws::http
