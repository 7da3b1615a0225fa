#pragma once

// The plain message types of the actor system: what the HTTP layer asks (api_call) and what
// it gets back (api_result). Nothing here knows about HTTP.

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "store/definitions.hpp"
#include "store/noderange.hpp"
#include "store/policy.hpp"
#include "store/schema.hpp"

namespace cws::actors {

// -- atoms (CAF 0.17: at most 10 characters) ----------------------------------

using exec_atom = caf::atom_constant<caf::atom("exec")>;
using authz_atom = caf::atom_constant<caf::atom("authz")>;
using snapshot_atom = caf::atom_constant<caf::atom("snapshot")>;
using token_atom = caf::atom_constant<caf::atom("token")>;
using expand_atom = caf::atom_constant<caf::atom("expand")>;
using verify_atom = caf::atom_constant<caf::atom("verify")>;
using flush_atom = caf::atom_constant<caf::atom("flush")>;
using fail_atom = caf::atom_constant<caf::atom("fail")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;
using targets_atom = caf::atom_constant<caf::atom("targets")>;
using exists_atom = caf::atom_constant<caf::atom("exists")>;
using node_atom = caf::atom_constant<caf::atom("node")>;
using done_atom = caf::atom_constant<caf::atom("done")>;
using generation_atom = caf::atom_constant<caf::atom("generation")>;

// -- requests -----------------------------------------------------------------

/// The operations of the API, independent of HTTP.
enum class operation : uint8_t {
  list,         ///< names of every object of a type
  show,         ///< objects as lsdef shows them (optionally some attributes)
  nodels,       ///< node names of a verified noderange
  make,         ///< mkdef
  change,       ///< chdef
  remove,       ///< rmdef
  site_show,    ///< the clustersite object (optionally some keys)
  token_create, ///< a new API token for the caller
  token_revoke, ///< delete a token
  token_list,   ///< the caller's own tokens (handles, never ids)
  nodeshell,    ///< run a command on a noderange
};

/// True for operations that write the database.
bool is_write(operation op);

/// What the client presented to prove who it is.
struct credentials {
  std::string user;
  std::string password;
  /// X-Auth-Token value.
  std::string token;
};

/// One node's nodeshell outcome.
struct node_output {
  std::string name;
  /// Exit status; -1 when the command did not finish.
  int rc = -1;
  std::string out;
  std::string err;
  /// Empty on success; else refused, connect-timeout, auth, timeout, ... (ssh::result).
  std::string error;
  std::string message;
  bool truncated = false;
};

/// Receives nodeshell results as they complete (streaming). Called from actor threads.
class node_sink {
 public:
  virtual ~node_sink() = default;
  virtual void push(const node_output& out) = 0;
};

/// The data an authorization decision was made on: generations of the policy/passwd tables
/// and (when policy rows name noderanges) of group membership.
struct auth_stamp {
  uint64_t auth_generation = 0;
  uint64_t membership_generation = 0;
  bool check_membership = false;
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
  /// make/change: the attribute changes, in order.
  std::vector<store::attr_change> changes;
  store::list_mode mode = store::list_mode::set;
  /// Pre-expanded object names (the executor's deletes); used instead of `target` if set.
  std::vector<std::string> names;
  /// nodeshell: the command line, the fanout (0: configured) and command timeout in
  /// milliseconds (-1: configured; 0: none); per-node results wanted (format=detail).
  std::string command;
  size_t fanout = 0;
  long long timeout_ms = -1;
  bool detail = false;
  /// nodeshell with stream=1: where each node's result goes as soon as it is known.
  std::shared_ptr<node_sink> sink;
  credentials creds;
  /// The client's address (for policy `host` rows).
  std::string client;
  /// The xCAT command a policy row names for this request (lsdef, chdef, xdsh, ...).
  std::string policy_command;
  /// Set by the bridge once authorized: the authenticated user, and the generations of the
  /// data the decision was made on. The store checks them in the transaction that runs the
  /// call, so a policy or password change made meanwhile (by the CLI, say) is never missed.
  std::string user;
  bool stamped = false;
  auth_stamp stamp;
  /// Ask the policy actor to reload passwords and policy first (after a stale answer).
  bool refresh_auth = false;
};

using api_call_ptr = std::shared_ptr<const api_call>;

// -- replies ------------------------------------------------------------------

/// How a call ended; the HTTP layer maps each to a status code.
enum class api_status : uint8_t {
  ok,           ///< done (200)
  created,      ///< done, something created or run (201)
  unauthorized, ///< bad credentials or no policy allows it (401)
  failed,       ///< the command failed; `messages` says why (403)
  bad_request,  ///< malformed request (400)
  unavailable,  ///< the service could not complete it in time (503)
  stale,        ///< authorized on data that changed since: authorize again (internal)
};

/// One object of a listing, its attributes kept encoded (store/codec.hpp): a 100,000-node
/// answer stays compact until it is rendered.
struct object_record {
  std::string name;
  std::string encoded;

