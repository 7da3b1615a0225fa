#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cws::base {

/// A command-line usage mistake; the message is printed after `Error: `.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Which options a command accepts.
struct option_spec {
  /// Short options taking a value (`-t node`, `-tnode`).
  std::string_view short_values;
  /// Short boolean options, bundlable (`-lS`).
  std::string_view short_flags;
  /// Long options taking a value (`--home DIR`, `--home=DIR`).
  std::vector<std::string_view> long_values;
  /// Long boolean options.
  std::vector<std::string_view> long_flags;
  /// Long spellings of short boolean options (`--long` for `-l`), as xCAT's tools take them;
  /// only those whose short option is in `short_flags` are accepted.
  std::vector<std::pair<std::string_view, char>> long_aliases;
};

/// Parsed command line: options and the positional arguments in order.
struct parsed_args {
  std::map<std::string, std::vector<std::string>> values;
  std::set<std::string> flags;
  std::vector<std::string> positional;

  /// True if boolean option `name` (`"l"`, `"help"`) was given.
  bool has(std::string_view name) const {
    return flags.count(std::string{name}) > 0;
  }

  /// The last value of option `name`, or `fallback`.
  std::string value(std::string_view name, std::string fallback = {}) const {
    auto it = values.find(std::string{name});
    return it == values.end() ? fallback : it->second.back();
  }

  /// Every value of a repeatable option (`-w`).
  std::vector<std::string> all(std::string_view name) const {
    auto it = values.find(std::string{name});
    return it == values.end() ? std::vector<std::string>{} : it->second;
  }
};

/// Parses `args` (without the program name). `-h`, `-?` and `--help` are always accepted.
/// @throws usage_error for an unknown option or a missing value.
parsed_args parse_args(const std::vector<std::string>& args, const option_spec& spec);

/// Removes xCAT's optional-value option `--name` from `args` (Getopt::Long's `name:s`):
/// `--name=VALUE`, `--name VALUE` (a VALUE not starting with `-`) or `--name` alone (value
/// ""). Arguments after `--` are left alone. Returns the value of the last one, or nullopt if
/// the option was not given.
std::optional<std::string> take_optional_value(std::vector<std::string>& args,
                                               std::string_view name);

/// Splits `attr=value` as xCAT does (`^\s*(\S+?)\s*=\s*(\S*.*)$`); false if there is no `=`.
bool split_assignment(std::string_view arg, std::string& name, std::string& value);

} // namespace cws::base
