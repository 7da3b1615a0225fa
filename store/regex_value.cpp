#include "store/regex_value.hpp"

#include <re2/re2.h>

#include <cstdint>
#include <cstdio>
#include <optional>

namespace cws::store {

/// Integer arithmetic as xCAT evaluates it (`use integer`): + - * / %, unary minus,
/// parentheses, numbers and captures (`$1`, `${1}`). Overflow wraps; division or remainder by
/// zero has no value (Perl's eval dies: the group becomes empty).
struct regex_value::term {
  enum class kind { number, capture, negate, add, subtract, multiply, divide, remainder };
  kind k = kind::number;
  int64_t number = 0;
  std::shared_ptr<const term> left;
  std::shared_ptr<const term> right;

  std::optional<int64_t> eval(const std::vector<re2::StringPiece>& captures) const {
    auto wrap = [](uint64_t v) {
      return static_cast<int64_t>(v);
    };
    switch (k) {
      case kind::number: return number;
      case kind::capture:
        return numify(static_cast<size_t>(number) < captures.size()
                        ? captures[static_cast<size_t>(number)]
                        : re2::StringPiece{});
      case kind::negate: {
        auto a = left->eval(captures);
        return a ? std::optional<int64_t>{wrap(0 - static_cast<uint64_t>(*a))} : std::nullopt;
      }
      default: break;
    }
    auto a = left->eval(captures);
    auto b = right->eval(captures);
    if (!a || !b) {
      return std::nullopt;
    }
    auto ua = static_cast<uint64_t>(*a);
    auto ub = static_cast<uint64_t>(*b);
    switch (k) {
      case kind::add: return wrap(ua + ub);
      case kind::subtract: return wrap(ua - ub);
      case kind::multiply: return wrap(ua * ub);
      case kind::divide:
      case kind::remainder:
        if (*b == 0) {
          return std::nullopt;
        }
        if (*b == -1) { // INT64_MIN / -1 overflows: wrap as the other operations do
          return k == kind::divide ? wrap(0 - ua) : 0;
        }
        return k == kind::divide ? *a / *b : *a % *b;
      default: return std::nullopt;
    }
  }

  /// A capture as Perl reads it as a number: optional sign, leading digits ("012" is 12,
  /// "" or no capture is 0).
  static int64_t numify(re2::StringPiece s) {
    size_t i = 0;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) {
      ++i;
    }
    bool negative = i < s.size() && s[i] == '-';
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
      ++i;
    }
    uint64_t v = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      v = v > (UINT64_MAX - 9) / 10 ? UINT64_MAX : v * 10 + static_cast<uint64_t>(s[i] - '0');
    }
    v = std::min<uint64_t>(v, INT64_MAX);
    return negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  }
};

namespace {

using term = regex_value::term;
using term_ptr = std::shared_ptr<const term>;

/// Recursive descent over the characters xCAT lets through (digits, `$`, `{}`, `()`,
/// `+-*/%`); anything else, or a malformed expression, is refused with `error` set.
class arithmetic_parser {
 public:
  explicit arithmetic_parser(std::string_view text) : s_(text) {
    // nop
  }

  term_ptr parse(std::string& error) {
    auto t = sum();
    if (t && pos_ != s_.size()) {
      t = nullptr;
    }
    if (!t) {
      error = "'" + std::string{s_} + "' is not integer arithmetic over the pattern's captures";
    }
    return t;
  }

 private:
  static term_ptr node(term::kind k, term_ptr l, term_ptr r = nullptr) {
    auto t = std::make_shared<term>();
    t->k = k;
    t->left = std::move(l);
    t->right = std::move(r);
    return t;
  }

  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  term_ptr sum() {
    auto l = product();
    while (l && pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) {
      auto k = s_[pos_++] == '+' ? term::kind::add : term::kind::subtract;
      auto r = product();
      l = r ? node(k, l, r) : nullptr;
    }
    return l;
  }

  term_ptr product() {
    auto l = unary();
    while (l && pos_ < s_.size() && (s_[pos_] == '*' || s_[pos_] == '/' || s_[pos_] == '%')) {
      char op = s_[pos_++];
      auto k = op == '*'   ? term::kind::multiply
               : op == '/' ? term::kind::divide
                           : term::kind::remainder;
      auto r = unary();
      l = r ? node(k, l, r) : nullptr;
    }
    return l;
  }

