// lsdef and nodels: the listing tools, with xCAT's output formats (xcat-compat.md §6).

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>

#include "api/operations.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/remote.hpp"
#include "store/descriptions.hpp"
#include "store/selector.hpp"
#include "store/tables.hpp"
#include "store/templates.hpp"

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

/// How lsdef prints objects (DBobjectdefs.pm defls).
struct listing_form {
  bool short_form = false;
  bool stanza = false;
  bool compress = false;
  /// Several types: `Object name: x  (node)`.
  bool typed_header = false;
  std::string_view short_separator = "  ";
};

/// One object in lsdef's output: the short form (`name  (type)`, or `name:` in a stanza
/// file), or its header and `attr=value` lines.
void print_object(std::ostream& out, const store::listed_object& obj, object_type t,
                  const listing_form& f) {
  auto type = store::type_name(t);
  if (f.short_form) {
    if (f.stanza) {
      out << '\n' << obj.name << ":\n";
    } else {
      out << obj.name << f.short_separator << '(' << type << ")\n";
    }
    return;
  }
  if (f.stanza) {
    out << '\n' << obj.name << ":\n    objtype=" << type << '\n';
  } else if (f.typed_header) {
    out << "Object name: " << obj.name << "  (" << type << ")\n";
  } else if (!f.compress) {
    out << "Object name: " << obj.name << '\n';
  }
  for (const auto& [k, v] : obj.attrs) {
    if (f.compress) {
      out << obj.name << ": " << k << '=' << v << '\n';
    } else {
      out << "    " << k << '=' << v << '\n';
    }
  }
}

/// lsdef over clusterwsd (a caller who cannot open the store): the objects as the daemon
/// lists them (lsdef -l), then -i, -w and -z applied here by the direct path's own rules, and
/// printed by the same formatter.
int lsdef_remote(const remote& daemon, const std::vector<object_type>& types,
                 const std::string& spec, const std::vector<std::string>& only,
                 const std::vector<store::selector>& where, const listing_form& form, bool all,
                 io& streams) {
  int rc = 0;
  if (form.stanza) {
    streams.out << "# <xCAT data object stanza file>\n";
  }
  auto fail = [&](const std::string& message) {
    streams.err << "Error: " << message << '\n';
    rc = 1;
  };
  for (auto t : types) {
    store::listing found;
    std::vector<std::string> names;
    if (spec.empty()) {
      names = daemon.names(t);
      if (names.empty()) {
        if (!all) {
          fail("Could not get objects of type '" + std::string{store::type_name(t)} + "'.");
        }
        continue;
      }
    }
    auto wanted = store::wanted_attributes(t, only.empty() ? nullptr : &only, found.errors);
    if (spec.empty() && form.short_form && where.empty() && found.errors.empty()) {
      for (auto& n : names) {
        found.objects.push_back({std::move(n), {}}); // the names are all it prints
      }
    } else if (spec.empty()) {
      // every object, asked for in batches of names that keep each request short
      for (size_t i = 0; i < names.size();) {
        std::string batch;
        for (; i < names.size() && (batch.empty() || batch.size() + names[i].size() < 4000); ++i) {
          batch += (batch.empty() ? "" : ",") + names[i];
        }
        auto part = daemon.objects(t, batch);
        for (auto& o : part.objects) {
          found.objects.push_back(std::move(o));
        }
      }
    } else {
      auto part = daemon.objects(t, spec);
      found.objects = std::move(part.objects);
      found.errors.insert(found.errors.end(), part.errors.begin(), part.errors.end());
    }
    for (const auto& e : found.errors) {
      fail(e);
    }
    for (auto& obj : found.objects) {
      if (form.stanza && t == object_type::node) {
        strip_xcatdefaults(obj.attrs); // as lsdef -z reads the store
      }
      if (form.short_form && spec.empty() && where.empty()) {
        print_object(streams.out, obj, t, form);
      } else if (store::select_attributes(obj.attrs, only.empty() ? nullptr : &wanted, where)) {
        print_object(streams.out, obj, t, form);
      }
    }
  }
  return rc;
}

/// Over clusterwsd masked attributes read "********": a selection on one is refused, as the
/// daemon refuses it in a noderange, rather than tested against the mask (docs/security.md N1).
void refuse_masked_selections(const std::vector<store::selector>& sels) {
  for (const auto& s : sels) {
    if (store::is_masked_attribute(s.attribute())) {
      throw std::runtime_error("The selection tests '" + s.attribute()
                               + "', whose value only root may read.");
    }
  }
}

