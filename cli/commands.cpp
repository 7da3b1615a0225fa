#include "cli/commands.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <sys/resource.h>

#include "api/operations.hpp"
#include "api/settings.hpp"
#include "cli/defaults.hpp"
#include "cli/local_client.hpp"
#include "store/error.hpp"

namespace cws::cli {

namespace {

using store::object_type;

constexpr std::string_view change_help
  = "  -t TYPE    object type: node (default), group, network, osimage, policy, site\n"
    "  -o NAMES   object names (or give them as the first argument; a noderange for nodes)\n"
    "  --home DIR state directory (default $CLUSTERWS_HOME or /var/lib/clusterws)\n"
    "  -h, --help this text\n";

struct change_args {
  store::change_request req;
  parsed_args args;
};

/// True if the command was given nothing to do (no option but --home, no argument): xCAT's
/// mkdef, chdef and rmdef then print their usage and exit 0 (DBobjectdefs.pm processArgs).
bool no_arguments(const parsed_args& args) {
  return args.flags.empty() && args.positional.empty()
         && std::all_of(args.values.begin(), args.values.end(),
                        [](const auto& v) { return v.first == "home"; });
}

/// Shared mkdef/chdef parsing: names from -o or the first non-assignment argument.
change_args parse_change(const std::vector<std::string>& argv, std::string_view flags,
                         const session* s) {
  change_args c;
  c.args = parse_args(argv, definition_options("town", flags));
  c.req.type = parse_object_type(c.args.value("t", "node"));
  std::string spec = c.args.value("o");
  for (const auto& p : c.args.positional) {
    store::attr_change a;
    if (split_assignment(p, a.name, a.value)) {
      c.req.attrs.push_back(std::move(a));
    } else if (spec.empty()) {
      spec = p;
    } else {
      throw usage_error("Unexpected argument '" + p + "'.");
    }
  }
  if (s != nullptr) {
    bool selecting = !c.args.all("w").empty() && !c.args.has("d");
    if (spec.empty() && c.req.type != object_type::site && !selecting) {
      throw usage_error("No object names were provided.");
    }
    if (spec.empty() && selecting) { // chdef -w without names: every object of the type
      auto txn = s->db->read();
      c.req.names = c.req.type == object_type::group ? txn.group_names() : txn.names(c.req.type);
      return c;
    }
    c.req.names = s->names(c.req.type, spec);
    if (auto msg = store::check_change_target(c.req.type, spec, c.req.names); !msg.empty()) {
      throw usage_error(msg);
    }
  }
  return c;
}

/// mkdef/chdef -d -w: a dynamic group is its selections, stored as `grouptype=dynamic` and
/// `wherevals` (`::`-separated, as xCAT's nodegroup table has them). Refuses what xCAT
/// refuses: -d without -w, -w without -d, static members on a dynamic group. With chdef -p/-m
/// (`mode`) the selections are added to or removed from those of the dynamic group (one
/// that exists, or with -p a new one).
void dynamic_group(change_args& c, std::string_view tool, store::list_mode mode, const session& s) {
  auto where = c.args.all("w");
  bool dynamic = c.args.has("d");
  if (!dynamic) {
    if (!where.empty() && tool == "mkdef") {
      throw usage_error("The '-w' option can only be used with '-d' to define a dynamic group.");
    }
    if (!where.empty()) { // chdef -w: only the objects whose attributes pass every selection
      auto txn = s.db->read();
      store::cluster_view view{txn};
      std::vector<std::string> kept;
      store::list_objects(view, c.req.type, c.req.names, nullptr, parse_where(where),
                          [&](store::listed_object&& o) { kept.push_back(std::move(o.name)); });
      c.req.names = std::move(kept);
    }
    return;
  }
  if (c.req.type != object_type::group) {
    throw usage_error("The '-d' option can only be used with '-t group'.");
  }
  if (where.empty()) {
    throw usage_error("The '-d' option must be used with the '-w' option.");
  }
  for (const auto& a : c.req.attrs) {
    if (a.name == "members" || a.name == "grouptype" || a.name == "wherevals") {
      throw usage_error("A dynamic group's '" + a.name
                        + "' comes from its '-w' selections: "
                          "its members are the nodes that match them.");
    }
  }
  std::string wherevals;
  for (const auto& w : where) {
    wherevals += (wherevals.empty() ? "" : "::") + w;
  }
  if (mode != store::list_mode::set) {
    auto txn = s.db->read();
    for (const auto& g : c.req.names) {
      auto rec = txn.get(object_type::group, g);
      if (rec && rec->find("grouptype").value_or("") != "dynamic") {
        throw usage_error("'" + g
                          + "' is not a dynamic group: -p and -m with -d -w change the "
                            "selections of a dynamic group.");
      }
    }
  }
  if (mode != store::list_mode::remove) { // (-m leaves grouptype as it is: dynamic)
    c.req.attrs.push_back({"grouptype", "dynamic"});
  }
  c.req.attrs.push_back({"wherevals", wherevals});
}

/// Refuses `members=` for a group that is dynamic in the store (chdef).
void refuse_static_members(const session& s, const change_args& c) {
  bool sets_members = std::any_of(c.req.attrs.begin(), c.req.attrs.end(),
                                  [](const store::attr_change& a) { return a.name == "members"; });
  if (c.req.type != object_type::group || !sets_members) {
    return;
  }
  auto txn = s.db->read();
  for (const auto& g : c.req.names) {
    auto rec = txn.get(object_type::group, g);
    if (rec && rec->find("grouptype").value_or("") == "dynamic") {
      throw usage_error("'" + g
                        + "' is a dynamic group: its members are the nodes that match its "
                          "selections (wherevals), and cannot be set.");
    }
  }
}

/// xCAT's refusal of --template by the tools that do not take it (chdef, rmdef).
void refuse_template(const std::vector<std::string>& argv, std::string_view tool) {
  auto rest = argv;
  if (base::take_optional_value(rest, "template")) {
    throw usage_error("The option '--template' can not be used with '" + std::string{tool} + "'.");
  }
}

/// chdef -n NEW: renames the one object named, nothing else on the line.
int rename(const change_args& probe, io& streams) {
  std::string from = probe.args.value("o");
  size_t names = from.empty() ? 0 : 1;
  for (const auto& p : probe.args.positional) {
    if (p.find('=') == std::string::npos && names++ == 0) {
      from = p;
    }
  }
  if (names != 1 || from.find(',') != std::string::npos || !probe.req.attrs.empty()) {
    throw usage_error("The -n option renames one object: 'chdef [-t TYPE] -o NAME -n NEWNAME', "
                      "with no attribute values.");
  }
  auto s = session::open(probe.args);
  auto to = probe.args.value("n");
  return report(store::apply(*s.db,
                             [&](store::write_txn& t) {
                               return store::rename_object(t, probe.req.type, from, to);
                             }),
                streams);
}

using stanza_change
  = std::function<store::outcome(store::write_txn&, const std::vector<store::object_change>&)>;

/// mkdef -z / chdef -z: every object of the stanzas on stdin, in one transaction; nothing is
/// written if any stanza is invalid.
int change_from_stanzas(const parsed_args& args, std::string_view tool, io& streams,
                        const stanza_change& change) {
  if (args.values.count("t") > 0) {
    throw usage_error("Cannot combine '-t' and '-a', '-z', or '-x' options.");
  }
  for (const auto& p : args.positional) {
    if (p.find('=') != std::string::npos) {
      throw usage_error("Cannot combine 'attr=val' pairs with '-z': the attributes come from "
                        "the stanzas.");
    }
  }
  if (args.values.count("o") > 0 || !args.positional.empty()) {
    throw usage_error("Cannot use '-z' with '-o' or a noderange.\nExample of -z usage:\n\t'cat "
                      "stanzafile | "
                      + std::string{tool} + " -z'");
  }
  auto s = session::open(args);
  store::outcome bad;
  std::vector<store::object_change> objects;
  {
    auto parsed
      = store::parse_stanzas(read_limited(streams.in, store::max_stanza_bytes, "stanza input"));
    bad.errors = std::move(parsed.errors);
    objects = store::stanza_objects(parsed.objects, bad.errors);
  }
  if (bad.errors.empty() && objects.empty()) {
    bad.errors.emplace_back("No object names were provided.");
  }
  if (!bad.ok()) {
    return report(bad, streams); // nothing is written
  }
  return report(store::apply(*s.db, [&](store::write_txn& t) { return change(t, objects); }),
                streams);
}

} // namespace

std::string read_limited(std::istream& in, size_t limit, std::string_view what) {
  std::string text;
  char buf[64 * 1024];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > limit) {
      throw std::runtime_error("The " + std::string{what} + " is larger than "
                               + std::to_string(limit) + " bytes (" + std::to_string(limit >> 20)
                               + " MiB); split it into several files.");
    }
  }
  return text;
}

