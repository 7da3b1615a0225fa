#include "base/settings.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <stdexcept>

#include "base/text.hpp"

namespace cws::base {

namespace {

const setting_spec* find_spec(const settings_schema& schema, std::string_view key) {
  auto it = std::find_if(schema.begin(), schema.end(),
                         [&](const setting_spec& s) { return s.key == key; });
  return it == schema.end() ? nullptr : &*it;
}

/// Why `value` is not valid for `s`, or empty.
std::string check(const setting_spec& s, std::string_view value) {
  if (s.kind == setting_kind::retired) {
    return {};
  }
  if (s.kind == setting_kind::text) {
    if (s.choices.empty()) {
      return {};
    }
    for (size_t pos = 0; pos <= s.choices.size();) {
      auto end = std::min(s.choices.find('|', pos), s.choices.size());
      if (s.choices.substr(pos, end - pos) == value) {
        return {};
      }
      pos = end + 1;
    }
    return "must be one of " + std::string{s.choices} + ", not '" + std::string{value} + "'";
  }
  unsigned long long n = 0;
  if (!parse_unsigned(value, n)) {
    return "must be a whole number, not '" + std::string{value} + "'";
  }
  if (n < s.min || n > s.max) {
    return "must be between " + std::to_string(s.min) + " and " + std::to_string(s.max) + ", not "
           + std::string{value};
  }
  return {};
}

} // namespace

settings::settings(const settings_schema& schema) : schema_(&schema) {
  for (const auto& s : schema) {
    values_.emplace(std::string{s.key}, std::string{s.fallback});
  }
}

settings settings::load(const std::filesystem::path& path, const settings_schema& schema) {
  std::ifstream in{path};
  return parse(in, path.string(), schema);
}

settings settings::parse(std::istream& in, const std::string& name, const settings_schema& schema) {
  settings out{schema};
  std::string line;
  std::set<std::string, std::less<>> seen;
  for (size_t no = 1; std::getline(in, line); ++no) {
    auto text = trim(std::string_view{line}.substr(0, line.find('#')));
    if (text.empty()) {
      continue;
    }
    auto where = name + ":" + std::to_string(no);
    auto eq = text.find('=');
    if (eq == std::string_view::npos) {
      throw std::invalid_argument(where + ": expected 'key = value', not '" + std::string{text}
                                  + "'");
    }
    auto key = trim(text.substr(0, eq));
    if (!seen.insert(std::string{key}).second) {
      throw std::invalid_argument(where + ": '" + std::string{key} + "' is set twice");
    }
    out.set(key, trim(text.substr(eq + 1)), where);
  }
  return out;
}

void settings::set(std::string_view key, std::string_view value, const std::string& where) {
  const auto* s = find_spec(*schema_, key);
  if (s == nullptr) {
    throw std::invalid_argument(where + ": unknown setting '" + std::string{key} + "'");
  }
  if (auto why = check(*s, value); !why.empty()) {
    throw std::invalid_argument(where + ": '" + std::string{key} + "' " + why);
  }
  values_.find(key)->second = std::string{value};
  if (s->kind == setting_kind::retired
      && std::find(retired_given_.begin(), retired_given_.end(), s) == retired_given_.end()) {
    retired_given_.push_back(s);
  }
}

const setting_spec& settings::spec(std::string_view key) const {
  const auto* s = find_spec(*schema_, key);
  if (s == nullptr) {
    throw std::logic_error("setting '" + std::string{key} + "' is not in the schema");
  }
  return *s;
}

unsigned long long settings::number(std::string_view key) const {
  if (spec(key).kind != setting_kind::number) {
    throw std::logic_error("setting '" + std::string{key} + "' is not a number");
  }
  unsigned long long n = 0;
  parse_unsigned(values_.find(key)->second, n); // checked when set
  return n;
}

const std::string& settings::text(std::string_view key) const {
  spec(key);
  return values_.find(key)->second;
}

std::string settings::commented(const settings_schema& schema, std::string_view title) {
  std::string out;
  out.append("# ").append(title).append("\n");
  out += "# `key = value` lines; `#` starts a comment. Every setting is shown at its default,\n"
         "# commented out: remove the `#` to change one. An unknown key, a key given twice or a\n"
         "# value out of range stops the daemon with an error naming the line.\n";
  for (const auto& s : schema) {
    if (s.kind == setting_kind::retired) {
      continue;
    }
    out.append("\n# ").append(s.doc);
    if (s.kind == setting_kind::number) {
      out.append(" [").append(std::to_string(s.min)).append("-").append(std::to_string(s.max));
      out += "]";
    } else if (!s.choices.empty()) {
      out.append(" [").append(s.choices).append("]");
    }
    out.append("\n#").append(s.key).append(" = ").append(s.fallback).append("\n");
  }
  return out;
}

std::vector<std::string_view> settings::changed(const settings& other) const {
  std::vector<std::string_view> out;
  for (const auto& spec : *schema_) {
    if (spec.kind == setting_kind::retired) {
      continue;
    }
    auto mine = values_.find(spec.key);
    auto theirs = other.values_.find(spec.key);
    auto value = [](const auto& map, auto it) {
      return it == map.end() ? std::string{} : it->second;
    };
    if (value(values_, mine) != value(other.values_, theirs)) {
      out.push_back(spec.key);
    }
  }
  return out;
}

} // namespace cws::base