/// lsdef --nics: the nic attributes xCAT's processArgs puts in -i.
constexpr std::string_view nic_attributes
  = "nicips,nichostnamesuffixes,nichostnameprefixes,nictypes,niccustomscripts,nicnetworks,"
    "nicaliases,nicextraparams,nicdevices";

/// lsdef -t TYPES -h [-i ATTRS]: the attributes of each type with their descriptions,
/// sorted by name (DBobjectdefs.pm defls); `nicips.eth0` names `nicips`.
int describe_attributes(const parsed_args& args, io& streams) {
  std::vector<std::string> only;
  for (const auto& i : args.all("i")) {
    for (auto& a : base::split_list(i)) {
      only.push_back(a.rfind("nic", 0) == 0 ? a.substr(0, a.find('.')) : a);
    }
  }
  for (const auto& name : base::split_list(args.value("t"))) {
    auto t = parse_object_type(name);
    if (t == object_type::site) {
      if (!only.empty()) {
        streams.err << "Warning: It is not supported to list the description of some specific "
                       "site attributes, displaying the description for all site attributes "
                       "instead.\n";
      }
      streams.out << "\nThere can only be one xCAT site definition. This definition consists \n"
                     "of an unlimited list of user-defined attributes and values that represent \n"
                     "global settings for the whole cluster. The site attributes clusterws reads \n"
                     "are listed in docs/configuration.md and docs/cli.md.\n";
      continue;
    }
    if (only.empty()) {
      streams.out << "The valid attribute names for object type '" << name << "' are:\n";
    }
    streams.out << "Attribute          Description\n\n";
    std::vector<std::string> lines;
    for (const auto& d : store::attribute_descriptions(t)) {
      if (!only.empty() && std::find(only.begin(), only.end(), d.attr) == only.end()) {
        continue;
      }
      lines.push_back(std::string{d.attr} + ':' + (d.attr.size() < 7 ? "\t\t" : "\t")
                      + std::string{d.text});
    }
    std::sort(lines.begin(), lines.end());
    for (size_t i = 0; i < lines.size(); ++i) {
      streams.out << (i > 0 ? "\n\n" : "") << lines[i];
    }
    streams.out << '\n';
  }
  return 0;
}

} // namespace

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