  object_record() = default;

  object_record(std::string n, const store::attr_map& attrs)
      : name(std::move(n)), encoded(store::encode(attrs)) {
    // nop
  }

  /// The attributes, decoded.
  store::attr_map attrs() const {
    return store::record_view{encoded}.to_map();
  }
};

/// The result of a call.
struct api_result {
  api_status status = api_status::ok;
  /// list / nodels: names.
  std::vector<std::string> names;
  /// show / site_show: objects with their attributes.
  std::vector<object_record> objects;
  /// failed: the error lines; ok: informational lines.
  std::vector<std::string> messages;
  /// The xCAT errorcode of a failure ("1" for command errors).
  std::string errorcode = "1";
  /// token_create: id and expiry text.
  std::string token_id;
  std::string token_expire;
  /// nodeshell (and detailed deletes): one entry per node, in noderange order.
  std::vector<node_output> nodes;
  /// Who asked: the authenticated user (or, when authentication failed, the name claimed).
  std::string user;
  /// The caller proved who they are (false when authentication failed).
  bool authenticated = false;

  /// A failure with one message.
  static api_result failure(api_status s, std::string message, std::string code = "1");
};

/// What the policy actor needs from the store, rebuilt when the database changes.
struct auth_snapshot {
  /// The generations (policy/passwd, group membership) it was read at.
  uint64_t auth_generation = 0;
  uint64_t membership_generation = 0;
  /// Enabled rows, sorted by priority, noderanges expanded.
  std::vector<store::policy_row> rows;
  bool has_noderange_rows = false;
  /// user -> stored crypt(3) hash
  std::map<std::string, std::string> passwords;
};

using auth_snapshot_ptr = std::shared_ptr<const auth_snapshot>;

/// Where a call's result goes when no reply message carries it back: called exactly once, on
/// an actor thread.
using done_fn = std::function<void(api_result)>;
using done_ptr = std::shared_ptr<done_fn>;

/// A token as stored: whose it is and until when (seconds since the epoch; 0 = never).
struct token_info {
  bool found = false;
  std::string user;
  int64_t expires = 0;
};

/// Where nodeshell connects for one node (its `ip` and `sshport`, inherited from groups).
struct node_target {
  std::string name;
  std::string address;
  uint16_t port = 0;
};

/// A verified noderange with connection data, or why not.
struct targets_reply {
  std::string error;
  std::vector<std::string> missing;
  std::vector<node_target> nodes;
};

/// The answer of the policy actor.
struct auth_result {
  bool allowed = false;
  /// The authenticated user (also set when authenticated but not allowed).
  std::string user;
  /// Why not: authentication failure or policy.
  std::string reason;
  /// The service itself failed (a timeout): not the client's fault.
  bool unavailable = false;
  /// The request itself is wrong (a bad noderange): `reason` says why; answered as a failed
  /// command (403), as it would be without policy noderange rows.
  bool invalid = false;
  /// What the decision was made on (see api_call).
  auth_stamp stamp;

  /// A refusal of `user` (empty when not authenticated) for `reason`.
  static auth_result refused(std::string user, std::string reason, bool unavailable = false) {
    auth_result r;
    r.user = std::move(user);
    r.reason = std::move(reason);
    r.unavailable = unavailable;
    return r;
  }
};

/// Counters of the policy actor (for tests and metrics).
struct auth_stats {
  uint64_t failures = 0;
  uint64_t hash_checks = 0;
  uint64_t cache_hits = 0;
  /// Guesses refused without hashing (too many failures of the user or the client).
  uint64_t throttled = 0;
  /// Noderanges expanded for policy rows with a noderange.
  uint64_t expansions = 0;
};

} // namespace cws::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::api_call_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::api_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::auth_snapshot_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::done_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::token_info)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::auth_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::auth_stats)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::store::noderange_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::targets_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<const cws::actors::node_output>)
