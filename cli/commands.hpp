#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/call.hpp"
#include "api/node_operation.hpp"
#include "base/args.hpp"
#include "base/settings.hpp"
#include "store/database.hpp"
#include "store/definitions.hpp"
#include "store/home.hpp"
#include "store/noderange.hpp"
#include "store/selector.hpp"

namespace cws::cli {

using base::option_spec;
using base::parse_args;
using base::parsed_args;
using base::split_assignment;
using base::usage_error;

/// Where a command reads and writes.
struct io {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
};

/// A command's signature: arguments without the program name; returns the exit status.
using command_fn = int (*)(const std::vector<std::string>& args, io& streams);

/// The options of a definition tool (lsdef, nodels, mkdef, chdef, rmdef): short options
/// taking values and short flags, `--home DIR`, and xCAT's long spellings of the flags
/// (`--long`, `--stanza`, `--force`, `--dynamic`, ...).
option_spec definition_options(std::string_view values, std::string_view flags);

/// True if `args` ask tool `name` for its version: `-v` or `--version` (xdsh: `-V` or
/// `--version` as its first argument), as xCAT's tools take them.
bool asks_version(std::string_view name, const std::vector<std::string>& args);

/// Prints `NAME - clusterws Version X.Y.Z`, xCAT's form.
void print_version(std::string_view name, std::ostream& out);

/// Runs the tool `name` (lsdef, nodels, mkdef, chdef, rmdef, xdsh, init, passwd, ...) or prints an
/// error for an unknown one. Exit status 0 on success, 1 on any error.
int run_tool(std::string_view name, const std::vector<std::string>& args, io& streams);

/// Raises the soft limit of open files to the hard one: fan-out tools hold a socket per node
/// at work.
void raise_open_files_limit();

/// Starts `op` and returns once every node has ended; `on_result` is called for each node as
/// it ends, one call at a time.
void run_to_end(api::node_operation& op, const api::node_operation::result_fn& on_result);

/// `header`, then `Error:  n1 n2` (sorted), in xCAT's DSHCLI form (its ' ' after 'Error:'
/// included). Nothing when there are no nodes.
void print_node_list(std::ostream& err, const char* header, std::vector<std::string> nodes);

/// The nodes a timeout ended, in xCAT's words: `Error:  Timed out waiting for response from
/// child processes for the following nodes.` and the list.
void print_timed_out(std::ostream& err, std::vector<std::string> nodes);

/// An opened state directory with its configuration.
struct session {
  store::home home;
  std::unique_ptr<store::database> db;
  /// clusterws.conf, checked against the schema (api/settings.hpp).
  base::settings settings;
  store::noderange_options noderange;

  /// Opens the home named by `--home` / $CLUSTERWS_HOME.
  /// @throws usage_error when it has not been initialized.
  static session open(const parsed_args& args);