int lsdef(const std::vector<std::string>& argv_in, io& streams) {
  auto argv = argv_in;
  auto templates = base::take_optional_value(argv, "template");
  auto spec_options = definition_options("toiw", "lsczSaV");
  spec_options.long_flags.push_back("nics");
  auto args = parse_args(argv, spec_options);
  if (args.has("help") && args.values.count("t") > 0) {
    return describe_attributes(args, streams);
  }
  if (args.has("help")) {
    streams.out
      << "Usage: lsdef [-t TYPES | -a] [-o NAMES | NODERANGE] [-l | -s | -z] [-i ATTRS [-c]]\n"
         "             [-w ATTR==VAL ...] [-S]\n"
         "       lsdef [-t TYPES | -a] [-l | -s | -z] [-i ATTRS [-c]] --template [NAMES]\n"
         "Lists object definitions (default type node; no names: all objects, short form).\n"
         "  -t TYPES  node, group, network, osimage, policy, site (comma list)\n"
         "  -a        every type\n"
         "  -l        long form: Object name: X, then attr=value lines\n"
         "  -s        short form: name  (type)\n"
         "  -i ATTRS  only these attributes, shown even when empty; -c: one line each\n"
         "  --nics    the nic attributes (nicips.eth0=..., as -i nicips,nictypes,...)\n"
         "  -t TYPES -h [-i ATTRS]  the attributes of the types, with their descriptions\n"
         "  -z        stanza form\n"
         "  -w EXPR   only objects where attr==val, attr!=val, attr=~re or attr!~re\n"
         "  -S        include hidden nodes\n"
         "  --template [NAMES]  xCAT's shipped object templates instead (all, or these)\n"
         "  --home DIR state directory\n";
    return 0;
  }
  if (args.has("l") && args.has("s")) {
    throw usage_error("The flags '-l' and '-s' cannot be used together.");
  }
  if (args.has("nics") && args.values.count("i") > 0) {
    throw usage_error("The flags '-i' and '--nics' cannot be used together.");
  }
  if (args.has("nics")) { // xCAT's processArgs: --nics is -i with the nic attributes
    args.values["i"] = {std::string{nic_attributes}};
  }
  if (args.has("c") && args.values.count("i") == 0) {
    throw usage_error("The flags '-c' and '-i' must be used together.");
  }
  if (args.has("a") && args.values.count("t") > 0) {
    throw usage_error("The flags '-a' and '-t' cannot be used together.");
  }
  if (args.positional.size() > 1) {
    throw usage_error("Unexpected argument '" + args.positional.back() + "'.");
  }
  std::string spec = args.value("o", args.positional.empty() ? "" : args.positional.front());
  if (!spec.empty() && (args.has("a") || templates)) {
    throw usage_error(templates ? "Cannot combine '--template' with object names: give the "
                                  "template names to --template."
                                : "Cannot use '-a' with '-o', a noderange or file input.");
  }
  std::vector<object_type> types;
  if (args.has("a")) {
    types = {object_type::node,    object_type::group,  object_type::network,
             object_type::osimage, object_type::policy, object_type::site};
  } else {
    for (const auto& t : base::split_list(args.value("t", "node"))) {
      types.push_back(parse_object_type(t));
    }
  }
  auto where = parse_where(args.all("w"));
  std::vector<std::string> only;
  for (const auto& i : args.all("i")) {
    for (auto& a : base::split_list(i)) {
      only.push_back(std::move(a));
    }
  }
  const std::string& named = templates ? *templates : spec;
  listing_form form;
  form.stanza = args.has("z");
  form.compress = args.has("c");
  form.short_form
    = args.has("s") || (named.empty() && !args.has("l") && only.empty() && !form.stanza);
  form.typed_header = types.size() > 1;
  form.short_separator = args.has("a") ? " " : "  "; // xCAT's lsdef -a: `name (type)`

  if (auto socket = daemon_socket(store::home::resolve(args.value("home")))) {
    // not root, and the store is root's: the same listing from clusterwsd
    if (templates || (args.has("S") && spec.empty())) {
      throw std::runtime_error(std::string{templates ? "--template" : "-S"}
                               + " needs root: users other than root list the database's "
                                 "objects through clusterwsd, which does not offer it.");
    }
    refuse_masked_selections(where);
    return lsdef_remote(remote{*socket}, types, spec, only, where, form, args.has("a"), streams);
  }
  auto s = session::open(args);
  auto txn = s.db->read();
  store::cluster_view view{txn, !form.stanza}; // -z: without the xcatdefaults postscripts
  int rc = 0;
  if (form.stanza) {
    streams.out << "# <xCAT data object stanza file>\n";
  }
  auto fail = [&](const std::string& message) {
    streams.err << "Error: " << message << '\n';
    rc = 1;
  };
  for (auto t : types) {
    store::listing found;
    if (templates) {
      found = store::list_templates(view, t, base::split_list(*templates),
                                    only.empty() ? nullptr : &only, where);
      if (templates->empty() && found.objects.empty() && found.errors.empty() && !args.has("a")) {
        fail("Could not find any object definition templates of type '"
             + std::string{store::type_name(t)} + "'.");
      }
    } else {
      auto names = spec.empty() ? all_names(view, t, args.has("S")) : s.names(t, spec);
      if (!spec.empty() && names.empty() && t == object_type::node) {
        // a noderange that names no node (a dynamic group nothing matches): xCAT's
        // processArgs refuses it rather than list nothing
        fail(args.values.count("o") > 0 ? std::string{"No object names were provided."}
                                        : "No node in '" + spec + "', check the noderange syntax.");
        continue;
      }
      if (spec.empty() && names.empty()) {
        if (!args.has("a")) { // xCAT's -a skips the types without objects
          fail("Could not get objects of type '" + std::string{store::type_name(t)} + "'.");
        }
        continue;
      }
      found = store::list_objects(view, t, names, only.empty() ? nullptr : &only, where);
    }
    for (const auto& e : found.errors) {
      fail(e);
    }
    if (templates && !found.errors.empty()) {
      continue; // xCAT lists no template when one is missing
    }
    for (const auto& obj : found.objects) {
      print_object(streams.out, obj, t, form);
    }
  }
  return rc;
}

