#pragma once

#include <string>
#include <string_view>

namespace cws::http {

/// Writes JSON text the way xCAT's REST API does: compact, or with `pretty` Perl JSON's
/// indent(1) layout (3 spaces, no space around `:`). Strings are escaped; invalid UTF-8 is
/// replaced by U+FFFD so the output is always valid JSON.
class json_writer {
 public:
  explicit json_writer(bool pretty = false) : pretty_(pretty) {
    // nop
  }

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();

  /// An object key; the next call writes its value.
  void key(std::string_view k);

  /// A string value.
  void value(std::string_view v);

  /// A bare number value.
  void number(long long v);

  /// The text so far (call after the outermost value is closed).
  const std::string& str() const noexcept {
    return out_;
  }

  /// Moves the text written so far out; the writer goes on where it was (a large answer is
  /// taken piece by piece).
  std::string take() noexcept {
    std::string text;
    text.swap(out_);
    return text;
  }

  /// Reserves room for `n` bytes of output (avoids regrowing a large answer).
  void reserve(size_t n) {
    out_.reserve(n);
  }

  /// Appends `s` as a JSON string literal to `out`.
  static void quote(std::string& out, std::string_view s);

 private:
  void before_value();
  void newline();

  std::string out_;
  bool pretty_;
  int depth_ = 0;
  bool first_ = true;
  bool after_key_ = false;
};

} // namespace cws::http