// -- shared helpers -------------------------------------------------------------

option_spec definition_options(std::string_view values, std::string_view flags) {
  // xCAT's DBobjectdefs.pm and nodels: GetOptions names of the boolean options
  static const std::pair<std::string_view, char> xcat_names[]
    = {{"all", 'a'},    {"compress", 'c'}, {"dynamic", 'd'}, {"force", 'f'},
       {"long", 'l'},   {"minus", 'm'},    {"plus", 'p'},    {"short", 's'},
       {"stanza", 'z'}, {"verbose", 'V'},  {"blame", 'b'},   {"with-fieldname", 'H'}};
  option_spec spec{values, flags, {"home"}, {}, {}};
  for (const auto& a : xcat_names) {
    spec.long_aliases.push_back(a);
  }
  return spec;
}

session session::open(const parsed_args& args) {
  auto home = store::home::resolve(args.value("home"));
  if (daemon_socket(home)) {
    throw needs_root{}; // the store is root's: only lsdef, nodels and xdsh go through the daemon
  }
  home.require_initialized();
  session s{
    home, std::make_unique<store::database>(home.db()), api::load_settings(home.config()), {}};
  s.noderange = api::noderange_limits(s.settings);
  s.noderange.allow_files = true; // the CLI runs as its caller: `^file` reads their file
  apply_node_affixes(s.noderange);
  return s;
}