int nodels(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, definition_options("", "HSb"));
  if (args.has("help")) {
    streams.out << "Usage: nodels [-b] [-H] [-S] [NODERANGE] [table.column | selector ...]\n"
                   "Lists the nodes of a noderange (default all), ASCII-sorted.\n"
                   "  table.column  show that value (also groups, tags, mgt, or an attribute)\n"
                   "  selector      keep nodes where table.column==|!=|=~|!~ value\n"
                   "  -b, --blame   name the group a value is inherited from\n"
                   "  -H            always label values with their column\n"
                   "  -S            include hidden nodes\n"
                   "  --home DIR    state directory\n";
    return 0;
  }
  // not root, and the store is root's: the nodes and values come from clusterwsd
  auto socket = daemon_socket(store::home::resolve(args.value("home")));
  if (socket && (args.has("b") || args.has("S"))) {
    throw std::runtime_error(std::string{args.has("b") ? "-b" : "-S"}
                             + " needs root: users other than root list nodes through "
                               "clusterwsd, which does not offer it.");
  }
  std::optional<session> s;
  std::optional<store::read_txn> txn;
  std::optional<store::cluster_view> view;
  std::optional<remote> daemon;
  size_t max_regex = store::noderange_options{}.max_regex;
  std::vector<std::string> nodes;
  size_t first_col = 0;
  std::string range = args.positional.empty() ? std::string{} : args.positional.front();
  if (socket) {
    daemon.emplace(*socket);
    nodes = daemon->nodels(range);
    first_col = args.positional.empty() ? 0 : 1;
  } else {
    s.emplace(session::open(args));
    txn.emplace(s->db->read());
    view.emplace(*txn);
    max_regex = s->noderange.max_regex;
    if (!args.positional.empty()) {
      auto r
        = store::expand_noderange(range, *view, api::noderange_options_for(*view, s->noderange));
      if (!r.missing.empty()) {
        streams.err << "Error: " << store::missing_nodes_message(r.missing) << '\n';
        return 1;
      }
      nodes = std::move(r.nodes);
      first_col = 1;
    } else {
      nodes = view->nodes();
    }
  }
  struct column {
    std::string label;
    std::string attr;
  };
  std::vector<column> cols;
  bool whole_table = false;
  std::vector<store::selector> sels;
  int rc = 0;
  for (size_t i = first_col; i < args.positional.size(); ++i) {
    const auto& a = args.positional[i];
    bool is_selector = a.find("==") != std::string::npos || a.find("!=") != std::string::npos
                       || a.find("=~") != std::string::npos || a.find("!~") != std::string::npos;
    if (is_selector) {
      if (auto sel = store::selector::parse(a, max_regex)) {
        sels.push_back(std::move(*sel));
        continue;
      }
    } else if (const auto* t = store::find_table(a); t && t->type == object_type::node) {
      // a table name: each of its columns clusterws keeps, always labelled (tabutils.pm)
      whole_table = true;
      for (const auto& c : t->columns) {
        if (!c.sources.empty()) {
          cols.push_back({t->name + "." + c.name, std::string{c.sources.front().attr}});
        }
      }
      continue;
    } else if (auto attr = store::attribute_for_column(a)) {
      cols.push_back({a, std::string{*attr}});
      continue;
    }
    streams.err << "Error: " << a << " not a valid table.column description\n";
    rc = 1;
  }
  if (daemon) {
    refuse_masked_selections(sels);
  }
  bool label = args.has("H") || whole_table || cols.size() + sels.size() >= 2;
  // over clusterwsd: the nodes' values as lsdef shows them (inherited, expressions evaluated)
  std::map<std::string, store::attr_map> remote_values;
  if (daemon && (!cols.empty() || !sels.empty()) && !nodes.empty()) {
    for (size_t i = 0; i < nodes.size();) {
      std::string batch;
      for (; i < nodes.size() && (batch.empty() || batch.size() + nodes[i].size() < 4000); ++i) {
        batch += (batch.empty() ? "" : ",") + nodes[i];
      }
      for (auto& o : daemon->objects(object_type::node, batch).objects) {
        strip_xcatdefaults(o.attrs); // an attribute's own value, as the store holds it
        remote_values[o.name] = std::move(o.attrs);
      }
    }
  }
  auto value = [&](const std::string& n, std::string_view attr, std::string& group) {
    if (!daemon) {
      return view->attribute(n, attr, group);
    }
    const auto& attrs = remote_values[n];
    auto it = attrs.find(std::string{attr});
    return it == attrs.end() ? std::string{} : it->second;
  };
  for (const auto& n : nodes) {
    if (!daemon && !args.has("S") && view->hidden(n)) {
      continue; // (clusterwsd leaves hidden nodes out itself)
    }
    bool pass = std::all_of(sels.begin(), sels.end(), [&](const store::selector& sel) {
      std::string ignored;
      return sel.matches(value(n, sel.attribute(), ignored));
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
      std::string group;
      streams.out << value(n, c.attr, group);
      if (args.has("b") && !group.empty()) {
        streams.out << " (inherited from group " << group << ')'; // tabutils.pm nodels
      }
      streams.out << '\n';
    }
  }
  return rc;
}

} // namespace cws::cli
