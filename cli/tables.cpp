// xCAT's table tools over the object store (store/tables.hpp): tabdump, gettab, chtab and
// tabch, nodech, nodeadd, noderm, tabrestore, tabprune.

#include <algorithm>
#include <cctype>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include "api/audit_table.hpp"
#include "api/operations.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "store/error.hpp"
#include "store/selector.hpp"
#include "store/tables.hpp"

namespace cws::cli {

namespace {

using store::column_change;
using store::object_type;
using store::table_def;

const table_def& table_named(std::string_view name) {
  const auto* t = store::find_table(name);
  if (t == nullptr) {
    throw std::runtime_error("No such table: " + std::string{name});
  }
  return *t;
}

/// One `table.column<op>value` argument of chtab or nodech.
struct column_arg {
  const table_def* table = nullptr;
  column_change change;
};

/// xCAT's short names for columns (tabutils.pm %shortnames).
std::string expand_shortname(std::string name) {
  if (name == "groups" || name == "tags") {
    return "nodelist.groups";
  }
  if (name == "mgt") {
    return "nodehm.mgt";
  }
  return name;
}

/// Parses `table.column=value` (also `,=`, `+=` to add to a list and `^=` to remove).
/// @throws usage_error for another form.
column_arg parse_column_arg(const std::string& arg) {
  auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw usage_error("Malformed argument " + arg + " ignored.");
  }
  column_arg out;
  auto left = arg.substr(0, eq);
  out.change.value = arg.substr(eq + 1);
  if (left.back() == ',' || left.back() == '+') {
    out.change.mode = store::list_mode::append;
    left.pop_back();
  } else if (left.back() == '^') {
    out.change.mode = store::list_mode::remove;
    left.pop_back();
  }
  left = expand_shortname(left);
  auto dot = left.find('.');
  if (dot == std::string::npos) {
    throw usage_error(left + " not a valid table.column description");
  }
  out.table = &table_named(left.substr(0, dot));
  out.change.column = left.substr(dot + 1);
  if (!out.table->column(out.change.column)) {
    throw usage_error(left + " not a valid table.column description");
  }
  return out;
}

bool is_selection(const std::string& a) {
  auto eq = a.find('=');
  return a.find("==") == eq || a.find("!=") != std::string::npos
         || a.find("=~") != std::string::npos || a.find("!~") != std::string::npos;
}

/// Groups column changes by table, keeping the order of the tables' first mention.
std::vector<std::pair<const table_def*, std::vector<column_change>>>
by_table(const std::vector<column_arg>& args) {
  std::vector<std::pair<const table_def*, std::vector<column_change>>> out;
  for (const auto& a : args) {
    auto it
      = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == a.table; });
    if (it == out.end()) {
      out.emplace_back(a.table, std::vector<column_change>{});
      it = out.end() - 1;
    }
    it->second.push_back(a.change);
  }
  return out;
}

void print_columns_help(const table_def& t, std::ostream& out) {
  for (const auto& c : t.columns) {
    std::string desc;
    if (t.type == object_type::site) {
      desc = c.name == "key" ? "The setting's name." : c.name == "value" ? "Its value." : "";
    } else if (t.type == object_type::passwd) {
      desc = c.name == "key"        ? "xcat: the API users; ipmi: the BMC credentials; system: the "
                                      "nodes' root password."
             : c.name == "username" ? "The API user's name (ipmi, system: the account's)."
             : c.name == "password" ? "The crypt(3) hash of the API user's password (ipmi, "
                                      "system: as given, read by root only)."
                                    : "";
    } else if (!c.sources.empty()) {
      desc
        = "The "
          + std::string{store::type_name(t.type == object_type::node ? object_type::node : t.type)}
          + " attribute " + std::string{c.sources.front().attr} + ".";
    } else if (c.name == t.keys.front() || c.name == store::key_attribute(t.type)
               || c.name == "netname") {
      desc = "The object's name.";
    }
    if (desc.empty()) {
      desc = "Not kept by clusterws (always empty).";
    }
    out << c.name << ':' << (c.name.size() < 7 ? "\t\t" : "\t") << desc << '\n';
  }
}