void raise_open_files_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

void run_to_end(api::node_operation& op, const api::node_operation::result_fn& on_result) {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  op.start(
    [&](size_t index, base::node_result res) {
      std::lock_guard<std::mutex> guard{mu};
      on_result(index, std::move(res));
    },
    [&] {
      std::lock_guard<std::mutex> guard{mu};
      done = true;
      cv.notify_all();
    });
  std::unique_lock<std::mutex> lock{mu};
  cv.wait(lock, [&] { return done; });
}

void print_node_list(std::ostream& err, const char* header, std::vector<std::string> nodes) {
  if (nodes.empty()) {
    return;
  }
  std::sort(nodes.begin(), nodes.end());
  err << header << "\nError: ";
  for (const auto& n : nodes) {
    err << ' ' << n;
  }
  err << '\n';
}

void print_timed_out(std::ostream& err, std::vector<std::string> nodes) {
  print_node_list(err,
                  "Error:  Timed out waiting for response from child processes for the "
                  "following nodes.",
                  std::move(nodes));
}

void apply_node_affixes(store::noderange_options& opts) {
  if (const char* prefix = std::getenv("XCAT_NODE_PREFIX")) {
    opts.digit_prefix = prefix;
  }
  if (const char* suffix = std::getenv("XCAT_NODE_SUFFIX")) {
    opts.digit_suffix = suffix;
  }
}

std::vector<std::string> session::names(object_type t, std::string_view spec) const {
  auto txn = db->read();
  store::cluster_view view{txn};
  return api::target_names(view, t, spec, noderange);
}

object_type parse_object_type(const std::string& text) {
  auto t = store::parse_type(text);
  if (!t) {
    throw usage_error("Type '" + text + "' is not a valid xCAT object type.");
  }
  return *t;
}

int report(const store::outcome& out, io& streams) {
  for (const auto& w : out.warnings) {
    streams.err << "Warning: " << w << '\n';
  }
  for (const auto& e : out.errors) {
    streams.err << "Error: " << e << '\n';
  }
  for (const auto& i : out.info) {
    streams.out << i << '\n';
  }
  return out.ok() ? 0 : 1;
}

bool asks_version(std::string_view name, const std::vector<std::string>& args) {
  // xdsh: -V (its -v is xCAT's --verify), and only first: the command follows the noderange
  if (name == "xdsh" || name == "xdcp") {
    return !args.empty() && (args.front() == "-V" || args.front() == "--version");
  }
  return std::any_of(args.begin(), args.end(),
                     [](const std::string& a) { return a == "-v" || a == "--version"; });
}

void print_version(std::string_view name, std::ostream& out) {
  out << name << " - clusterws Version " << version_text << '\n'; // as xCAT's tools
}

