#include "store/selector.hpp"

#include <algorithm>

#include <re2/re2.h>

#include "store/error.hpp"
#include "store/schema.hpp"

namespace cws::store {

std::shared_ptr<const re2::RE2> compile_regex(std::string_view pattern, size_t max_len) {
  if (pattern.size() > max_len) {
    throw error{store_errc::bad_noderange,
                "Regular expression is longer than " + std::to_string(max_len) + " characters."};
  }
  re2::RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_max_mem(int64_t{8} << 20);
  auto re
    = std::make_shared<const re2::RE2>(re2::StringPiece{pattern.data(), pattern.size()}, opts);
  if (!re->ok()) {
    throw error{store_errc::bad_noderange,
                "Invalid regular expression '" + std::string{pattern} + "': " + re->error()};
  }
  return re;
}

std::vector<std::string_view> split_wherevals(std::string_view w) {
  std::vector<std::string_view> out;
  for (size_t pos = 0; pos <= w.size();) {
    auto end = std::min(w.find("::", pos), w.size());
    out.push_back(w.substr(pos, end - pos));
    pos = end + 2;
  }
  return out;
}

std::optional<selector> selector::parse(std::string_view text, size_t max_regex, bool columns) {
  struct candidate {
    std::string_view token;
    op kind;
  };
  static constexpr candidate ops[]
    = {{"!=", op::ne}, {"=~", op::match}, {"==", op::eq}, {"=", op::eq}, {"!~", op::no_match}};
  for (const auto& c : ops) {
    auto pos = text.find(c.token);
    if (pos == std::string_view::npos) {
      continue;
    }
    auto left = text.substr(0, pos);
    auto attr = columns ? attribute_for_column(left) : std::optional<std::string_view>{left};
    if (!attr || attr->empty()) {
      return std::nullopt;
    }
    selector s;
    s.attr_ = std::string{*attr};
    s.op_ = c.kind;
    s.value_ = std::string{text.substr(pos + c.token.size())};
    if (c.kind == op::match || c.kind == op::no_match) {
      std::string_view re = s.value_;
      if (re.size() >= 2 && re.front() == '/' && re.back() == '/') {
        re = re.substr(1, re.size() - 2);
      }
      s.re_ = compile_regex(re, max_regex);
    }
    return s;
  }
  return std::nullopt;
}

bool selector::matches(std::string_view value) const {
  re2::StringPiece v{value.data(), value.size()};
  switch (op_) {
    case op::eq: return value == value_;
    case op::ne: return value != value_;
    case op::match: return re2::RE2::PartialMatch(v, *re_);
    case op::no_match: return !re2::RE2::PartialMatch(v, *re_);
  }
  return false;
}

} // namespace cws::store
