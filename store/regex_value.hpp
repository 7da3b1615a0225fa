#pragma once

// xCAT's per-node attribute expressions: a group row such as `ip=|node(\d+)|10.0.0.($1+0)|`
// or `bmc=/\z/-bmc/` gives each member node its own value, computed from the node's name
// wherever the attribute is read (xCAT: Table.pm, getNodeAttribs).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
} // namespace re2

namespace cws::store {

/// One attribute value in either of xCAT's expression forms, parsed once and evaluated for
/// any number of nodes:
/// - `/pattern/replacement/`: the node's name with the first match of `pattern` replaced by
///   `replacement` (taken literally: `$1` is not expanded, as in xCAT);
/// - `|pattern|text|`: the same with `text`, in which every parenthesized group is integer
///   arithmetic over the pattern's captures (`($1+0)`, `($1*2+1)`) or
///   `(sprintf("%03d",$1))`, each replaced by the node's name with the match replaced by
///   the group's value, as xCAT's evaluation does.
/// A name the pattern does not match gets the name itself; an empty result means unset.
/// Patterns are RE2 (linear time, no backreferences): a value is checked when it is
/// written, so reading never fails.
class regex_value {
 public:
  /// Longest expression accepted (characters).
  static constexpr size_t max_length = 1024;

  /// True if `text` has either form (xCAT: `^/.*/.*/$` or `^\|.*\|.*\|$`).
  static bool is_expression(std::string_view text) noexcept;

  /// Parses `text`, which must have either form. On failure returns null and sets `error`
  /// (what is wrong, for a message naming the attribute).
  static std::shared_ptr<const regex_value> parse(std::string_view text, std::string& error);

  /// The value for node `node`.
  std::string evaluate(std::string_view node) const;

  struct term; // an arithmetic expression (regex_value.cpp)

 private:
  /// A piece of the text of the `|...|` form: literal, or a group to evaluate.
  struct piece {
    std::string literal;
    std::shared_ptr<const term> arithmetic; ///< null: literal
    std::string format;                     ///< sprintf's format, if the group is one
  };

  regex_value() = default;

  std::shared_ptr<const re2::RE2> pattern_;
  std::vector<piece> pieces_; ///< the replacement: one literal for the `/` form
};

} // namespace cws::store