  term_ptr unary() {
    if (++depth_ > max_depth) {
      return nullptr;
    }
    term_ptr t;
    if (eat('-')) {
      auto a = unary();
      t = a ? node(term::kind::negate, a) : nullptr;
    } else if (eat('+')) {
      t = unary();
    } else {
      t = primary();
    }
    --depth_;
    return t;
  }

  term_ptr primary() {
    if (eat('(')) {
      auto t = sum();
      return t && eat(')') ? t : nullptr;
    }
    bool capture = eat('$');
    bool braced = capture && eat('{');
    auto t = std::make_shared<term>();
    t->k = capture ? term::kind::capture : term::kind::number;
    size_t start = pos_;
    for (; pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; ++pos_) {
      if (pos_ - start >= 18) {
        return nullptr; // larger than any count of captures or sensible address part
      }
      t->number = t->number * 10 + (s_[pos_] - '0');
    }
    if (pos_ == start || (braced && !eat('}'))) {
      return nullptr;
    }
    return t;
  }

  static constexpr int max_depth = 64;
  std::string_view s_;
  size_t pos_ = 0;
  int depth_ = 0;
};

bool arithmetic_characters(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '$' || c == '{' || c == '}' || c == '(' || c == ')'
          || c == '+' || c == '-' || c == '*' || c == '/' || c == '%')) {
      return false;
    }
  }
  return !s.empty();
}

/// `(sprintf("FORMAT",ARITHMETIC))`, as xCAT allows it: the format's characters are
/// `%`, digits and `csduoxefg`, with exactly one conversion. Sets `format` and `arithmetic`.
bool parse_sprintf(std::string_view group, std::string& format, std::string_view& arithmetic) {
  constexpr std::string_view head = "(sprintf(";
  if (group.substr(0, head.size()) != head || group.size() < head.size() + 2
      || group.substr(group.size() - 2) != "))") {
    return false;
  }
  auto inner = group.substr(head.size(), group.size() - head.size() - 2);
  if (inner.empty() || (inner[0] != '"' && inner[0] != '\'')) {
    return false;
  }
  auto close = inner.find(inner[0], 1);
  if (close == std::string_view::npos) {
    return false;
  }
  format = std::string{inner.substr(1, close - 1)};
  auto rest = inner.substr(close + 1);
  if (rest.empty() || rest[0] != ',') {
    return false;
  }
  rest.remove_prefix(1);
  while (!rest.empty() && (rest[0] == ' ' || rest[0] == '\t')) {
    rest.remove_prefix(1);
  }
  arithmetic = rest;
  int conversions = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    bool allowed = c == '%' || (c >= '0' && c <= '9')
                   || std::string_view{"csduoxefg"}.find(c) != std::string_view::npos;
    if (!allowed) {
      return false;
    }
    if (c == '%') {
      if (i + 1 < format.size() && format[i + 1] == '%') {
        ++i;
        continue;
      }
      size_t j = i + 1;
      while (j < format.size() && format[j] >= '0' && format[j] <= '9') {
        ++j;
      }
      if (j == format.size()
          || std::string_view{"sduoxefg"}.find(format[j]) == std::string_view::npos
          || j - i > 4) { // widths up to 999
        return false;
      }
      ++conversions;
      i = j;
    }
  }
  return conversions == 1 && arithmetic_characters(arithmetic);
}

/// Perl's sprintf of one integer with a format parse_sprintf accepted.
std::string format_integer(const std::string& format, int64_t v) {
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (format[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    size_t j = i + 1;
    while (format[j] >= '0' && format[j] <= '9') {
      ++j;
    }
    std::string flags = format.substr(i + 1, j - i - 1); // "03": zero flag and width
    char conv = format[j];
    char buf[1100];
    if (conv == 's') {
      auto text = std::to_string(v);
      size_t width = flags.empty() ? 0 : std::stoul(flags);
      if (text.size() < width) {
        text.insert(0, width - text.size(), flags[0] == '0' ? '0' : ' ');
      }
      out += text;
    } else if (conv == 'd') {
      std::snprintf(buf, sizeof buf, ("%" + flags + "lld").c_str(), static_cast<long long>(v));
      out += buf;
    } else if (conv == 'u' || conv == 'o' || conv == 'x') {
      std::snprintf(buf, sizeof buf, ("%" + flags + "ll" + conv).c_str(),
                    static_cast<unsigned long long>(v));
      out += buf;
    } else {
      std::snprintf(buf, sizeof buf, ("%" + flags + conv).c_str(), static_cast<double>(v));
      out += buf;
    }
    i = j;
  }
  return out;
}

} // namespace

