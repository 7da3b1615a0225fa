#include "store/stanza.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "base/text.hpp"
#include "store/schema.hpp"

namespace cws::store {

namespace {

using attr_list = std::vector<std::pair<std::string, std::string>>;

constexpr std::string_view default_prefix = "default-";

/// A value as xCAT's readFileInput keeps it: trimmed, then one leading and one trailing
/// double quote dropped with the blanks inside them (`groups="all, compute"`).
std::string unquote(std::string_view v) {
  v = base::trim(v);
  if (!v.empty() && v.front() == '"') {
    v = base::trim(v.substr(1));
  }
  if (!v.empty() && v.back() == '"') {
    v = base::trim(v.substr(0, v.size() - 1));
  }
  return std::string{v};
}

/// `line` for an error message: at most 60 characters, controls shown as `?`.
std::string shown(std::string_view line) {
  std::string out{line.substr(0, 60)};
  for (auto& c : out) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      c = '?';
    }
  }
  return line.size() > 60 ? out + "..." : out;
}

void set_attr(attr_list& attrs, std::string name, std::string value) {
  auto it
    = std::find_if(attrs.begin(), attrs.end(), [&](const auto& a) { return a.first == name; });
  if (it != attrs.end()) {
    attrs.erase(it);
  }
  attrs.emplace_back(std::move(name), std::move(value));
}

class parser {
 public:
  stanza_input run(std::string_view text) {
    size_t number = 0;
    for (size_t pos = 0; pos < text.size() && !full();) {
      auto end = text.find('\n', pos);
      if (end == std::string_view::npos) {
        end = text.size();
      }
      line(text.substr(pos, end - pos), ++number);
      pos = end + 1;
    }
    finish();
    check_duplicates();
    return std::move(in_);
  }

 private:
  bool full() {
    if (in_.errors.size() < max_stanza_errors) {
      return false;
    }
    in_.errors.push_back("Too many errors in the stanza input; the first "
                         + std::to_string(max_stanza_errors) + " are shown.");
    return true;
  }

  void error(size_t number, const std::string& what) {
    in_.errors.push_back("Line " + std::to_string(number) + " of the stanza input " + what);
  }

  void line(std::string_view l, size_t number) {
    if (l.size() > max_stanza_line) {
      error(number, "is longer than " + std::to_string(max_stanza_line) + " characters.");
      return;
    }
    auto t = base::trim(l);
    if (t.empty() || t.front() == '#') {
      return;
    }
    // `=` first: a value may end in `:` (xCAT would take `usercomment=see:` for a header)
    if (auto eq = t.find('='); eq != std::string_view::npos) {
      attribute(std::string{base::trim(t.substr(0, eq))}, unquote(t.substr(eq + 1)), number);
    } else if (t.back() == ':') {
      header(std::string{base::trim(t.substr(0, t.size() - 1))}, number);
    } else {
      error(number, "is neither a 'name:' header nor an 'attr=value' line: '" + shown(t) + "'.");
    }
  }

  void header(std::string name, size_t number) {
    finish();
    if (name.compare(0, default_prefix.size(), default_prefix) == 0) {
      auto type = name.substr(default_prefix.size());
      if (!parse_type(type)) {
        error(number,
              "names an unknown type: Type '" + type + "' is not a valid xCAT object type.");
      }
      default_type_ = std::move(type);
      return;
    }
    current_ = stanza{std::move(name), {}, {}, number};
  }

  void attribute(std::string name, std::string value, size_t number) {
    if (default_type_) {
      if (name == "objtype") {
        return; // a default stanza applies to its own type
      }
      auto& d = defaults_[*default_type_];
      if (value.empty()) {
        // a blank default turns the default off (xcatstanzafile(5))
        d.erase(std::remove_if(d.begin(), d.end(), [&](const auto& a) { return a.first == name; }),
                d.end());
      } else {
        set_attr(d, std::move(name), std::move(value));
      }
      return;
    }
    if (!current_) {
      error(number, "sets an attribute before the first 'name:' header.");
      return;
    }
    if (name == "objtype") {
      current_->type = std::move(value);
    } else {
      current_->attrs.emplace_back(std::move(name), std::move(value));
    }
  }

  /// Ends the stanza being read: the defaults of its type go in front of its own values.
  void finish() {
    default_type_.reset();
    if (!current_) {
      return;
    }
    auto d = defaults_.find(current_->type);
    if (d != defaults_.end()) {
      attr_list merged;
      for (const auto& a : d->second) {
        bool own = std::any_of(current_->attrs.begin(), current_->attrs.end(),
                               [&](const auto& o) { return o.first == a.first; });
        if (!own) {
          merged.push_back(a);
        }
      }
      merged.insert(merged.end(), std::make_move_iterator(current_->attrs.begin()),
                    std::make_move_iterator(current_->attrs.end()));
      current_->attrs = std::move(merged);
    }
    in_.objects.push_back(std::move(*current_));
    current_.reset();
  }

  void check_duplicates() {
    std::map<std::pair<std::string_view, std::string_view>, size_t> seen;
    for (const auto& s : in_.objects) {
      auto key = std::make_pair(std::string_view{s.type}, std::string_view{s.name});
      auto [it, fresh] = seen.emplace(key, s.line);
      if (!fresh && in_.errors.size() < max_stanza_errors) {
        in_.errors.push_back("Only one stanza can exist for each object name: '" + s.name
                             + "' is defined on lines " + std::to_string(it->second) + " and "
                             + std::to_string(s.line) + ".");
      }
    }
  }

  stanza_input in_;
  std::optional<stanza> current_;
  /// Set while a `default-<type>:` stanza is read.
  std::optional<std::string> default_type_;
  std::map<std::string, attr_list, std::less<>> defaults_;
};

} // namespace

stanza_input parse_stanzas(std::string_view text) {
  return parser{}.run(text);
}

} // namespace cws::store