constexpr std::string_view home_help
  = "  --home DIR state directory (default $CLUSTERWS_HOME or /var/lib/clusterws)\n";

/// The audit log clusterwsd writes for this home (`audit_log`; off: none).
std::filesystem::path audit_path(const session& s) {
  const auto& configured = s.settings.text("audit_log");
  if (configured == "off") {
    return {};
  }
  return configured.empty() ? s.home.audit_log() : std::filesystem::path{configured};
}

bool is_log_table(const std::string& name) {
  return name == "auditlog" || name == "eventlog";
}

/// tabdump of auditlog (the audit log's lines) or eventlog (no records: reventlog reads the
/// BMCs' SEL when asked), in Schema.pm's columns; `last` > 0: only the newest that many.
int dump_log_table(const std::string& table, const parsed_args& args, long last, io& streams) {
  auto s = session::open(args);
  const auto& columns = table == "auditlog" ? api::auditlog_columns() : api::eventlog_columns();
  std::vector<api::audit_row> rows;
  if (table == "auditlog") {
    if (auto path = audit_path(s); !path.empty()) {
      rows = api::read_audit_log(path);
    }
  }
  if (last > 0 && rows.size() > static_cast<size_t>(last)) {
    rows.erase(rows.begin(), rows.end() - last);
  }
  std::ofstream file;
  std::ostream* out = &streams.out;
  if (auto name = args.value("f"); !name.empty()) {
    file.open(name, std::ios::trunc);
    if (!file) {
      streams.err << "Error: Error on tabdump of " << table << " to " << name
                  << ". Unable to open the file for write. \n";
      return 1;
    }
    out = &file;
  }
  *out << '#' << base::join_list(columns) << '\n';
  for (const auto& r : rows) {
    *out << store::csv_line(r.row) << '\n';
  }
  out->flush();
  return *out ? 0 : 1;
}

} // namespace

int tabdump(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"wfn", "dv", {"home"}, {}, {{"lines", 'n'}}});
  if (args.has("help")) {
    streams.out << "Usage: tabdump [-d] [table]\n"
                   "       tabdump      [table]\n"
                   "       tabdump [-f <filename>]  [table]\n"
                   "       tabdump [-w attr==val [-w attr=~val] ...] [table]\n"
                   "       tabdump [-w attr==val [-w attr=~val] ...] [-f <filename>] [table]\n"
                   "       tabdump [-?|-h|--help]\n"
                   "Lists the tables, or shows one in CSV form (tabrestore reads it back).\n"
                << home_help;
    return 0;
  }
  if (args.positional.size() > 1) {
    throw usage_error("tabdump takes one table.");
  }
  if (!args.value("n").empty()
      && (args.positional.empty() || !is_log_table(args.positional.front()))) {
    throw usage_error("tabdump -n only supported for auditlog and eventlog tables");
  }
  if (!args.positional.empty() && is_log_table(args.positional.front()) && !args.has("d")) {
    long last = 0;
    if (auto n = args.value("n"); !n.empty()) {
      char* end = nullptr;
      last = std::strtol(n.c_str(), &end, 10);
      if (*end != '\0' || last < 1) {
        throw usage_error("tabdump -n takes a number of records, not '" + n + "'.");
      }
    }
    return dump_log_table(args.positional.front(), args, last, streams);
  }
  if (args.positional.empty()) {
    if (!args.value("f").empty()) {
      throw usage_error("table name missing from the command input. ");
    }
    for (const auto& t : store::table_catalog()) {
      if (args.has("d")) {
        streams.out << t.name << ':' << (t.name.size() < 7 ? "\t\t" : "\t") << t.description
                    << '\n';
      } else {
        streams.out << t.name << '\n';
      }
    }
    return 0;
  }
  const auto& t = table_named(args.positional.front());
  if (args.has("d")) {
    print_columns_help(t, streams.out);
    return 0;
  }
  std::vector<std::pair<size_t, store::selector>> where;
  for (const auto& w : args.all("w")) {
    auto sel = store::selector::parse(w, 1024, false);
    if (!sel || !t.column(sel->attribute())) {
      throw usage_error("Incorrect selection string specified with -w flag: " + w);
    }
    where.emplace_back(*t.column(sel->attribute()), std::move(*sel));
  }
  auto s = session::open(args);
  std::ofstream file;
  std::ostream* out = &streams.out;
  if (auto name = args.value("f"); !name.empty()) {
    file.open(name, std::ios::trunc);
    if (!file) {
      streams.err << "Error: Error on tabdump of " << t.name << " to " << name
                  << ". Unable to open the file for write. \n";
      return 1;
    }
    out = &file;
  }
  *out << '#';
  for (size_t i = 0; i < t.columns.size(); ++i) {
    *out << (i > 0 ? "," : "") << t.columns[i].name;
  }
  *out << '\n';
  auto txn = s.db->read();
  store::cluster_view view{txn};
  store::scan_rows(view, t, true, [&](std::string_view, store::table_row&& row) {
    for (const auto& [i, sel] : where) {
      if (!sel.matches(row[i].value_or(""))) {
        return;
      }
    }
    *out << store::csv_line(row) << '\n';
  });
  out->flush();
  return *out ? 0 : 1;
}