bool regex_value::is_expression(std::string_view text) noexcept {
  if (text.size() < 3 || (text.front() != '/' && text.front() != '|')) {
    return false;
  }
  char d = text.front();
  return text.back() == d && text.find(d, 1) < text.size() - 1;
}

std::shared_ptr<const regex_value> regex_value::parse(std::string_view text, std::string& error) {
  if (!is_expression(text)) {
    error = "not a regular expression value";
    return nullptr;
  }
  if (text.size() > max_length) {
    error = "the expression is longer than " + std::to_string(max_length) + " characters";
    return nullptr;
  }
  char d = text.front();
  auto inner = text.substr(1, text.size() - 2);
  auto split = inner.find(d);
  auto pattern = inner.substr(0, split);
  auto replacement = inner.substr(split + 1);

  std::shared_ptr<regex_value> v{new regex_value};
  re2::RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_max_mem(int64_t{8} << 20);
  v->pattern_
    = std::make_shared<const re2::RE2>(re2::StringPiece{pattern.data(), pattern.size()}, opts);
  if (!v->pattern_->ok()) {
    error = "invalid regular expression '" + std::string{pattern} + "': " + v->pattern_->error();
    return nullptr;
  }
  if (d == '/') {
    v->pieces_.push_back({std::string{replacement}, nullptr, {}});
    return v;
  }
  // `|...|`: literal text and top-level parenthesized groups, left to right
  size_t pos = 0;
  while (pos < replacement.size()) {
    auto open = replacement.find_first_of("()", pos);
    if (open == std::string_view::npos) {
      v->pieces_.push_back({std::string{replacement.substr(pos)}, nullptr, {}});
      break;
    }
    if (replacement[open] == ')') {
      error = "unbalanced ')' in '" + std::string{replacement} + "'";
      return nullptr;
    }
    if (open > pos) {
      v->pieces_.push_back({std::string{replacement.substr(pos, open - pos)}, nullptr, {}});
    }
    int depth = 0;
    size_t close = open;
    for (; close < replacement.size(); ++close) {
      depth += replacement[close] == '(' ? 1 : replacement[close] == ')' ? -1 : 0;
      if (depth == 0) {
        break;
      }
    }
    if (depth != 0) {
      error = "unbalanced '(' in '" + std::string{replacement} + "'";
      return nullptr;
    }
    auto group = replacement.substr(open, close - open + 1);
    piece p;
    std::string_view arithmetic = group;
    if (!parse_sprintf(group, p.format, arithmetic)) {
      p.format.clear();
      if (!arithmetic_characters(group)) {
        error = "'" + std::string{group}
                + "' may hold only integer arithmetic (digits, $1..., + - * / % and parentheses,"
                  " no spaces) or (sprintf(\"%03d\",$1))";
        return nullptr;
      }
    }
    p.arithmetic = arithmetic_parser{arithmetic}.parse(error);
    if (!p.arithmetic) {
      return nullptr;
    }
    v->pieces_.push_back(std::move(p));
    pos = close + 1;
  }
  return v;
}

std::string regex_value::evaluate(std::string_view node) const {
  int groups = 1 + pattern_->NumberOfCapturingGroups();
  std::vector<re2::StringPiece> m(static_cast<size_t>(groups));
  re2::StringPiece in{node.data(), node.size()};
  if (!pattern_->Match(in, 0, in.size(), re2::RE2::UNANCHORED, m.data(), groups)) {
    return std::string{node}; // Perl's s/// changed nothing
  }
  auto prefix = node.substr(0, static_cast<size_t>(m[0].data() - node.data()));
  auto suffix = node.substr(prefix.size() + m[0].size());
  std::string replacement;
  for (const auto& p : pieces_) {
    if (!p.arithmetic) {
      replacement += p.literal;
      continue;
    }
    // xCAT replaces the match in the node's name by the group's value: the whole name for
    // a pattern that matches all of it
    replacement += prefix;
    if (auto value = p.arithmetic->eval(m)) {
      replacement += p.format.empty() ? std::to_string(*value) : format_integer(p.format, *value);
    }
    replacement += suffix;
  }
  std::string out{prefix};
  out += replacement;
  out += suffix;
  return out;
}

} // namespace cws::store
