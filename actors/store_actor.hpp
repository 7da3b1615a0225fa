#pragma once

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <memory>

#include "actors/messages.hpp"
#include "store/database.hpp"

namespace cws::actors {

/// The store: the only owner of the LMDB environment in the daemon. Reads run on a pool of
/// reader actors; writes are gathered into batches on the scheduler and handed to one writer
/// on its own thread that group-commits them (one fsync for every write waiting), and each
/// reply is sent only after its data is durable.
using store_actor = caf::typed_actor<
  // Runs an authorized call and replies its result.
  caf::replies_to<exec_atom, api_call_ptr>::with<api_result>,
  // The same, but calls `done` with the result where it is ready (for a write, the writer's
  // thread after the commit): no reply message, so the result skips a hop back through the
  // caller.
  caf::reacts_to<exec_atom, api_call_ptr, done_ptr>,
  // Replies the current policy snapshot (passwords, policy rows with their nodes).
  caf::replies_to<snapshot_atom>::with<auth_snapshot_ptr>,
  // The generations of the policy/passwd tables and of group membership, as of now.
  caf::replies_to<generation_atom>::with<uint64_t, uint64_t>,
  // Looks up a token by the SHA-256 (hex) of its id.
  caf::replies_to<token_atom, std::string>::with<token_info>,
  // Expands a noderange (with or without verification) within the service's limits.
  caf::replies_to<expand_atom, std::string, bool>::with<store::noderange_result>,
  // Verifies the call's noderange and gives each node's address and SSH port (nodeshell).
  caf::replies_to<targets_atom, api_call_ptr>::with<targets_reply>,
  // Of the given node names, the ones that do not exist.
  caf::replies_to<exists_atom, std::vector<std::string>>::with<std::vector<std::string>>>;

/// How the store actor runs.
struct store_config {
  /// Reader actors serving reads in parallel.
  size_t readers = 2;
  /// Run the writer on its own thread (fsync must not stall the scheduler). Tests under the
  /// deterministic test coordinator turn this off.
  bool detached_writer = true;
  /// Most writes committed together.
  size_t max_batch = 512;
  /// How long a commit may wait for the writes of the clients the last commit answered
  /// (0: commit at once). Bounded; a client that does not come back costs this once.
  std::chrono::microseconds commit_wait{0};
  /// Limits of noderanges in requests (files are never allowed).
  store::noderange_options noderange;
};

/// Spawns the store over `db`.
store_actor spawn_store(caf::actor_system& sys, std::shared_ptr<store::database> db,
                        store_config cfg);

// -- the operations, callable without actors (tests, benchmarks) ------------------

/// Runs a read call on a snapshot.
api_result run_read(const store::database& db, const api_call& call,
                    const store::noderange_options& opts);

/// Runs a write call in `t`. @throws store::rejected (or store::error) to roll it back.
api_result run_write(store::write_txn& t, const api_call& call,
                     const store::noderange_options& opts);

/// The nodes of a verified noderange with their `ip` and `sshport`.
/// The nodes of a verified noderange with their `ip` and `sshport`; error "stale" if the
/// call was authorized on data that changed since.
targets_reply find_targets(const store::database& db, const api_call& call,
                           const store::noderange_options& opts);

/// The policy snapshot as the database holds it now.
auth_snapshot_ptr build_snapshot(const store::database& db, const store::noderange_options& opts);

/// True if `call` was authorized on data that `txn` no longer holds.
bool is_stale(const store::read_txn& txn, const api_call& call);

} // namespace cws::actors