int gettab(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "H", {"home"}, {}, {{"with-fieldname", 'H'}}});
  if (args.has("help")) {
    streams.out << "Usage: gettab [-H|--with-fieldname] key=value,...  table.attribute ...\n"
                   "       gettab [-?|-h|--help]\n"
                << home_help;
    return 0;
  }
  if (args.positional.size() < 2) {
    throw usage_error("Usage: gettab [-H|--with-fieldname] key=value,...  table.attribute ...");
  }
  store::key_values keys;
  if (auto msg = store::parse_key_values(args.positional.front(), keys); !msg.empty()) {
    throw usage_error(msg);
  }
  std::vector<std::pair<const table_def*, std::string>> wanted;
  for (size_t i = 1; i < args.positional.size(); ++i) {
    auto spec = expand_shortname(args.positional[i]);
    auto dot = spec.find('.');
    if (dot == std::string::npos) {
      throw usage_error(spec + " not a valid table.column description");
    }
    const auto& t = table_named(spec.substr(0, dot));
    auto column = spec.substr(dot + 1);
    if (!t.column(column)) {
      throw usage_error(spec + " not a valid table.column description");
    }
    if (auto msg = store::check_columns(t, keys, {}); !msg.empty()) {
      streams.err << "Error: " << msg << '\n';
      return 1;
    }
    wanted.emplace_back(&t, column);
  }
  auto s = session::open(args);
  auto txn = s.db->read();
  store::cluster_view view{txn};
  bool terse = wanted.size() == 1 && !args.has("H");
  for (const auto& want : wanted) {
    const auto* t = want.first; // (structured bindings cannot be captured in C++17)
    const auto& column = want.second;
    bool done = false;
    store::scan_rows(view, *t, true, [&](std::string_view, store::table_row&& row) {
      if (done || !store::row_matches(*t, row, keys)) {
        return;
      }
      done = true; // the first matching row, as xCAT's getAttribs
      if (!terse) {
        streams.out << t->name << '.' << column << ": ";
      }
      streams.out << row[*t->column(column)].value_or("") << '\n';
    });
  }
  return 0;
}

