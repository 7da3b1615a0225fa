#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cws::http {

/// Decodes %XX (and `+` as a space when `query`); false on a malformed escape.
bool percent_decode(std::string_view in, std::string& out, bool query);

/// The decoded parameters of a request's query string.
class query_params {
 public:
  /// Parses `a=1&b=2` (percent-decoded, `+` a space; a repeated key: the last wins).
  /// False on a malformed escape.
  bool parse(std::string_view text);

  /// The value of `key`, or null.
  const std::string* find(const std::string& key) const;

  /// Whether `key` is present with a value other than empty or `0` (`pretty=1`).
  bool flag(const std::string& key) const;

  /// Whether `key` is present with exactly `value`.
  bool equals(const std::string& key, std::string_view value) const;

  /// A whole number from 0 to `max` (absent: `fallback`); nullopt when malformed.
  std::optional<long long> number(const std::string& key, long long max, long long fallback) const;

  const std::map<std::string, std::string>& all() const {
    return values_;
  }

 private:
  std::map<std::string, std::string> values_;
};

} // namespace cws::http