  /// Expands object names for `t`: a noderange (no verify, `site.excludenodes` removed, as
  /// the daemon does) for nodes, a comma list otherwise.
  std::vector<std::string> names(store::object_type t, std::string_view spec) const;
};

/// Sets the bare-digit prefix and suffix of `opts` from XCAT_NODE_PREFIX and XCAT_NODE_SUFFIX
/// when they are set (NodeRange.pm reads them from the environment; `10` is then
/// `<prefix>10<suffix>`).
void apply_node_affixes(store::noderange_options& opts);

/// Parses the `-t` option (default node).
/// @throws usage_error for a type that is not a definition type.
store::object_type parse_object_type(const std::string& text);

/// Reads `in` whole (stanza input, a tabrestore file).
/// @throws std::runtime_error when it is larger than `limit`, naming it as `what`.
std::string read_limited(std::istream& in, size_t limit, std::string_view what);

/// Parses lsdef's and chdef's `-w` selections (attribute names taken as they are).
/// @throws usage_error for one that is not `attr<op>value`.
std::vector<store::selector> parse_where(const std::vector<std::string>& exprs);

/// Prints an outcome: warnings and errors on stderr, info on stdout. Returns the exit status.
int report(const store::outcome& out, io& streams);

int lsdef(const std::vector<std::string>& args, io& streams);
int nodels(const std::vector<std::string>& args, io& streams);
int mkdef(const std::vector<std::string>& args, io& streams);
int chdef(const std::vector<std::string>& args, io& streams);
int rmdef(const std::vector<std::string>& args, io& streams);
int init(const std::vector<std::string>& args, io& streams);
int passwd(const std::vector<std::string>& args, io& streams);
int tokens(const std::vector<std::string>& args, io& streams);
/// clusterctl events: tails the daemon's change feed (cli/events.cpp).
int events(const std::vector<std::string>& args, io& streams);
/// makeconservercf: the daemon's console server reads the definitions again (-d: stops
/// holding the noderange's consoles).
int makeconservercf(const std::vector<std::string>& args, io& streams);

/// rcons: one node's console through clusterwsd (GET /nodes/{node}/console over the local
/// socket), the terminal raw, conserver's `^Ec` escapes (cli/rcons_escape.hpp).
int rcons(const std::vector<std::string>& args, io& streams);
int revoke(const std::vector<std::string>& args, io& streams);
int rmuser(const std::vector<std::string>& args, io& streams);
int xdsh(const std::vector<std::string>& args, io& streams);
int xdcp(const std::vector<std::string>& args, io& streams);
int nodestat(const std::vector<std::string>& args, io& streams);
int noderange(const std::vector<std::string>& args, io& streams);
int tabdump(const std::vector<std::string>& args, io& streams);
int gettab(const std::vector<std::string>& args, io& streams);
/// chtab and tabch (the same command in clusterws).
int chtab(const std::vector<std::string>& args, io& streams);
int nodech(const std::vector<std::string>& args, io& streams);
int nodeadd(const std::vector<std::string>& args, io& streams);
int noderm(const std::vector<std::string>& args, io& streams);
int tabrestore(const std::vector<std::string>& args, io& streams);
int tabprune(const std::vector<std::string>& args, io& streams);
int makenetworks(const std::vector<std::string>& args, io& streams);
/// makedns (cli/makedns.cpp).
int makedns(const std::vector<std::string>& args, io& streams);
/// makedhcp (cli/makedhcp.cpp).
int makedhcp(const std::vector<std::string>& args, io& streams);
/// nodeset: the next boot state of a noderange (cli/nodeset.cpp).
int nodeset(const std::vector<std::string>& args, io& streams);

/// rinstall: nodeset, rsetboot net, rpower boot per node (cli/rinstall.cpp).
int rinstall(const std::vector<std::string>& args, io& streams);
/// makehosts (cli/makehosts.cpp).
int makehosts(const std::vector<std::string>& args, io& streams);
int backup(const std::vector<std::string>& args, io& streams);
int pki(const std::vector<std::string>& args, io& streams);
/// clusterctl sn: the head's service nodes (cli/sn_command.cpp).
int sn(const std::vector<std::string>& args, io& streams);
int xdshbak(const std::vector<std::string>& args, io& streams);
int xcoll(const std::vector<std::string>& args, io& streams);
/// rpower and rsetboot (cli/hardware.cpp).
int rpower(const std::vector<std::string>& args, io& streams);
int rsetboot(const std::vector<std::string>& args, io& streams);
/// reventlog and rbeacon (cli/eventlog.cpp).
int reventlog(const std::vector<std::string>& args, io& streams);
int rbeacon(const std::vector<std::string>& args, io& streams);
/// Runs hardware operation `op` with action `command` on the noderange `args.positional[0]`
/// in-process (cli/hardware.cpp), printing `node: line` for each line of each node's answer.
int run_hardware_call(api::operation op, const parsed_args& args, const std::string& command,
                      io& streams);
/// rvitals and rinv (cli/hardware.cpp).
int rvitals(const std::vector<std::string>& args, io& streams);
int rinv(const std::vector<std::string>& args, io& streams);

/// The address of a listen setting `ADDR:PORT` (`[::1]:PORT` for IPv6), or nullopt if it is
/// not one.
std::optional<std::string> listen_host(const std::string& listen);

/// Sets `key = value` in a configuration file: the setting's line (active or commented out)
/// is replaced, or the line appended; the file is replaced whole.
void set_config_value(const std::filesystem::path& file, const std::string& key,
                      const std::string& value);
int restore(const std::vector<std::string>& args, io& streams);

} // namespace cws::cli
