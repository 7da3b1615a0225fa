#pragma once

// What a client asks of the service, independent of HTTP and of actors: the request as it
// was parsed (api_call) and what authorization adds to it (authorization). A call is built
// once, shared as `api_call_ptr` and never copied on its way.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/node_result.hpp"
#include "store/definitions.hpp"
#include "store/schema.hpp"

namespace cws::ssh {
struct copy_spec;
} // namespace cws::ssh

namespace cws::api {

/// The operations of the API. Each has a row in api/operation_traits.cpp.
enum class operation : uint8_t {
  list,          ///< names of every object of a type
  show,          ///< objects as lsdef shows them (optionally some attributes)
  nodels,        ///< node names of a verified noderange
  make,          ///< mkdef
  change,        ///< chdef
  remove,        ///< rmdef (a node range: one write with a per-node status)
  site_show,     ///< the clustersite object (optionally some keys)
  token_create,  ///< a new API token for the caller
  token_revoke,  ///< delete a token
  token_list,    ///< the caller's own tokens (handles, never ids)
  nodeshell,     ///< run a command on a noderange
  rename,        ///< chdef -n: one object gets a new name (`new_name`)
  template_list, ///< names of xCAT's shipped templates (lsdef --template -a)
  template_show, ///< shipped templates as lsdef shows them (lsdef --template NAMES)
  // xCAT's table API (/tables, api/tables.hpp): `tables`, a noderange or keys in `target`,
  // columns in `attrs`, values in `changes`
  table_nodes,       ///< getTablesNodesAttribs: nodes' rows, inherited values resolved
  table_rows,        ///< getTablesAllRowAttribs, getAttribs (first row matching the keys)
  table_set_nodes,   ///< setNodesAttribs: `table.column` changes on every node
  table_set_rows,    ///< setAttribs: the rows matching the keys, or a new one
  table_delete_rows, ///< delEntries: every row matching the keys
  make_networks,     ///< makenetworks: networks of the service host's interfaces
  make_dhcp,         ///< makedhcp: `command` "" (the nodes), "-d" (remove them), "-n" (server)
  make_hosts,        ///< makehosts: the nodes' lines of the hosts file (api/hosts.hpp)
  authorize,         ///< nothing to run: the caller answers once policy allows it (metrics)
  nodecopy,          ///< copy files to (or from) a noderange: xdcp (`copy`)
  power,             ///< rpower: the action (on, off, stat, ...) in `command`
  nextboot,          ///< rsetboot: the action (net, hd, cd, def, stat) in `command`
  eventlog,          ///< reventlog: `all`, `clear` or a count, and `-s`, in `command`
  beacon,            ///< rbeacon: the action (on, off, blink, stat) in `command`
  vitals,            ///< rvitals: the keywords (all, temp, ...) in `command`, space-separated
  inventory,         ///< rinv: the keywords (all, model, ...) in `command`, space-separated
  nodestat,          ///< probe the nodes of a noderange (api/nodestat.hpp)
  // jobs (actors/jobs_actor.hpp): the caller's own, root's all; `target` the job's id
  job_list,   ///< GET /jobs
  job_show,   ///< GET /jobs/{id} (with `sink`: its nodes streamed, then live)
  job_cancel, ///< DELETE /jobs/{id}
  // makedns (api/makedns.hpp); `dry_run` for a dry run; on the store's system-change thread
  dns_apply,   ///< POST /nodes/{nr}/dns: makedns nr
  dns_delete,  ///< DELETE /nodes/{nr}/dns: makedns -d nr
  dns_service, ///< POST /services/dns: makedns -n
  // provisioning (api/nodeset.hpp): the state word in `command`
  bootstate, ///< nodeset stat: each node's boot state (GET /nodes/{nr}/bootstate)
  nodeset,   ///< nodeset: set the boot state (PUT /nodes/{nr}/bootstate)
  provision, ///< rinstall: nodeset, rsetboot net, rpower boot (PUT /nodes/{nr}/provision)
  // consoles (actors/console_actor.hpp): answered by the console server
  console_log, ///< GET /nodes/{node}/console/log: the log's last `tail` lines (`command`)
  conserver,   ///< makeconservercf: `command` "" (hold the nodes), "-d" (stop), "-V" (states)
  node_table,  ///< GET /clusterws/nodetable: a sorted page of nodes (api/node_table.hpp)
  count_,      ///< not an operation: how many there are (new ones go above)
};

/// True for the operations on jobs (job_list, job_show, job_cancel).
bool is_job_call(operation op);

/// True for the operations the console server answers (console_log, conserver).
bool is_console_call(operation op);

/// Sources copied to one target (a synclist line; a plain xdcp has one).
struct copy_entry {
  std::vector<std::string> sources;
  std::string target;
};

/// What xdcp, nodecopy and xdsh -e copy (api/copy.hpp checks and plans it).
struct copy_request {
  std::vector<copy_entry> entries;
  /// -R: directories with everything below them.
  bool recursive = false;
  /// -p: modes and times as the source's.
  bool preserve = false;
  /// -P: one remote file from each node into the local directory `entries[0].target`.
  bool pull = false;
  /// xdsh -e: the one source is a script run on each node (the call's command holds its
  /// arguments), then removed.
  bool execute = false;
  /// REST: every source must lie under the configured `copy_root` once symlinks and `..`
  /// are resolved. The CLI copies what its user can read.
  bool confined = false;
};

/// True for operations that write the database (api/operation_traits.hpp).
bool is_write(operation op);

/// True for operations the fan-out executor runs node by node (api/operation_traits.hpp).
bool is_fan_out(operation op);

/// What the client presented to prove who it is.
struct credentials {
  std::string user;
  std::string password;
  /// X-Auth-Token value.
  std::string token;
  /// The Unix user the kernel named for a caller on the local socket (SO_PEERCRED): the
  /// whole credential there; never set from anything in a request.
  std::string peer_user;
};

/// Receives per-node results as they complete (streaming). Called from actor threads.
class node_sink {
 public:
  virtual ~node_sink() = default;
  /// Takes one node's result; the call's final result then keeps only its status (name, rc,
  /// error), not its output.
  virtual void push(base::node_result node) = 0;
  /// The call's nodes were planned: `nodes` results follow. Before the first push.
  virtual void started(size_t nodes) {
    (void)nodes;
  }
};

/// Lets whoever waits for a fan-out call end its work early: the HTTP session when its
/// client went away or call_timeout passed, the executor by the hook it set when the work
/// started. Any thread; the first cancel wins, later ones do nothing.
class call_cancel {
 public:
  /// Runs `hook` at the cancel, at once if the call is cancelled already; replaces the last
  /// hook (none: the work ended).
  void on_cancel(std::function<void()> hook);
  /// Ends the call's work, saying why (each node's result message).
  void cancel(std::string why);
  /// Whether cancel was called.
  bool cancelled() const;
  /// Why it was cancelled (empty: it was not).
  std::string reason() const;

