#pragma once

// The messages a service node will exchange with the head (notes: scaleout), as plain
// types: a job request with its targets resolved, per-node results in batches, credits and a
// cancel. No callback, pointer or handle is inside any of them, so each can cross a process
// boundary. Each has an `inspect()` (CAF 0.17's form, written without CAF: api/ stays
// CAF-free); actors/type_ids.hpp registers them with an actor system.

#include <cstdint>
#include <string>
#include <vector>

#include "api/call.hpp"
#include "base/node_result.hpp"

namespace cws::api::wire {

/// The version of these messages: a peer refuses a request of another.
constexpr uint32_t version = 1;

/// One node of a job: where its work goes and as whom.
struct target {
  /// The node's index in the job (its result carries it back).
  uint32_t index = 0;
  std::string name;
  /// Empty: the service node resolves `name`.
  std::string address;
  /// 0: the transport's default port.
  uint16_t port = 0;
  /// The authenticated API user the work runs as (never a client's choice).
  std::string user;
  /// The hardware verbs (mgt=ipmi): the node's BMC as the head resolved it (address, port,
  /// user and password; "" for other operations). The password is a secret: never logged;
  /// the share's seal covers it, TLS protects it on the link.
  std::string bmc;
  uint16_t bmc_port = 0;
  std::string bmc_user;
  std::string bmc_password;
  /// Staged power-on (site.syspowerinterval): milliseconds to wait before the BMC's work.
  int64_t delay_ms = 0;
  /// nodestat: the node's boot state (currstate) the reading falls back on.
  std::string state;
};

/// One line of a copy: sources to one target (api::copy_entry).
struct copy_item {
  std::vector<std::string> sources;
  std::string target;
};

/// One file or directory a delegated copy writes on each node (ssh::copy_file), with its
/// bytes: a service node cannot read the head's files (docs/service-nodes.md, "Copies").
struct copy_file {
  /// Its path below the group's target, '/'-separated, relative, no `..`.
  std::string name;
  bool directory = false;
  /// Permission bits (at most 07777).
  uint32_t mode = 0644;
  /// Access and modification times to set (seconds), when >= 0 (xdcp -p).
  int64_t atime = -1;
  int64_t mtime = -1;
  /// The content (a directory: none).
  std::string data;
};

/// Files copied to one target path (ssh::copy_group).
struct copy_group {
  std::string target;
  /// The target is a directory to copy into.
  bool into = false;
  /// Parents before their children.
  std::vector<copy_file> files;
};

/// A fan-out job with its targets resolved: all a service node needs, with no store.
struct job_request {
  uint32_t version = wire::version;
  /// The head's id of the job (results, credits and cancel name it).
  uint64_t id = 0;
  /// The operation's name (api/operation_traits.hpp), never its enum value: the enum's
  /// order is no wire format.
  std::string operation;
  /// The call's parameters: the command line or action, the command timeout (-1:
  /// configured; 0: none), the fanout (0: configured).
  std::string command;
  int64_t timeout_ms = -1;
  uint32_t fanout = 0;
  /// nodecopy and xdsh -e: what is copied, and how (api::copy_request).
  std::vector<copy_item> copy;
  bool recursive = false;
  bool preserve = false;
  bool pull = false;
  bool execute = false;
  /// The hardware verbs: seconds per BMC try and tries (site.ipmitimeout, site.ipmiretries).
  uint32_t bmc_timeout_s = 0;
  uint32_t bmc_retries = 0;
  std::vector<target> targets;
  /// A push copy's files with their bytes, read once on the head (with the caller's rights):
  /// what a service node writes. Bounded by sn_copy_max (request_limits::max_copy_bytes);
  /// inside the share, so the seal covers them. Empty for a job that runs on the head.
  std::vector<copy_group> files;
};

/// How one node's part ended (base::node_result, with its index and timings).
struct node_result {
  uint32_t index = 0;
  std::string name;
  int32_t rc = -1;
  std::string out;
  std::string err;
  bool truncated = false;
  /// The per-node error code ("" on success; docs/api.md lists them).
  std::string error;
  std::string message;
  bool reused = false;
  /// When the node's work started (microseconds since the epoch; 0: it never did) and how
  /// long it ran.
  int64_t started_us = 0;
  int64_t elapsed_us = 0;
};

/// Results as they come, in order within a job: `seq` counts the job's batches from 0.
struct result_batch {
  uint64_t id = 0;
  uint32_t seq = 0;
  std::vector<node_result> results;
};

/// Progress back to the sender: batch `seq` of job `id` is consumed (a credit: the sender
/// keeps a few batches in flight, never more).
struct credit {
  uint64_t id = 0;
  uint32_t seq = 0;
};

/// End job `id`: each node not yet reported ends `cancelled` with `reason`.
struct cancel {
  uint64_t id = 0;
  std::string reason;
};

/// A service node's share of a job (docs/service-nodes.md "Delegation, results and
/// failure"): the job with only the share's targets, indexed 0..n-1 in share order (the head
/// maps them back to the call's nodes, so a service node can report on its own nodes only),
/// and how its results come back.
struct share_request {
  /// `job.id` is the share's own id (random, one per share): its batches, credits, cancel and
  /// end name it.
  job_request job;
  /// The service node it is for: another refuses it.
  std::string service_node;
  /// Batches the service node may have sent and not seen credited (sn_credits).
  uint32_t credits = 4;
  /// Results in one batch at most (sn_batch_nodes), and their bytes (sn_batch_bytes; one
  /// larger result goes alone).
  uint32_t batch_nodes = 128;
  uint64_t batch_bytes = 4u << 20;
  /// The link layer's seal (HMAC under the service node's secret, with its own id and
  /// expiry): filled by the head's link over every field above, checked by the service
  /// node's link before the share reaches the service-node actor. The delegation neither fills
  /// nor reads it.
  std::string sealed;
};

/// A service node's last word on a share: every node reported in `batches` batches (their
/// seq 0..batches-1), or the share refused whole (`refused` says why; nothing ran).
struct share_end {
  uint64_t id = 0;
  uint32_t batches = 0;
  std::string refused;
};

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, target& x) {
  return f(x.index, x.name, x.address, x.port, x.user, x.bmc, x.bmc_port, x.bmc_user,
           x.bmc_password, x.delay_ms, x.state);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, copy_item& x) {
  return f(x.sources, x.target);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, copy_file& x) {
  return f(x.name, x.directory, x.mode, x.atime, x.mtime, x.data);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, copy_group& x) {
  return f(x.target, x.into, x.files);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_request& x) {
  return f(x.version, x.id, x.operation, x.command, x.timeout_ms, x.fanout, x.copy, x.recursive,
           x.preserve, x.pull, x.execute, x.bmc_timeout_s, x.bmc_retries, x.targets, x.files);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_result& x) {
  return f(x.index, x.name, x.rc, x.out, x.err, x.truncated, x.error, x.message, x.reused,
           x.started_us, x.elapsed_us);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, result_batch& x) {
  return f(x.id, x.seq, x.results);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, credit& x) {
  return f(x.id, x.seq);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, cancel& x) {
  return f(x.id, x.reason);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, share_request& x) {
  return f(x.job, x.service_node, x.credits, x.batch_nodes, x.batch_bytes, x.sealed);
}

