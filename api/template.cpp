#include "api/template.hpp"

#include "api/passwords.hpp"
#include "base/published_file.hpp"
#include "store/tables.hpp"

namespace cws::api {

namespace {

using part = compiled_template::part;

struct parser {
  const template_limits& limits;
  const include_reader& read;
  size_t total = 0;
  std::vector<part> parts;

  void text(std::string_view t) {
    if (t.empty()) {
      return;
    }
    if (!parts.empty() && parts.back().what == part::kind::text) {
      parts.back().text += t;
    } else {
      part p;
      p.text = std::string{t};
      parts.push_back(std::move(p));
    }
  }

  static size_t line_of(std::string_view s, size_t pos) {
    size_t n = 1;
    for (size_t i = 0; i < pos && i < s.size(); ++i) {
      n += s[i] == '\n';
    }
    return n;
  }

  [[noreturn]] static void fail(const std::filesystem::path& origin, std::string_view s, size_t pos,
                                const std::string& what) {
    throw template_error{origin.string() + ":" + std::to_string(line_of(s, pos)) + ": " + what};
  }

  /// `a:b:rest` as xCAT's `([^:]+):([^:]+):([^#]+)`.
  static bool three(std::string_view args, part& p) {
    auto c1 = args.find(':');
    if (c1 == std::string_view::npos || c1 == 0) {
      return false;
    }
    auto c2 = args.find(':', c1 + 1);
    if (c2 == std::string_view::npos || c2 == c1 + 1 || c2 + 1 >= args.size()) {
      return false;
    }
    p.table = std::string{args.substr(0, c1)};
    p.key = std::string{args.substr(c1 + 1, c2 - c1 - 1)};
    p.column = std::string{args.substr(c2 + 1)};
    return true;
  }