int chtab(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "d", {"home"}, {}, {{"delete", 'd'}}});
  if (args.has("help")) {
    streams.out << "Usage: chtab [keycolname=keyvalue[,...]] [tablename.colname=newvalue] ...\n"
                   "       chtab [keycolname=keyvalue[,...]] [tablename.colname+=newvalue] ...\n"
                   "       chtab -d [keycolname=keyvalue[,...]] [tablename] ...\n"
                   "Changes (or adds) the rows with those keys; the same change lsdef shows.\n"
                   "  +=, ,=    add to a comma list; ^= removes from it\n"
                   "  -d        delete the matching rows\n"
                << home_help;
    return 0;
  }
  if (args.positional.size() < 2) {
    throw usage_error("Usage: chtab key=value[,...] table.column=value ... | chtab -d "
                      "key=value[,...] table ...");
  }
  store::key_values keys;
  if (auto msg = store::parse_key_values(args.positional.front(), keys); !msg.empty()) {
    throw usage_error(msg);
  }
  auto s = session::open(args);
  if (args.has("d")) {
    std::vector<const table_def*> tables;
    for (size_t i = 1; i < args.positional.size(); ++i) {
      if (args.positional[i].find_first_of(".=") != std::string::npos) {
        throw usage_error(". and = not valid in delete mode.");
      }
      tables.push_back(&table_named(args.positional[i]));
    }
    return report(store::apply(*s.db,
                               [&](store::write_txn& txn) {
                                 store::outcome o;
                                 for (const auto* t : tables) {
                                   o.count += store::delete_rows(txn, *t, keys);
                                 }
                                 return o;
                               }),
                  streams);
  }
  std::vector<column_arg> changes;
  for (size_t i = 1; i < args.positional.size(); ++i) {
    changes.push_back(parse_column_arg(args.positional[i]));
  }
  return report(store::apply(*s.db,
                             [&](store::write_txn& txn) {
                               store::outcome o;
                               for (const auto& [t, c] : by_table(changes)) {
                                 auto r = store::set_rows(txn, *t, keys, c);
                                 o.count += r.count;
                                 o.warnings.insert(o.warnings.end(), r.warnings.begin(),
                                                   r.warnings.end());
                               }
                               return o;
                             }),
                streams);
}

/// nodech and nodeadd: `add` creates the nodes of the noderange.
int change_nodes(const std::vector<std::string>& argv, io& streams, bool add) {
  std::string_view tool = add ? "nodeadd" : "nodech";
  auto args = parse_args(argv, {"", add ? "" : "d", {"home"}, {}, {{"delete", 'd'}}});
  if (args.has("help")) {
    if (add) {
      streams.out << "Usage: nodeadd <noderange> groups=<groupnames> [table.column=value] [...]\n";
    } else {
      streams.out << "Usage: nodech <noderange> table.column=value [...]\n"
                     "       nodech {-d | --delete} <noderange> <table> [...]\n"
                     "  ,= / ^=   add to / remove from a comma list; table.column==value,\n"
                     "            !=, =~ and !~ select the nodes changed\n";
    }
    streams.out << home_help;
    return 0;
  }
  if (args.positional.size() < 2) {
    throw usage_error(add ? "Usage: nodeadd <noderange> groups=<groupnames> [table.column=value]"
                          : "Usage: nodech <noderange> table.column=value [...]");
  }
  auto s = session::open(args);
  const auto& spec = args.positional.front();
  std::vector<std::string> nodes;
  if (add) {
    nodes = s.names(object_type::node, spec);
    if (auto msg = store::check_change_target(object_type::node, spec, nodes); !msg.empty()) {
      throw usage_error(msg);
    }
  } else {
    auto txn = s.db->read();
    store::cluster_view view{txn};
    auto r = store::expand_noderange(spec, view, api::noderange_options_for(view, s.noderange));
    if (!r.missing.empty()) {
      streams.err << "Error: " << store::missing_nodes_message(r.missing) << '\n';
      return 1;
    }
    nodes = std::move(r.nodes);
  }
  std::vector<const table_def*> deletes;
  std::vector<column_arg> changes;
  std::vector<std::pair<const table_def*, std::pair<size_t, store::selector>>> where;
  for (size_t i = 1; i < args.positional.size(); ++i) {
    const auto& a = args.positional[i];
    if (args.has("d")) {
      if (a.find_first_of(".=") != std::string::npos) {
        throw usage_error(". and = not valid in delete mode.");
      }
      deletes.push_back(&table_named(a));
    } else if (is_selection(a)) {
      auto sel = store::selector::parse(a, s.noderange.max_regex, false);
      auto left = sel ? expand_shortname(sel->attribute()) : std::string{};
      auto dot = left.find('.');
      const auto* t = dot == std::string::npos ? nullptr : store::find_table(left.substr(0, dot));
      if (t == nullptr || !t->column(left.substr(dot + 1))) {
        throw usage_error(a + " not a valid table.column description");
      }
      where.push_back({t, {*t->column(left.substr(dot + 1)), std::move(*sel)}});
    } else {
      changes.push_back(parse_column_arg(a));
    }
  }
  if (!where.empty()) { // the selections choose which nodes change, as xCAT's nodech
    auto txn = s.db->read();
    store::cluster_view view{txn};
    nodes.erase(std::remove_if(nodes.begin(), nodes.end(),
                               [&](const std::string& n) {
                                 for (const auto& [t, test] : where) {
                                   auto row = store::node_row(view, *t, n);
                                   auto v = row ? (*row)[test.first].value_or("") : "";
                                   if (!test.second.matches(v)) {
                                     return true;
                                   }
                                 }
                                 return false;
                               }),
                nodes.end());
  }
  auto tables = by_table(changes);
  if (add) {
    // nodelist first: it makes the nodes the other tables' rows belong to
    std::stable_partition(tables.begin(), tables.end(),
                          [](const auto& p) { return p.first->name == "nodelist"; });
    if (tables.empty() || tables.front().first->name != "nodelist") {
      throw usage_error("Usage: nodeadd <noderange> groups=<groupnames> [table.column=value]");
    }
    std::string upper;
    for (const auto& n : nodes) {
      if (std::any_of(n.begin(), n.end(), [](char c) { return std::isupper(c); })) {
        upper += (upper.empty() ? "" : ",") + n;
      }
    }
    if (!upper.empty()) {
      streams.err << "Warning: The node name '" << upper
                  << "' contains capital letters which may not be resolved correctly by the "
                     "dns server.\n";
    }
  }
  return report(store::apply(*s.db,
                             [&](store::write_txn& txn) {
                               store::outcome o;
                               for (const auto& n : nodes) {
                                 for (const auto* t : deletes) {
                                   o.count += store::delete_rows(txn, *t, {{t->keys.front(), n}});
                                 }
                               }
                               for (const auto& [t, c] : tables) {
                                 if (add && t->name == "nodelist") {
                                   // a new node is its nodelist row (with its groups, as mkdef
                                   // wants)
                                   for (const auto& n : nodes) {
                                     o.count += store::set_rows(txn, *t, {{"node", n}}, c).count;
                                   }
                                   continue;
                                 }
                                 if (t->type != object_type::node) {
                                   throw store::rejected{
                                     {{},
                                      {},
                                      {std::string{tool} + " changes node tables; " + t->name
                                       + " is not one (use chtab)."}}};
                                 }
                                 o.count += store::change_node_rows(txn, *t, nodes, c).count;
                               }
                               return o;
                             }),
                streams);
}