template<class Inspector>
typename Inspector::result_type inspect(Inspector& f, share_end& x) {
  return f(x.id, x.batches, x.refused);
}

/// The bounds a received request is checked against.
struct request_limits {
  /// Targets in one request at most.
  size_t max_targets = 100000;
  /// Bytes of one string field at most (a command line, a name, a path).
  size_t max_field_bytes = 1 << 20;
  /// Bytes of a copy's file contents in one request at most (sn_copy_max), and its files
  /// and directories (copy_files_max).
  uint64_t max_copy_bytes = 16u << 20;
  size_t max_copy_files = 10000;
};

/// The request of fan-out call `call` on `targets` (indexes as given).
job_request make_request(uint64_t id, const api_call& call, std::vector<target> targets);

/// Why `r` cannot be run: another version, an operation that is unknown or does not run on
/// nodes, too many targets, an index out of range or repeated, a field past its bound, copied
/// files past their bounds or with a name that leaves its target (absolute, `..`).
/// @returns "" for a request that can be run.
std::string check(const job_request& r, const request_limits& limits = {});

/// Why share `r` cannot be run: its job's check, no service node named, or no credit, batch
/// size or batch bytes. @returns "" for a share that can be run.
std::string check(const share_request& r, const request_limits& limits = {});

/// The bytes a result takes in a batch (its strings; sn_batch_bytes counts these).
size_t result_bytes(const node_result& r);

/// Node `index`'s result on the wire.
node_result to_wire(uint32_t index, const base::node_result& r, int64_t started_us = 0,
                    int64_t elapsed_us = 0);

/// The node's result as the layers above the wire take it.
base::node_result from_wire(node_result r);

} // namespace cws::api::wire