int run_tool(std::string_view name, const std::vector<std::string>& args, io& streams) {
  static const std::pair<std::string_view, command_fn> table[] = {
    {"lsdef", lsdef},
    {"nodels", nodels},
    {"mkdef", mkdef},
    {"chdef", chdef},
    {"rmdef", rmdef},
    {"xdsh", xdsh},
    {"init", init},
    {"passwd", passwd},
    {"noderange", noderange},
    {"tokens", tokens},
    {"revoke", revoke},
    {"rmuser", rmuser},
    {"tabdump", tabdump},
    {"gettab", gettab},
    {"chtab", chtab},
    {"tabch", chtab},
    {"nodech", nodech},
    {"nodeadd", nodeadd},
    {"noderm", noderm},
    {"tabrestore", tabrestore},
    {"tabprune", tabprune},
    {"makenetworks", makenetworks},
    {"backup", backup},
    {"pki", pki},
    {"xdshbak", xdshbak},
    {"xcoll", xcoll},
    {"restore", restore},
    {"xdcp", xdcp},
    {"rpower", rpower},
    {"rsetboot", rsetboot},
    {"makeconservercf", makeconservercf},
    {"rcons", rcons},
    {"rvitals", rvitals},
    {"rinv", rinv},
    {"nodestat", nodestat},
    {"reventlog", reventlog},
    {"rbeacon", rbeacon},
    {"events", events},
    {"makehosts", makehosts},
    {"makedns", makedns},
    {"makedhcp", makedhcp},
    {"nodeset", nodeset},
    {"rinstall", rinstall},
    {"sn", sn},
  };
  for (const auto& [n, fn] : table) {
    if (n == name && asks_version(name, args)) {
      print_version(name, streams.out);
      return 0;
    }
    if (n == name) {
      try {
        return fn(args, streams);
      } catch (const needs_root&) {
        streams.err << "Error: " << name
                    << " needs root: the clusterws database is readable by root only. Users "
                       "other than root run lsdef, nodels and xdsh, which go through "
                       "clusterwsd.\n";
      } catch (const usage_error& e) {
        streams.err << "Error: " << e.what() << "\nTry '" << name << " --help'.\n";
      } catch (const std::exception& e) {
        streams.err << "Error: " << e.what() << '\n';
      }
      return 1;
    }
  }
  streams.err
    << "Error: Unknown command '" << name
    << "'. Commands: lsdef nodels mkdef chdef rmdef xdsh xdcp init passwd tokens revoke rmuser "
       "noderange tabdump gettab chtab tabch nodech nodeadd noderm tabrestore tabprune "
       "makenetworks makehosts makedns backup restore pki xdshbak xcoll rpower rsetboot rvitals "
       "rinv "
       "nodestat reventlog rbeacon makedhcp nodeset rinstall makeconservercf rcons sn\n";
  return 1;
}

// -- mkdef / chdef / rmdef ------------------------------------------------------------

int mkdef(const std::vector<std::string>& argv_in, io& streams) {
  auto argv = argv_in;
  auto from = base::take_optional_value(argv, "template");
  auto probe = parse_change(argv, "fzdV", nullptr);
  if (probe.args.has("help") || (!from && no_arguments(probe.args))) {
    streams.out
      << "Usage: mkdef [-t TYPE] [-o NAMES | NAMES] [-f] attr=value [attr=value ...]\n"
      << "       mkdef -t group -o NAME -d -w attr==val [-w attr=~re ...] [attr=value ...]\n"
      << "       mkdef [-t TYPE] --template TEMPLATE [-o NAMES | NAMES] [-f] [attr=value ...]\n"
      << "       mkdef -z [-f] < STANZAFILE\n"
      << "Creates object definitions. -f replaces existing definitions.\n"
      << "  --template T  start from xCAT's shipped template T (lsdef --template) or from\n"
      << "             the existing object T; attr=value replaces the template's value\n"
      << "  -z         read the objects from stanzas on stdin (lsdef -z output)\n"
      << "  -d         a dynamic group: its members are the nodes matching every -w\n"
      << "  -w SEL     attr==val, attr!=val, attr=~re or attr!~re (repeatable)\n"
      << change_help;
    return 0;
  }
  bool force = probe.args.has("f");
  if (from && from->empty()) {
    throw usage_error("no object definition template specified for mkdef --template!");
  }
  if (from && probe.args.has("z")) {
    throw usage_error("The file input can not be used with --template option!");
  }
  if (probe.args.has("z")) {
    return change_from_stanzas(
      probe.args, "mkdef", streams,
      [&](store::write_txn& t, const std::vector<store::object_change>& objects) {
        return store::make_objects(t, objects, force);
      });
  }
  auto s = session::open(probe.args);
  auto c = parse_change(argv, "fzdV", &s);
  dynamic_group(c, "mkdef", store::list_mode::set, s);
  c.req.force = force;
  c.req.template_name = from.value_or("");
  return report(
    store::apply(*s.db, [&](store::write_txn& t) { return store::make_objects(t, c.req); }),
    streams);
}