  void parse(std::string_view s, const std::filesystem::path& origin, size_t depth) {
    total += s.size();
    if (total > limits.max_bytes) {
      throw template_error{origin.string() + ": the template and its includes pass "
                           + std::to_string(limits.max_bytes) + " bytes (template_max_bytes)"};
    }
    size_t at = 0;
    while (at < s.size()) {
      auto hash = s.find('#', at);
      if (hash == std::string_view::npos) {
        text(s.substr(at));
        return;
      }
      text(s.substr(at, hash - at));
      auto rest = s.substr(hash);
      // a directive with arguments: `#NAME:args#`, args on one line without '#'
      auto with_args = [&](std::string_view name, std::string_view& args) {
        if (rest.substr(0, name.size()) != name) {
          return false;
        }
        auto end = rest.find_first_of("#\n", name.size());
        if (end == std::string_view::npos || rest[end] != '#') {
          fail(origin, s, hash,
               "unterminated " + std::string{name.substr(0, name.size() - 1)} + "# directive");
        }
        args = rest.substr(name.size(), end - name.size());
        at = hash + end + 1;
        return true;
      };
      std::string_view args;
      part p;
      if (rest.substr(0, 10) == "#HOSTNAME#" || rest.substr(0, 11) == "#SHORTNAME#") {
        p.what = rest[1] == 'H' ? part::kind::hostname : part::kind::shortname;
        at = hash + (rest[1] == 'H' ? 10 : 11);
        parts.push_back(std::move(p));
      } else if (with_args("#COMMAND:", args)) {
        fail(origin, s, hash,
             "#COMMAND# is not supported: clusterws never runs a template's command on the "
             "management node (write its output into the template or an #INCLUDE# file)");
      } else if (with_args("#TABLEBLANKOKAY:", args) || with_args("#TABLE:", args)
                 || with_args("#CRYPT:", args)) {
        p.what = rest[1] == 'C' ? part::kind::crypt : part::kind::table;
        p.blank_ok = rest.substr(0, 15) == "#TABLEBLANKOKAY";
        if (!three(args, p)) {
          fail(origin, s, hash, "malformed directive (want #TABLE:table:key:column#)");
        }
        parts.push_back(std::move(p));
      } else if (with_args("#CWSVAR:", args)) {
        p.what = part::kind::variable;
        p.text = std::string{args};
        parts.push_back(std::move(p));
      } else if (with_args("#INCLUDE:", args)) {
        if (args.empty()) {
          fail(origin, s, hash, "#INCLUDE# names no file");
        }
        if (depth >= limits.max_depth) {
          fail(origin, s, hash,
               "#INCLUDE# nested deeper than " + std::to_string(limits.max_depth)
                 + " levels (template_include_depth)");
        }
        std::filesystem::path file{std::string{args}};
        if (file.is_relative()) {
          file = origin.parent_path() / file;
        }
        auto included = read(file);
        parse(included, file, depth + 1);
      } else {
        text("#"); // any other '#': text (comments, unsupported xCAT directives)
        at = hash + 1;
      }
    }
  }
};

} // namespace

include_reader file_reader(size_t max_bytes) {
  return [max_bytes](const std::filesystem::path& path) {
    std::string out;
    bool exists = false;
    if (auto ec = base::read_file(path, max_bytes, out, &exists)) {
      throw template_error{"cannot read " + path.string() + ": " + ec.message()};
    }
    if (!exists) {
      throw template_error{"cannot read " + path.string() + ": No such file or directory"};
    }
    return out;
  };
}

compiled_template compiled_template::parse(std::string_view text,
                                           const std::filesystem::path& origin,
                                           const template_limits& limits,
                                           const include_reader& read) {
  parser p{limits, read, 0, {}};
  p.parse(text, origin, 0);
  compiled_template t;
  t.parts_ = std::move(p.parts);
  return t;
}

size_t compiled_template::directives() const noexcept {
  size_t n = 0;
  for (const auto& p : parts_) {
    n += p.what != part::kind::text;
  }
  return n;
}

size_t compiled_template::bytes() const noexcept {
  size_t n = sizeof(*this);
  for (const auto& p : parts_) {
    n += sizeof(p) + p.text.capacity() + p.table.capacity() + p.key.capacity()
         + p.column.capacity();
  }
  return n;
}

std::string compiled_template::render(std::string_view node, const template_values& values) const {
  std::string out;
  for (const auto& p : parts_) {
    switch (p.what) {
      case part::kind::text: out += p.text; break;
      case part::kind::hostname: out += node; break;
      case part::kind::shortname: out += node.substr(0, node.find('.')); break;
      case part::kind::variable: out += values.variable(p.text); break;
      case part::kind::table:
      case part::kind::crypt: {
        bool this_node = p.key == "$NODE" || p.key == "THISNODE";
        std::optional<std::string> v;
        if (p.what == part::kind::crypt) {
          v = values.crypted(p.table, p.key, p.column);
        } else if (this_node) {
          v = values.node_column(p.table, p.column);
        } else {
          v = values.row_column(p.table, p.key, p.column);
        }
        if ((!v || v->empty()) && !p.blank_ok) {
          // Template.pm's tabdb words
          throw template_error{"Unable to find requested " + p.column + " from " + p.table
                               + ", with " + (this_node ? "node=" + std::string{node} : p.key)};
        }
        if (v) {
          out += *v;
        }
        break;
      }
    }
  }
  return out;
}

store_template_values::store_template_values(const store::cluster_view& view, std::string node,
                                             std::map<std::string, std::string> variables)
    : view_(view), node_(std::move(node)), variables_(std::move(variables)) {
  // nop
}

std::optional<std::string> store_template_values::node_column(std::string_view table,
                                                              std::string_view column) const {
  const auto* t = store::find_table(table);
  if (t == nullptr) {
    return std::nullopt;
  }
  auto idx = t->column(column);
  auto row = store::node_row(view_, *t, node_);
  if (!idx || !row || !(*row)[*idx]) {
    return std::nullopt;
  }
  return *(*row)[*idx];
}

std::optional<std::string> store_template_values::row_column(std::string_view table,
                                                             std::string_view keys,
                                                             std::string_view column) const {
  const auto* t = store::find_table(table);
  store::key_values kv;
  if (t == nullptr || !store::parse_key_values(keys, kv).empty()
      || !store::check_columns(*t, kv, {}).empty()) {
    return std::nullopt;
  }
  auto idx = t->column(column);
  if (!idx) {
    return std::nullopt;
  }
  std::optional<std::string> found;
  store::scan_rows(view_, *t, true, [&](std::string_view, store::table_row&& row) {
    if (!found && store::row_matches(*t, row, kv) && row[*idx]) {
      found = *row[*idx];
    }
  });
  return found;
}

std::optional<std::string> store_template_values::crypted(std::string_view table,
                                                          std::string_view keys,
                                                          std::string_view column) const {
  // the one #CRYPT# function is api/passwords': only the passwd table's key=system row, so a
  // template can never hand an API user's hash (or any other table's secret) to a node
  store::key_values kv;
  if (table != "passwd" || column != "password" || !store::parse_key_values(keys, kv).empty()) {
    return std::nullopt;
  }
  std::string key;
  std::string username;
  for (const auto& [k, v] : kv) {
    if (k == "key") {
      key = v;
    } else if (k == "username") {
      username = v;
    } else {
      return std::nullopt;
    }
  }
  auto hash = system_password_hash(view_.txn(), key, username, nullptr);
  if (hash.empty()) {
    return std::nullopt;
  }
  return hash;
}

std::string store_template_values::variable(std::string_view name) const {
  auto it = variables_.find(std::string{name});
  return it == variables_.end() ? std::string{} : it->second;
}

std::string template_platform(std::string_view os) {
  for (const char* p : {"debian", "ubuntu", "sles"}) {
    if (os.substr(0, std::string_view{p}.size()) == p) {
      return p;
    }
  }
  return "rh";
}

std::optional<std::filesystem::path>
find_template_file(const std::vector<std::filesystem::path>& dirs, std::string_view profile,
                   std::string_view os, std::string_view arch) {
  std::string o{os};
  auto major = o.substr(0, o.find('.'));
  auto name = major;
  while (!name.empty() && name.back() >= '0' && name.back() <= '9') {
    name.pop_back();
  }
  std::string p{profile};
  std::string a{arch};
  std::vector<std::string> names{
    p + "." + o + "." + a, p + "." + major + "." + a, p + "." + name + "." + a, p + "." + a,
    p + "." + o,           p + "." + major,           p + "." + name,           p};
  for (const auto& dir : dirs) {
    for (const auto& n : names) {
      auto file = dir / (n + ".tmpl");
      std::error_code ec;
      if (!n.empty() && n.back() != '.' && std::filesystem::is_regular_file(file, ec)) {
        return file;
      }
    }
  }
  return std::nullopt;
}

} // namespace cws::api
