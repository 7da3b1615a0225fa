#include "base/args.hpp"

#include <algorithm>

namespace cws::base {

namespace {

bool contains(const std::vector<std::string_view>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

} // namespace

parsed_args parse_args(const std::vector<std::string>& args, const option_spec& spec) {
  parsed_args out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      out.positional.insert(out.positional.end(), args.begin() + static_cast<long>(i) + 1,
                            args.end());
      break;
    }
    if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      auto eq = a.find('=');
      std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      auto alias = std::find_if(spec.long_aliases.begin(), spec.long_aliases.end(),
                                [&](const auto& a) { return a.first == name; });
      if (name == "help" && eq == std::string::npos) {
        out.flags.insert("help");
      } else if (alias != spec.long_aliases.end() && eq == std::string::npos
                 && spec.short_flags.find(alias->second) != std::string_view::npos) {
        out.flags.insert(std::string(1, alias->second));
      } else if (contains(spec.long_values, name)) {
        if (eq != std::string::npos) {
          out.values[name].push_back(a.substr(eq + 1));
        } else if (i + 1 < args.size()) {
          out.values[name].push_back(args[++i]);
        } else {
          throw usage_error("Option '--" + name + "' needs a value.");
        }
      } else if (contains(spec.long_flags, name) && eq == std::string::npos) {
        out.flags.insert(name);
      } else {
        throw usage_error("Invalid option '" + a + "'.");
      }
      continue;
    }
    if (a.size() < 2 || a[0] != '-') {
      out.positional.push_back(a);
      continue;
    }
    for (size_t j = 1; j < a.size(); ++j) {
      char c = a[j];
      std::string name(1, c);
      if (spec.short_values.find(c) != std::string_view::npos) {
        if (j + 1 < a.size()) {
          out.values[name].push_back(a.substr(j + 1));
        } else if (i + 1 < args.size()) {
          out.values[name].push_back(args[++i]);
        } else {
          throw usage_error("Option '-" + name + "' needs a value.");
        }
        break;
      }
      if (c == 'h' || c == '?') {
        out.flags.insert("help");
      } else if (spec.short_flags.find(c) != std::string_view::npos) {
        out.flags.insert(name);
      } else {
        throw usage_error("Invalid option '-" + name + "'.");
      }
    }
  }
  return out;
}

std::optional<std::string> take_optional_value(std::vector<std::string>& args,
                                               std::string_view name) {
  std::optional<std::string> value;
  std::string flag = "--" + std::string{name};
  for (size_t i = 0; i < args.size() && args[i] != "--";) {
    const std::string& a = args[i];
    if (a.compare(0, flag.size() + 1, flag + "=") == 0) {
      value = a.substr(flag.size() + 1);
    } else if (a == flag) {
      bool has_value = i + 1 < args.size() && !args[i + 1].empty() && args[i + 1][0] != '-';
      value = has_value ? args[i + 1] : std::string{};
      if (has_value) {
        args.erase(args.begin() + static_cast<long>(i) + 1);
      }
    } else {
      ++i;
      continue;
    }
    args.erase(args.begin() + static_cast<long>(i));
  }
  return value;
}

bool split_assignment(std::string_view arg, std::string& name, std::string& value) {
  auto eq = arg.find('=');
  if (eq == std::string_view::npos) {
    return false;
  }
  auto n = arg.substr(0, eq);
  auto v = arg.substr(eq + 1);
  while (!n.empty() && (n.front() == ' ' || n.front() == '\t')) {
    n.remove_prefix(1);
  }
  while (!n.empty() && (n.back() == ' ' || n.back() == '\t')) {
    n.remove_suffix(1);
  }
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) {
    v.remove_prefix(1);
  }
  name = std::string{n};
  value = std::string{v};
  return !name.empty() && name.find_first_of(" \t") == std::string::npos;
}

} // namespace cws::base