 private:
  mutable std::mutex mu_;
  bool cancelled_ = false;
  std::string why_;
  std::function<void()> hook_;
};

/// node_table: the sort attribute ("node": by name), its direction and the page.
struct node_table_request {
  std::string sort = "node";
  bool descending = false;
  size_t offset = 0;
  size_t limit = 100;
};

/// One API request after parsing: what to do, on what, and who asks.
struct api_call {
  operation op = operation::list;
  store::object_type type = store::object_type::node;
  /// Object names, or a noderange for nodes.
  std::string target;
  /// show: only these attributes (unset ones shown empty); site_show: these keys.
  std::vector<std::string> attrs;
  bool only_attrs = false;
  /// show: an answer of more objects than this is read in pages (api_result::pages) instead
  /// of whole; 0: always whole.
  size_t page_objects = 0;
  /// make/change: the attribute changes, in order.
  std::vector<store::attr_change> changes;
  store::list_mode mode = store::list_mode::set;
  /// make_hosts (and the other commands that change system files): dryrun=1, the diff
  /// only, nothing written.
  bool dry_run = false;
  /// token_create: the token's life in seconds instead of `site.tokenexpiredays` (a web
  /// console session: `ui_session_minutes`); 0: the site's. token_list: with `target` (a
  /// token's SHA-256), that token only (GET /session).
  int64_t token_life_s = 0;
  /// table_*: the tables named.
  std::vector<std::string> tables;
  /// rename: the object's new name.
  std::string new_name;
  /// make: the template the objects are made from (mkdef --template); template_show: the
  /// templates to show, a comma list (empty: all).
  std::string template_name;
  /// nodeshell: the command line, the fanout (0: configured) and command timeout in
  /// milliseconds (-1: configured; 0: none). power, nextboot: the action word.
  std::string command;
  size_t fanout = 0;
  long long timeout_ms = -1;
  /// nodecopy, and nodeshell with a script (xdsh -e): the files.
  std::shared_ptr<const copy_request> copy;
  /// `copy`'s files already read (api::build_copy) by plan_delegated, which shares them
  /// between the head's own nodes and the service nodes' shares: each source is read once
  /// per call. Null: the planner reads them.
  std::shared_ptr<const ssh::copy_spec> copy_files;
  /// Per-node results wanted (format=detail): nodeshell, node deletes.
  bool detail = false;
  /// nodeshell with stream=1: where each node's result goes as soon as it is known.
  std::shared_ptr<node_sink> sink;
  /// Fan-out calls: how the caller ends the work early (null: it never does).
  std::shared_ptr<call_cancel> cancel;
  /// Fan-out calls with async=1: answered at once with the job's id (202), the job runs on.
  bool async = false;
  /// Staged power-on of part of a call (the head's own nodes of a delegated call, set by
  /// plan_delegated): each BMC node's wave, counted over the whole call, so the head and
  /// its service nodes together keep syspowermaxnodes per syspowerinterval. Null: the
  /// waves are counted over this call's own nodes.
  std::shared_ptr<const std::unordered_map<std::string, uint32_t>> power_waves;
  credentials creds;
  /// The client's address (for policy `host` rows).
  std::string client;
  /// The xCAT command a policy row names for this request (lsdef, chdef, xdsh, ...).
  std::string policy_command;
  /// make_hosts, make_dhcp, dns_delete from the provisioning re-apply (never from a
  /// request): nodes no longer defined whose entries are deleted by name (hosts lines named by
  /// the node, its DHCP reservations, the DNS records sent for it); the call names no other
  /// node.
  std::vector<std::string> removed_nodes;
  /// node_table: sort and page (the columns in `attrs`, the noderange in `target`).
  node_table_request table;
};

using api_call_ptr = std::shared_ptr<const api_call>;

/// The generations of the data an authorization decision was made on: of the policy/passwd
/// tables and (when policy rows name noderanges) of group membership.
struct auth_stamp {
  uint64_t auth_generation = 0;
  uint64_t membership_generation = 0;
  bool check_membership = false;
};

/// What authorization adds to a call. The operation checks the stamp in the transaction that
/// runs the call, so a policy or password change made meanwhile (by the CLI, say) is never
/// missed. Empty (unstamped) for the CLI, which runs as its caller.
struct authorization {
  /// The authenticated user.
  std::string user;
  bool stamped = false;
  auth_stamp stamp;
  /// The call's nodes when policy had to expand its noderange (sorted, unverified): the
  /// operation uses them instead of expanding again.
  std::shared_ptr<const std::vector<std::string>> nodes;
};

} // namespace cws::api
