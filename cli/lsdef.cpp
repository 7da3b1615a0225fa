// lsdef and nodels: the listing tools, with xCAT's output formats (xcat-compat.md §6).

#include <iostream>

#include "api/operations.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "store/selector.hpp"

namespace cws::cli {

namespace {

using store::object_type;

/// Every object name of type `t`, for listings without names (hidden nodes skipped).
std::vector<std::string> all_names(const store::cluster_view& view, object_type t, bool hidden) {
  if (t == object_type::site) {
    return {"clustersite"};
  }
  if (t == object_type::group) {
    return view.txn().group_names();
  }
  auto names = view.txn().names(t);
  if (t == object_type::node && !hidden) {
    names.erase(std::remove_if(names.begin(), names.end(),
                               [&](const std::string& n) { return view.hidden(n); }),
                names.end());
  }
  return names;
}

std::vector<store::selector> parse_where(const std::vector<std::string>& exprs) {
  std::vector<store::selector> out;
  for (const auto& w : exprs) {
    auto s = store::selector::parse(w, 1024, false);
    if (!s) {
      throw usage_error("Incorrect selection string specified with -w flag.");
    }
    out.push_back(std::move(*s));
  }
  return out;
}

} // namespace

int lsdef(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, definition_options("toiw", "lsczSaV"));
  if (args.has("help")) {
    streams.out
      << "Usage: lsdef [-t TYPES] [-o NAMES | NODERANGE] [-l | -s | -z] [-i ATTRS [-c]]\n"
         "             [-w ATTR==VAL ...] [-S]\n"
         "Lists object definitions (default type node; no names: all objects, short form).\n"
         "  -t TYPES  node, group, network, osimage, policy, site (comma list)\n"
         "  -l        long form: Object name: X, then attr=value lines\n"
         "  -s        short form: name  (type)\n"
         "  -i ATTRS  only these attributes, shown even when empty; -c: one line each\n"
         "  -z        stanza form\n"
         "  -w EXPR   only objects where attr==val, attr!=val, attr=~re or attr!~re\n"
         "  -S        include hidden nodes\n"
         "  --home DIR state directory\n";
    return 0;
  }
  if (args.has("l") && args.has("s")) {
    throw usage_error("The flags '-l' and '-s' cannot be used together.");
  }
  if (args.has("c") && args.values.count("i") == 0) {
    throw usage_error("The flags '-c' and '-i' must be used together.");
  }
  if (args.positional.size() > 1) {
    throw usage_error("Unexpected argument '" + args.positional.back() + "'.");
  }
  std::vector<object_type> types;
  for (const auto& t : base::split_list(args.value("t", "node"))) {
    types.push_back(parse_object_type(t));
  }
  std::string spec = args.value("o", args.positional.empty() ? "" : args.positional.front());
  auto where = parse_where(args.all("w"));
  std::vector<std::string> only;
  for (const auto& i : args.all("i")) {
    for (auto& a : base::split_list(i)) {
      only.push_back(std::move(a));
    }
  }
  bool stanza = args.has("z");
  bool short_form = args.has("s") || (spec.empty() && !args.has("l") && only.empty() && !stanza);
  bool typed_header = types.size() > 1;

  auto s = session::open(args);
  auto txn = s.db->read();
  store::cluster_view view{txn, !stanza}; // -z: without the xcatdefaults postscripts
  int rc = 0;
  if (stanza) {
    streams.out << "# <xCAT data object stanza file>\n";
  }
  for (auto t : types) {
    auto names = spec.empty() ? all_names(view, t, args.has("S")) : s.names(t, spec);
    if (spec.empty() && names.empty()) {
      streams.err << "Error: Could not get objects of type '" << store::type_name(t) << "'.\n";
      rc = 1;
      continue;
    }
    auto found = store::list_objects(view, t, names, only.empty() ? nullptr : &only, where);
    for (const auto& e : found.errors) {
      streams.err << "Error: " << e << '\n';
      rc = 1;
    }
    for (const auto& obj : found.objects) {
      if (short_form) {
        streams.out << obj.name << "  (" << store::type_name(t) << ")\n";
      } else if (args.has("c")) {
        for (const auto& [k, v] : obj.attrs) {
          streams.out << obj.name << ": " << k << '=' << v << '\n';
        }
      } else {
        if (stanza) {
          streams.out << '\n' << obj.name << ":\n    objtype=" << store::type_name(t) << '\n';
        } else {
          streams.out << "Object name: " << obj.name;
          if (typed_header) {
            streams.out << "  (" << store::type_name(t) << ')';
          }
          streams.out << '\n';
        }
        for (const auto& [k, v] : obj.attrs) {
          streams.out << "    " << k << '=' << v << '\n';
        }
      }
    }
  }
  return rc;
}

int nodels(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, definition_options("", "HS"));
  if (args.has("help")) {
    streams.out << "Usage: nodels [-H] [-S] [NODERANGE] [table.column | selector ...]\n"
                   "Lists the nodes of a noderange (default all), ASCII-sorted.\n"
                   "  table.column  show that value (also groups, tags, mgt, or an attribute)\n"
                   "  selector      keep nodes where table.column==|!=|=~|!~ value\n"
                   "  -H            always label values with their column\n"
                   "  -S            include hidden nodes\n"
                   "  --home DIR    state directory\n";
    return 0;
  }
  auto s = session::open(args);
  auto txn = s.db->read();
  store::cluster_view view{txn};
  std::vector<std::string> nodes;
  size_t first_col = 0;
  if (!args.positional.empty()) {
    auto r = store::expand_noderange(args.positional.front(), view,
                                     api::noderange_options_for(view, s.noderange));
    if (!r.missing.empty()) {
      streams.err << "Error: " << store::missing_nodes_message(r.missing) << '\n';
      return 1;
    }
    nodes = std::move(r.nodes);
    first_col = 1;
  } else {
    nodes = view.nodes();
  }
  struct column {
    std::string label;
    std::string attr;
  };
  std::vector<column> cols;
  std::vector<store::selector> sels;
  int rc = 0;
  for (size_t i = first_col; i < args.positional.size(); ++i) {
    const auto& a = args.positional[i];
    bool is_selector = a.find("==") != std::string::npos || a.find("!=") != std::string::npos
                       || a.find("=~") != std::string::npos || a.find("!~") != std::string::npos;
    if (is_selector) {
      if (auto sel = store::selector::parse(a, s.noderange.max_regex)) {
        sels.push_back(std::move(*sel));
        continue;
      }
    } else if (auto attr = store::attribute_for_column(a)) {
      cols.push_back({a, std::string{*attr}});
      continue;
    }
    streams.err << "Error: " << a << " not a valid table.column description\n";
    rc = 1;
  }
  bool label = args.has("H") || cols.size() + sels.size() >= 2;
  for (const auto& n : nodes) {
    if (!args.has("S") && view.hidden(n)) {
      continue;
    }
    bool pass = std::all_of(sels.begin(), sels.end(), [&](const store::selector& sel) {
      return sel.matches(view.attribute(n, sel.attribute()));
    });
    if (!pass) {
      continue;
    }
    if (cols.empty()) {
      streams.out << n << '\n';
    }
    for (const auto& c : cols) {
      streams.out << n << ": ";
      if (label) {
        streams.out << c.label << ": ";
      }
      streams.out << view.attribute(n, c.attr) << '\n';
    }
  }
  return rc;
}

} // namespace cws::cli
