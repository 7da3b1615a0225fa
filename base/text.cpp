#include "base/text.hpp"

#include <charconv>

namespace cws::base {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string> split_list(std::string_view list) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string_view::npos) {
      end = list.size();
    }
    auto item = trim(list.substr(pos, end - pos));
    if (!item.empty()) {
      out.emplace_back(item);
    }
    pos = end + 1;
  }
  return out;
}

std::vector<std::string_view> split_words(std::string_view text, std::string_view separators) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find_first_of(separators, pos);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    if (end > pos) {
      out.push_back(text.substr(pos, end - pos));
    }
    pos = end + 1;
  }
  return out;
}

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) {
      out += ',';
    }
    out += item;
  }
  return out;
}

std::vector<std::string> output_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    auto line
      = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    lines.emplace_back(line);
    if (end == std::string_view::npos) {
      break;
    }
    pos = end + 1;
  }
  return lines;
}

bool parse_unsigned(std::string_view text, unsigned long long& out) {
  if (text.empty() || text.front() < '0' || text.front() > '9') {
    return false;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

} // namespace cws::base
