#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace cws::base {

/// `s` without leading and trailing blanks (space, tab, CR).
std::string_view trim(std::string_view s);

/// Splits a comma-separated list, dropping empty items and surrounding blanks.
std::vector<std::string> split_list(std::string_view list);

/// The words of `text` between any of `separators`, empty ones dropped (views into `text`).
std::vector<std::string_view> split_words(std::string_view text, std::string_view separators);

/// Joins `items` with commas.
std::string join_list(const std::vector<std::string>& items);

/// Splits command output into lines: a final newline ends the last line, and the CR a pty
/// puts before LF is dropped.
std::vector<std::string> output_lines(std::string_view text);

/// Parses a whole unsigned decimal number (no sign, no trailing text, no overflow).
/// @returns false if `text` is not one.
bool parse_unsigned(std::string_view text, unsigned long long& out);

} // namespace cws::base