int chdef(const std::vector<std::string>& argv, io& streams) {
  refuse_template(argv, "chdef");
  auto probe = parse_change(argv, "pmfzdV", nullptr);
  if (!probe.args.value("n").empty()) {
    return rename(probe, streams);
  }
  if (probe.args.has("help") || no_arguments(probe.args)) {
    streams.out << "Usage: chdef [-t TYPE] [-o NAMES | NAMES] [-p | -m] attr=value ...\n"
                << "       chdef -t group -o NAME -d [-p | -m] -w attr==val [-w ...]\n"
                << "       chdef [-t TYPE] -o NAME -n NEWNAME\n"
                << "       chdef -z [-p | -m] < STANZAFILE\n"
                << "Changes object definitions, creating missing ones. attr= clears.\n"
                << "  -z         read the objects from stanzas on stdin (lsdef -z output)\n"
                << "  -p         add the values to comma lists\n"
                << "  -m         remove the values from comma lists\n"
                << "  -d -w SEL  make the group dynamic with these selections (replacing any;\n"
                << "             with -p / -m add them to or remove them from its selections)\n"
                << "  -n NEW     rename the one object named (not groups or the site)\n"
                << "  -w SEL     change only the objects (named, or all of the type) where\n"
                << "             attr==val, attr!=val, attr=~re or attr!~re (repeatable)\n"
                << change_help;
    return 0;
  }
  if (probe.args.has("f")) {
    throw usage_error("The '-f' option is not valid for the chdef command.");
  }
  if (probe.args.has("p") && probe.args.has("m")) {
    throw usage_error("The flags '-p' and '-m' cannot be used together.");
  }
  auto mode = probe.args.has("p")   ? store::list_mode::append
              : probe.args.has("m") ? store::list_mode::remove
                                    : store::list_mode::set;
  if (probe.args.has("z")) {
    return change_from_stanzas(
      probe.args, "chdef", streams,
      [&](store::write_txn& t, const std::vector<store::object_change>& objects) {
        return store::change_objects(t, objects, mode);
      });
  }
  auto s = session::open(probe.args);
  auto c = parse_change(argv, "pmfzdV", &s);
  if (c.req.attrs.empty() && !c.args.has("d") && c.req.type != object_type::group) {
    // xCAT's defch: nothing to set is nothing changed, not an error (a group is created)
    streams.out << "No object definitions have been created or modified.\n";
    return 0;
  }
  dynamic_group(c, "chdef", mode, s);
  if (!c.args.has("d")) {
    refuse_static_members(s, c);
  }
  if (!c.args.has("d") && !c.args.all("w").empty() && c.req.names.empty()) {
    streams.err << "Warning: No objects match the '-w' selections; nothing was changed.\n";
    return 0;
  }
  c.req.mode = mode;
  return report(
    store::apply(*s.db, [&](store::write_txn& t) { return store::change_objects(t, c.req); }),
    streams);
}

int rmdef(const std::vector<std::string>& argv, io& streams) {
  refuse_template(argv, "rmdef");
  auto args = parse_args(argv, definition_options("to", "V"));
  if (args.has("help") || no_arguments(args)) {
    streams.out << "Usage: rmdef [-t TYPE] [-o NAMES | NAMES]\n"
                << "Removes object definitions; nothing is removed if any is missing.\n"
                << change_help;
    return 0;
  }
  auto type = parse_object_type(args.value("t", "node"));
  std::string spec = args.value("o");
  if (spec.empty() && !args.positional.empty()) {
    spec = args.positional.front();
  }
  if (spec.empty() || args.positional.size() > 1) {
    throw usage_error(spec.empty() ? "No object names were provided."
                                   : "Unexpected argument '" + args.positional.back() + "'.");
  }
  auto s = session::open(args);
  auto names = s.names(type, spec);
  if (auto msg = store::check_change_target(type, spec, names); !msg.empty()) {
    throw usage_error(msg);
  }
  return report(
    store::apply(*s.db, [&](store::write_txn& t) { return store::remove_objects(t, type, names); }),
    streams);
}

} // namespace cws::cli
