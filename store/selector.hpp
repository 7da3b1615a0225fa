#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace cws::store {

/// An attribute test such as `mgt==kvm`, `nodehm.mgt!=ipmi`, `os=~^rhel`, `groups!~test`.
/// Unset attributes compare as the empty string (so `mgt!=kvm` matches nodes without mgt).
class selector {
 public:
  enum class op { eq, ne, match, no_match };

  /// Parses `text`. Operators are tried in xCAT's order: `!=`, `=~`, `==`, `=`, `!~`.
  /// Returns nullopt when `text` has no operator or names no known node attribute.
  /// @throws cws::store::error (bad_noderange) for a regex longer than `max_regex` or invalid.
  /// With `columns` false the left side is taken as an attribute name verbatim (lsdef -w).
  static std::optional<selector> parse(std::string_view text, size_t max_regex = 1024,
                                       bool columns = true);

  /// The node attribute tested.
  const std::string& attribute() const noexcept {
    return attr_;
  }

  /// True if `value` (the attribute's value, "" when unset) passes the test.
  bool matches(std::string_view value) const;

 private:
  std::string attr_;
  op op_ = op::eq;
  std::string value_;
  std::shared_ptr<const re2::RE2> re_;
};

/// The selections of a dynamic group's `wherevals` (`attr<op>value` joined by `::`, as xCAT's
/// nodegroup table holds them; a selection may contain commas).
std::vector<std::string_view> split_wherevals(std::string_view wherevals);

/// Compiles `pattern` with RE2 (linear time: no pattern can hang the process).
/// @throws cws::store::error (bad_noderange) when it is longer than `max_len` or invalid.
std::shared_ptr<const re2::RE2> compile_regex(std::string_view pattern, size_t max_len);

} // namespace cws::store