int nodech(const std::vector<std::string>& argv, io& streams) {
  return change_nodes(argv, streams, false);
}

int nodeadd(const std::vector<std::string>& argv, io& streams) {
  return change_nodes(argv, streams, true);
}

int noderm(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "", {"home"}, {}, {}});
  if (args.has("help")) {
    streams.out << "Usage:\n  noderm noderange\n  noderm [-?|-h|--help]\n"
                   "Removes the nodes from every table (as rmdef); none if any is missing.\n"
                << home_help;
    return 0;
  }
  if (args.positional.size() != 1) {
    throw usage_error("Usage: noderm noderange");
  }
  auto s = session::open(args);
  const auto& spec = args.positional.front();
  auto names = s.names(object_type::node, spec);
  if (auto msg = store::check_change_target(object_type::node, spec, names); !msg.empty()) {
    throw usage_error(msg);
  }
  return report(store::apply(*s.db,
                             [&](store::write_txn& txn) {
                               return store::remove_objects(txn, object_type::node, names);
                             }),
                streams);
}

int tabrestore(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "a", {"home"}, {}, {{"addrows", 'a'}}});
  if (args.has("help")) {
    streams.out << "Usage: tabrestore [-a] <tablename>.csv\n"
                   "Replaces the table's rows with the file's (tabdump output); -a adds them.\n"
                   "All or nothing: a bad line changes nothing.\n"
                << home_help;
    return 0;
  }
  if (args.positional.size() != 1) {
    throw usage_error("Usage: tabrestore [-a] <tablename>.csv");
  }
  const auto& path = args.positional.front();
  auto base = path.substr(path.find_last_of('/') + 1);
  auto name = base.substr(0, base.find('.'));
  const auto& t = table_named(name);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("Cannot open " + path + ".");
  }
  auto text = read_limited(in, store::max_csv_bytes, "tabrestore file");
  store::csv_table rows;
  if (auto msg = store::parse_csv(text, t, rows); !msg.empty()) {
    streams.err << "Error: " << msg << '\n';
    return 1;
  }
  auto s = session::open(args);
  return report(store::apply(*s.db,
                             [&](store::write_txn& txn) {
                               return store::restore_rows(txn, t, rows, args.has("a"));
                             }),
                streams);
}

