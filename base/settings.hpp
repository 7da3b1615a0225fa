#pragma once

#include <filesystem>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace cws::base {

/// What a setting's value is.
enum class setting_kind {
  text,    ///< any text (an address, a path, a word)
  number,  ///< a whole decimal number within [min, max]
  retired, ///< no longer used: accepted with any value and ignored (its doc says why)
};

/// One setting of a configuration file: the schema row every reader of it follows.
struct setting_spec {
  std::string_view key;
  setting_kind kind = setting_kind::number;
  /// The default, as it would be written; empty for a text whose default is computed (the
  /// doc says how).
  std::string_view fallback;
  unsigned long long min = 0;
  unsigned long long max = 0;
  /// One line: what it does (and the unit).
  std::string_view doc;
  /// text: the words allowed, `|`-separated (empty: any text).
  std::string_view choices = {};
};

using settings_schema = std::vector<setting_spec>;

/// The values of a configuration file (`key = value` lines, `#` starts a comment), checked
/// against a schema: every key known, every number whole and in range, no key twice.
class settings {
 public:
  /// The defaults of `schema`.
  explicit settings(const settings_schema& schema);

  /// Reads `path` (a missing file gives the defaults).
  /// @throws std::invalid_argument naming the file, the line and the key for an unknown key,
  ///   a key given twice, a number with other text in it, or a number out of range.
  static settings load(const std::filesystem::path& path, const settings_schema& schema);

  /// The same for text read from `in`; `name` stands for the file in errors.
  static settings parse(std::istream& in, const std::string& name, const settings_schema& schema);

  /// Sets `key` (a command-line override), checked as a file line would be.
  /// @throws std::invalid_argument as `load`.
  void set(std::string_view key, std::string_view value, const std::string& where = "option");

  /// The value of number setting `key`. @throws std::logic_error for a key not in the schema.
  unsigned long long number(std::string_view key) const;

  /// The value of text setting `key` (empty: its computed default applies).
  const std::string& text(std::string_view key) const;

  /// The retired settings the file (or an override) sets, in the order set.
  const std::vector<const setting_spec*>& retired_given() const {
    return retired_given_;
  }

  /// The keys whose value differs between this and `other` (of the same schema), in schema
  /// order (retired ones never).
  std::vector<std::string_view> changed(const settings& other) const;

  /// The file as `clusterctl init` writes it: every setting but the retired ones, commented
  /// out at its default, with its doc line and range.
  static std::string commented(const settings_schema& schema, std::string_view title);

 private:
  const setting_spec& spec(std::string_view key) const;

  const settings_schema* schema_;
  std::map<std::string, std::string, std::less<>> values_;
  std::vector<const setting_spec*> retired_given_;
};

} // namespace cws::base
