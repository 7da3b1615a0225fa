#include "store/noderange.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <re2/re2.h>
#include <unordered_set>

#include "store/error.hpp"
#include "store/schema.hpp"
#include "store/selector.hpp"

namespace cws::store {

namespace {

using name_list = std::vector<std::string>;

constexpr size_t max_digits = 18; // numbers beyond this cannot name a real node

[[noreturn]] void fail(const std::string& msg) {
  throw error{store_errc::bad_noderange, msg};
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_digit);
}

void normalize(name_list& v) {
  // ranges come out strictly increasing already: one pass tells, and nothing else is needed
  if (std::adjacent_find(v.begin(), v.end(), std::greater_equal<>{}) == v.end()) {
    return;
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

name_list merge(name_list a, name_list b) {
  normalize(a);
  normalize(b);
  name_list out;
  out.reserve(a.size() + b.size());
  std::set_union(std::make_move_iterator(a.begin()), std::make_move_iterator(a.end()),
                 std::make_move_iterator(b.begin()), std::make_move_iterator(b.end()),
                 std::back_inserter(out));
  return out;
}

name_list intersect(name_list a, name_list b) {
  normalize(a);
  normalize(b);
  name_list out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

name_list subtract(name_list a, name_list b) {
  normalize(a);
  normalize(b);
  name_list out;
  out.reserve(a.size());
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

/// Splits at `sep` outside [...] and (...).
std::vector<std::string_view> split_top(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '[' || c == '(') {
      ++depth;
    } else if ((c == ']' || c == ')') && depth > 0) {
      --depth;
    } else if (c == sep && depth == 0) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

/// Index of the ')' closing the '(' at `open`, or npos.
size_t closing_paren(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(') {
      ++depth;
    } else if (s[i] == ')' && --depth == 0) {
      return i;
    }
  }
  return std::string_view::npos;
}

/// Alternating runs of digits and non-digits.
std::vector<std::string_view> runs(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 1; i <= s.size(); ++i) {
    if (i == s.size() || is_digit(s[i]) != is_digit(s[i - 1])) {
      out.push_back(s.substr(start, i - start));
      start = i;
    }
  }
  return out;
}

/// Perl's `left..right` over digit strings: numeric unless `left` starts with 0, in which case
/// a magic string increment that keeps the width and stops at `right` or when longer.
struct perl_range {
  uint64_t first = 0;
  uint64_t last = 0; // inclusive; first > last means empty
  size_t width = 0;  // zero-padding (string mode)

  perl_range(std::string_view l, std::string_view r) {
    if (l.size() > max_digits || r.size() > max_digits) {
      fail("Number too large in noderange: " + std::string{l.size() > r.size() ? l : r});
    }
    first = std::stoull(std::string{l});
    uint64_t right = std::stoull(std::string{r});
    if (l[0] != '0') {
      last = right;
      if (first > last) {
        first = 1, last = 0;
      }
      return;
    }
    width = l.size();
    if (width > r.size()) {
      first = 1, last = 0;
      return;
    }
    if (right >= first && format(right) == r) {
      last = right;
    } else {
      uint64_t limit = 1;
      for (size_t i = 0; i < r.size(); ++i) {
        limit *= 10;
      }
      last = limit - 1;
    }
    if (first > last) {
      first = 1, last = 0;
    }
  }

  uint64_t count() const {
    return first > last ? 0 : last - first + 1;
  }

  std::string format(uint64_t v) const {
    return name("", v, "");
  }

  /// `prefix` + v (zero-padded to `width`) + `suffix`, built in one allocation at most.
  std::string name(std::string_view prefix, uint64_t v, std::string_view suffix) const {
    char digits[24];
    char* end = digits + sizeof digits;
    char* p = end;
    do {
      *--p = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    auto len = static_cast<size_t>(end - p);
    size_t pad = width > len ? width - len : 0;
    std::string out;
    out.reserve(prefix.size() + pad + len + suffix.size());
    out.append(prefix).append(pad, '0').append(p, len).append(suffix);
    return out;
  }
};

class expander {
 public:
  expander(const node_universe& u, const noderange_options& o) : u_(u), o_(o) {
    // nop
  }

  name_list range(std::string_view r);

  std::vector<std::string> missing;
  std::unordered_set<std::string> missing_seen_;

 private:
  name_list atom(std::string_view a);
  name_list element(std::string_view e);
  void generated(std::string name, name_list& out);
  bool two_sided(std::string_view l, std::string_view r, name_list& out);
  bool dash_range(std::string_view a, name_list& out);
  bool increment(std::string_view a, name_list& out);
  bool brackets(std::string_view a, name_list& out);
  uint64_t bracket_count(std::string_view a);
  name_list file(std::string_view path);
  name_list by_selector(std::string_view a);
  std::optional<name_list> group(std::string_view name);
  name_list by_regex(std::string_view a);
  void reserve(uint64_t n);
  void miss(std::string_view name);

  const node_universe& u_;
  const noderange_options& o_;
  uint64_t produced_ = 0;
  int depth_ = 0;
};

void expander::reserve(uint64_t n) {
  produced_ += n;
  if (n > o_.max_nodes || produced_ > o_.max_nodes) {
    fail("The noderange would expand to more than " + std::to_string(o_.max_nodes)
         + " names (limit noderange_max); narrow the range.");
  }
}

void expander::miss(std::string_view name) {
  // a set beside the ordered list: a range of a million missing names must stay linear
  // (found by the noderange fuzzer)
  if (missing_seen_.emplace(name).second) {
    missing.emplace_back(name);
  }
}

void expander::generated(std::string name, name_list& out) {
  if (all_digits(name)) {
    name.insert(0, o_.digit_prefix);
    name += o_.digit_suffix;
  }
  if (u_.is_node(name)) {
    out.push_back(std::move(name));
  } else if (auto members = group(name)) {
    out.insert(out.end(), members->begin(), members->end());
  } else if (o_.verify) {
    miss(name);
  } else {
    out.push_back(std::move(name));
  }
}

bool expander::two_sided(std::string_view l, std::string_view r, name_list& out) {
  auto lr = runs(l);
  auto rr = runs(r);
  if (lr.size() != rr.size() || l.empty()) {
    return false;
  }
  size_t i = 0;
  while (i < lr.size() && lr[i] == rr[i]) {
    ++i;
  }
  if (i == lr.size()) {
    reserve(1);
    generated(std::string{l}, out);
    return true;
  }
  if (!is_digit(lr[i][0]) || !is_digit(rr[i][0])) {
    return false;
  }
  for (size_t j = i + 1; j < lr.size(); ++j) {
    if (lr[j] != rr[j]) {
      return false;
    }
  }
  std::string prefix{l.substr(0, static_cast<size_t>(lr[i].data() - l.data()))};
  std::string suffix{l.substr(static_cast<size_t>(lr[i].data() - l.data()) + lr[i].size())};
  perl_range pr{lr[i], rr[i]};
  reserve(pr.count()); // the real count: a digit suffix can widen a bracket's numbers
  out.reserve(out.size() + pr.count());
  for (uint64_t v = pr.first; v <= pr.last && pr.count() > 0; ++v) {
    generated(pr.name(prefix, v, suffix), out);
    if (v == UINT64_MAX) {
      break;
    }
  }
  return true;
}

bool expander::dash_range(std::string_view a, name_list& out) {
  if (auto colon = a.find(':'); colon != std::string_view::npos) {
    return two_sided(a.substr(0, colon), a.substr(colon + 1), out);
  }
  auto dashes = static_cast<size_t>(std::count(a.begin(), a.end(), '-'));
  if (dashes % 2 == 0) {
    return false;
  }
  size_t pos = std::string_view::npos;
  for (size_t seen = 0; seen < (dashes + 1) / 2; ++seen) {
    pos = a.find('-', pos + 1);
  }
  return two_sided(a.substr(0, pos), a.substr(pos + 1), out);
}

bool expander::increment(std::string_view a, name_list& out) {
  auto plus = a.rfind('+');
  if (plus == std::string_view::npos || plus == 0 || !all_digits(a.substr(plus + 1))) {
    return false;
  }
  auto head = a.substr(0, plus);
  size_t d = head.size();
  while (d > 0 && is_digit(head[d - 1])) {
    --d;
  }
  if (d == head.size()) {
    return false;
  }
  auto start = head.substr(d);
  auto count_text = a.substr(plus + 1);
  if (start.size() > max_digits || count_text.size() > max_digits) {
    fail("Number too large in noderange: " + std::string{a});
  }
  uint64_t first = std::stoull(std::string{start});
  uint64_t count = std::stoull(std::string{count_text});
  std::string prefix{head.substr(0, d)};
  std::string suffix;
  if (prefix.empty()) {
    prefix = o_.digit_prefix; // NodeRange.pm: bare digits take both
    suffix = o_.digit_suffix;
  }
  reserve(count + 1);
  perl_range pr{start, start};
  pr.width = start[0] == '0' ? start.size() : 0;
  out.reserve(out.size() + count + 1);
  for (uint64_t i = 0; i <= count; ++i) {
    generated(pr.name(prefix, first + i, suffix), out);
  }
  return true;
}

uint64_t expander::bracket_count(std::string_view a) {
  uint64_t total = 1;
  size_t pos = 0;
  while ((pos = a.find('[', pos)) != std::string_view::npos) {
    auto close = a.find(']', pos);
    if (close == std::string_view::npos) {
      break;
    }
    uint64_t group = 0;
    for (auto part : split_top(a.substr(pos + 1, close - pos - 1), ',')) {
      auto sep = part.find_first_of("-:");
      if (sep != std::string_view::npos && all_digits(part.substr(0, sep))
          && all_digits(part.substr(sep + 1))) {
        group += perl_range{part.substr(0, sep), part.substr(sep + 1)}.count();
      } else {
        group += 1;
      }
    }
    // saturate instead of overflowing: anything past the cap is refused anyway
    total = group != 0 && total > UINT64_MAX / group ? UINT64_MAX : total * group;
    pos = close + 1;
  }
  return total;
}

bool expander::brackets(std::string_view a, name_list& out) {
  auto open = a.find('[');
  if (open == std::string_view::npos || open == 0) {
    return false;
  }
  auto close = a.find(']', open);
  if (close == std::string_view::npos) {
    return false;
  }
  // refuse early, before anything is generated; the names are counted as they are made
  if (bracket_count(a) > o_.max_nodes) {
    reserve(bracket_count(a));
  }
  std::string prefix{a.substr(0, open)};
  auto spec = a.substr(open + 1, close - open - 1);
  std::string rest{a.substr(close + 1)};
  bool more = rest.find('[') != std::string::npos;
  for (auto part : split_top(spec, ',')) {
    auto sep = part.find_first_of("-:");
    if (!more) {
      if (sep == std::string_view::npos) {
        reserve(1);
        generated(prefix + std::string{part} + rest, out);
      } else if (!two_sided(prefix + std::string{part.substr(0, sep)} + rest,
                            prefix + std::string{part.substr(sep + 1)} + rest, out)) {
        miss(a);
      }
      continue;
    }
    // Several bracket groups: expand the first, then the rest for each result.
    std::vector<std::string> firsts;
    if (sep == std::string_view::npos) {
      firsts.emplace_back(part);
    } else if (all_digits(part.substr(0, sep)) && all_digits(part.substr(sep + 1))) {
      perl_range pr{part.substr(0, sep), part.substr(sep + 1)};
      for (uint64_t v = pr.first; v <= pr.last && pr.count() > 0; ++v) {
        firsts.push_back(pr.format(v));
      }
    } else {
      miss(a);
      continue;
    }
    for (const auto& f : firsts) {
      auto sub = prefix + f + rest;
      if (!brackets(sub, out)) {
        miss(sub);
      }
    }
  }
  return true;
}

name_list expander::file(std::string_view path) {
  if (!o_.allow_files) {
    fail("Noderange files (^" + std::string{path} + ") are not accepted here.");
  }
  name_list out;
  std::ifstream in{std::string{path}};
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '^' || line[0] == '#') {
      continue;
    }
    auto cut = line.find_first_of(": \t");
    auto nr = std::string_view{line}.substr(0, cut);
    if (!nr.empty()) {
      out = merge(std::move(out), range(nr));
    }
  }
  return out;
}

std::optional<name_list> expander::group(std::string_view name) {
  if (o_.hide_secrets) {
    // decided on the group's definition alone, before any member is computed
    for (const auto& attr : u_.dynamic_tests(name)) {
      if (is_masked_attribute(attr)) {
        refuse_masked_test(attr, name);
      }
    }
  }
  return u_.group(name);
}

name_list expander::by_selector(std::string_view a) {
  name_list out;
  auto sel = selector::parse(a, o_.max_regex);
  if (!sel) {
    return out; // xCAT: an unknown selector matches nothing and is not reported
  }
  if (o_.hide_secrets && is_masked_attribute(sel->attribute())) {
    refuse_masked_test(sel->attribute()); // before any value is read
  }
  for (const auto& n : u_.nodes()) {
    if (sel->matches(u_.attribute(n, sel->attribute()))) {
      out.push_back(n);
    }
  }
  return out;
}

name_list expander::by_regex(std::string_view a) {
  auto re = compile_regex(a, o_.max_regex);
  name_list out;
  for (const auto& n : u_.nodes()) {
    if (re2::RE2::FullMatch(re2::StringPiece{n.data(), n.size()}, *re)) {
      out.push_back(n);
    }
  }
  return out;
}

name_list expander::atom(std::string_view a) {
  name_list out;
  if (a.empty()) {
    return out;
  }
  if (u_.is_node(a)) {
    out.emplace_back(a);
    return out;
  }
  if (a.front() == '(' && closing_paren(a, 0) == a.size() - 1) {
    return range(a.substr(1, a.size() - 2));
  }
  if (auto open = a.find('('); open != std::string_view::npos && open > 0) {
    // `X-(Y)`: X without Y
    auto close = closing_paren(a, open);
    if (a[open - 1] == '-' && close == a.size() - 1) {
      return subtract(range(a.substr(0, open - 1)), range(a.substr(open + 1, close - open - 1)));
    }
  }
  if (split_top(a, '@').size() > 1) {
    return range(a);
  }
  if (auto members = group(a)) {
    return std::move(*members);
  }
  if (a.find_first_of("=~") != std::string_view::npos) {
    return by_selector(a);
  }
  if (all_digits(a)) {
    reserve(1);
    generated(std::string{a}, out);
    return out;
  }
  if (a.front() == '/') {
    return by_regex(a.substr(1));
  }
  if (a.front() == '^') {
    return file(a.substr(1));
  }
  if (brackets(a, out) || increment(a, out) || dash_range(a, out)) {
    return out;
  }
  if (o_.verify) {
    miss(a);
  } else {
    out.emplace_back(a);
  }
  return out;
}

name_list expander::range(std::string_view r) {
  if (++depth_ > 64) {
    fail("Noderange is nested too deeply.");
  }
  auto elements = split_top(r, ',');
  name_list acc;
  if (elements.size() == 1) {
    auto parts = split_top(r, '@');
    if (parts.size() > 1) {
      acc = atom(parts[0]);
      for (size_t i = 1; i < parts.size(); ++i) {
        acc = intersect(std::move(acc), atom(parts[i]));
      }
      --depth_;
      return acc;
    }
  }
  name_list excluded;
  for (auto e : elements) {
    if (e.empty()) {
      continue;
    }
    if (e.front() == '-' && e.size() > 1) {
      auto x = atom(e.substr(1));
      excluded.insert(excluded.end(), x.begin(), x.end());
    } else if (e.front() == '@' && e.size() > 1) {
      acc = intersect(std::move(acc), atom(e.substr(1)));
    } else if (acc.empty()) {
      acc = atom(e); // the common single-element case: no copy
    } else {
      auto x = atom(e);
      acc.insert(acc.end(), std::make_move_iterator(x.begin()), std::make_move_iterator(x.end()));
    }
  }
  // exclusions win regardless of position: applied last
  acc = excluded.empty() ? (normalize(acc), std::move(acc))
                         : subtract(std::move(acc), std::move(excluded));
  --depth_;
  return acc;
}

void check_parentheses(std::string_view r) {
  int depth = 0;
  for (char c : r) {
    if (c == '(') {
      ++depth;
    } else if (c == ')' && --depth < 0) {
      break;
    }
  }
  if (depth != 0) {
    fail("Unbalanced parentheses in noderange");
  }
}

} // namespace

noderange_result expand_noderange(std::string_view range, const node_universe& universe,
                                  const noderange_options& opts) {
  if (range.size() > opts.max_length) {
    fail("The noderange is longer than " + std::to_string(opts.max_length) + " characters.");
  }
  std::string text;
  text.reserve(range.size());
  for (char c : range) {
    if (c != '\'' && c != '"') {
      text.push_back(c);
    }
  }
  check_parentheses(text);
  expander ex{universe, opts};
  noderange_result result;
  result.nodes = ex.range(text);
  if (!opts.exclude.empty()) {
    auto quiet = opts;
    quiet.verify = true;
    quiet.exclude.clear();
    expander ex2{universe, quiet};
    result.nodes = subtract(std::move(result.nodes), ex2.range(opts.exclude));
  }
  result.missing = std::move(ex.missing);
  return result;
}

void refuse_masked_test(std::string_view attr, std::string_view group) {
  std::string what = group.empty() ? std::string{"The noderange"}
                                   : "The dynamic group '" + std::string{group} + "'";
  throw error{store_errc::forbidden,
              what + " tests '" + std::string{attr} + "', whose value only root may read."};
}

std::vector<std::string> node_universe::dynamic_tests(std::string_view) const {
  return {};
}

const std::vector<std::string>& empty_universe::nodes() const {
  return none_;
}

bool empty_universe::is_node(std::string_view) const {
  return false;
}

std::optional<std::vector<std::string>> empty_universe::group(std::string_view) const {
  return std::nullopt;
}

std::string empty_universe::attribute(std::string_view, std::string_view) const {
  return {};
}

std::string fold_nodes(std::vector<std::string> names) {
  struct numbered {
    uint64_t value;
    std::string digits;
  };
  // (prefix, suffix) -> numbers; names without digits stay as they are
  std::map<std::pair<std::string, std::string>, std::vector<numbered>> groups;
  std::vector<std::string> plain;
  std::vector<numbered>* last = nullptr; // names usually come in runs of one pattern
  std::string_view last_prefix;
  std::string_view last_suffix;
  for (auto& n : names) {
    auto end = n.find_last_of("0123456789");
    if (end == std::string::npos) {
      plain.push_back(std::move(n));
      continue;
    }
    auto begin = n.find_last_not_of("0123456789", end);
    begin = begin == std::string::npos ? 0 : begin + 1;
    std::string_view name{n};
    auto digits = name.substr(begin, end + 1 - begin);
    if (digits.size() > max_digits) {
      plain.push_back(std::move(n));
      continue;
    }
    auto prefix = name.substr(0, begin);
    auto suffix = name.substr(end + 1);
    if (last == nullptr || prefix != last_prefix || suffix != last_suffix) {
      auto it = groups.try_emplace({std::string{prefix}, std::string{suffix}}).first;
      last = &it->second;
      last_prefix = it->first.first;
      last_suffix = it->first.second;
    }
    uint64_t value = 0;
    for (char c : digits) {
      value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    last->push_back({value, std::string{digits}});
  }
  std::vector<std::string> parts;
  for (auto& [affix, nums] : groups) {
    std::sort(nums.begin(), nums.end(), [](const numbered& a, const numbered& b) {
      return a.value != b.value ? a.value < b.value : a.digits < b.digits;
    });
    nums.erase(
      std::unique(nums.begin(), nums.end(),
                  [](const numbered& a, const numbered& b) { return a.digits == b.digits; }),
      nums.end());
    std::string ranges;
    size_t count = 0;
    for (size_t i = 0; i < nums.size();) {
      // a run goes on while the next name is the next number written the same way
      size_t width = nums[i].digits[0] == '0' ? nums[i].digits.size() : 0;
      size_t j = i;
      while (j + 1 < nums.size() && nums[j + 1].value == nums[j].value + 1) {
        auto next = std::to_string(nums[j + 1].value);
        if (next.size() < width) {
          next.insert(0, width - next.size(), '0');
        }
        if (next != nums[j + 1].digits) {
          break;
        }
        ++j;
      }
      ranges += (ranges.empty() ? "" : ",") + nums[i].digits;
      if (j > i) {
        ranges += "-" + nums[j].digits;
      }
      count += j - i + 1;
      i = j + 1;
    }
    const auto& [prefix, suffix] = affix;
    if (count == 1) {
      parts.push_back(prefix + ranges + suffix);
    } else {
      parts.push_back(prefix + "[" + ranges + "]" + suffix);
    }
  }
  parts.insert(parts.end(), plain.begin(), plain.end());
  std::sort(parts.begin(), parts.end());
  parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
  std::string out;
  for (const auto& p : parts) {
    out += (out.empty() ? "" : ",") + p;
  }
  return out;
}

std::string missing_nodes_message(const std::vector<std::string>& missing) {
  constexpr size_t shown = 1000;
  std::string msg = "Invalid nodes and/or groups in noderange: ";
  for (size_t i = 0; i < missing.size() && i < shown; ++i) {
    if (i > 0) {
      msg += ',';
    }
    msg += missing[i];
  }
  if (missing.size() > shown) {
    msg += ",... (" + std::to_string(missing.size() - shown) + " more)";
  }
  return msg;
}

} // namespace cws::store