int tabprune(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"pdin", "aV", {"home"}, {}, {}});
  if (args.has("help")) {
    streams.out << "Usage: tabprune <tablename> [-V] -a\n"
                   "       tabprune <tablename> [-V] -n <# of records>\n"
                   "       tabprune <tablename> [-V] -i <recid>\n"
                   "       tabprune <tablename> [-V] -p <percent>\n"
                   "       tabprune <tablename> [-V] -d <# of days>\n"
                   "       tabprune [-h|--help]\n"
                   "       tables supported:eventlog,auditlog\n"
                   "auditlog is the audit log clusterwsd writes (pruned in place, under its\n"
                   "lock); eventlog has no records (reventlog reads each BMC's SEL).\n";
    return 0;
  }
  if (args.positional.size() != 1) {
    streams.err << "Error: Table name required.\n";
    return 1;
  }
  const auto& table = args.positional.front();
  if (table != "eventlog" && table != "auditlog") {
    streams.err << "Error: Table " << table
                << " not supported, see tabprune -h for supported "
                   "tables.\n";
    return 1;
  }
  const char* given = nullptr;
  api::prune_request req;
  for (auto [flag, kind] : {std::pair{"p", api::prune_request::kind::percent},
                            std::pair{"d", api::prune_request::kind::days},
                            std::pair{"i", api::prune_request::kind::recid},
                            std::pair{"n", api::prune_request::kind::number}}) {
    if (auto v = args.value(flag); !v.empty()) {
      if (given != nullptr) {
        streams.err << "Error: Only one option -p or -i or -n or -a maybe used at a time.\n";
        return 1;
      }
      char* end = nullptr;
      req.value = std::strtoll(v.c_str(), &end, 10);
      if (*end != '\0' || req.value < 0) {
        throw usage_error("tabprune -" + std::string{flag} + " takes a whole number, not '" + v
                          + "'.");
      }
      req.what = kind;
      given = flag;
    }
  }
  if (args.has("a")) {
    if (given != nullptr) {
      streams.err << "Error: Only one option -p or -i or -n or -a maybe used at a time.\n";
      return 1;
    }
    req.what = api::prune_request::kind::all;
    given = "a";
  }
  if (given == nullptr) {
    streams.err << "Error: One option -p or -i or -n or -a or -d must be supplied.\n";
    return 1;
  }
  auto s = session::open(args);
  api::prune_result result;
  if (table == "auditlog") {
    if (auto path = audit_path(s); !path.empty()) {
      try {
        result = api::prune_audit_log(path, req, std::time(nullptr));
      } catch (const std::runtime_error& e) {
        streams.err << "Error: " << e.what() << '\n';
        return 1;
      }
    } else {
      result.empty = true;
    }
  } else {
    result.empty = true; // no BMC event records are kept (reventlog reads the SEL)
  }
  if (result.empty
      && (req.what == api::prune_request::kind::number
          || req.what == api::prune_request::kind::percent)) {
    streams.out << "Nothing to prune from " << table << ".\n";
  }
  if (args.has("V")) { // the rows removed, as tabdump shows them
    const auto& columns = table == "auditlog" ? api::auditlog_columns() : api::eventlog_columns();
    streams.out << '#' << base::join_list(columns) << '\n';
    for (const auto& r : result.removed) {
      streams.out << store::csv_line(r.row) << '\n';
    }
  } else {
    streams.out << "tabprune of " << table << " complete.\n";
  }
  return 0;
}

} // namespace cws::cli
