#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cws::store {

/// Largest stanza input mkdef -z / chdef -z accept (256 MiB: about 250,000 full node
/// definitions). Larger inputs are refused before they are parsed.
constexpr size_t max_stanza_bytes = size_t{256} << 20;

/// Longest line of a stanza input (1 MiB).
constexpr size_t max_stanza_line = size_t{1} << 20;

/// Syntax errors reported before the parser gives up.
constexpr size_t max_stanza_errors = 20;

/// One object stanza: `name:`, then `objtype=` and `attr=value` lines. The values of the
/// `default-<type>:` stanzas before it are already merged in.
struct stanza {
  std::string name;
  /// The `objtype=` value as written ("" if there was none).
  std::string type;
  /// `attr=value` pairs in input order (defaults first), without `objtype`; values trimmed
  /// and unquoted as xCAT does.
  std::vector<std::pair<std::string, std::string>> attrs;
  /// Line number of the header (1-based).
  size_t line = 0;
};

/// A parsed stanza input: the object stanzas in input order, and the syntax errors. Any error
/// means the input must not be applied.
struct stanza_input {
  std::vector<stanza> objects;
  std::vector<std::string> errors;
};

/// Parses an xCAT stanza file (xcatstanzafile(5), DBobjUtils.pm readFileInput): blank lines
/// and lines starting with `#` are skipped; a line with `=` is `attr=value` (name and value
/// trimmed, one pair of surrounding double quotes dropped); another line ending in `:` is a
/// header (the name is everything before the last `:`, trimmed); `default-<type>:` stanzas
/// set defaults for the following objects whose objtype is `<type>` (a blank default value
/// removes the default); attributes a stanza sets win over defaults. Anything else is a
/// syntax error, as are attribute lines before the first header, lines longer than
/// `max_stanza_line` and a second stanza for the same name and type. Never throws on any
/// input but std::bad_alloc.
stanza_input parse_stanzas(std::string_view text);

} // namespace cws::store
