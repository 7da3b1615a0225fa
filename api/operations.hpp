#pragma once

// The operations of the API on the store, callable without actors: the store actor runs
// them on its readers and its writer, the CLI runs some of them itself, tests and benchmarks
// call them directly.

#include <string>
#include <string_view>
#include <vector>

#include "api/auth.hpp"
#include "api/call.hpp"
#include "api/result.hpp"
#include "api/targets.hpp"
#include "store/cluster_view.hpp"
#include "store/database.hpp"
#include "store/noderange.hpp"

namespace cws::api {

/// The nodes of noderange `range` as policy sees them (unverified, sorted).
/// @throws store::error for a malformed or oversized noderange.
std::vector<std::string> expand_nodes(const store::database& db, std::string_view range,
                                      const store::noderange_options& opts);

/// Runs a read call on a snapshot. A `show` of more than `call.page_objects` objects is
/// checked whole (any missing object fails it, as in xCAT), then answered as `pages` that keep
/// the snapshot and are read one at a time.
api_result run_read(const std::shared_ptr<const store::database>& db, const api_call& call,
                    const authorization& auth, const store::noderange_options& opts);

/// Runs a write call in `t`; a node delete gives a status per node with format=detail.
/// @throws store::rejected (or store::error) to roll it back.
api_result run_write(store::write_txn& t, const api_call& call, const authorization& auth,
                     const store::noderange_options& opts);

/// node_targets (api/targets.hpp) in one read of `db`, refused when the authorization is stale.
/// @returns a failure (stale, missing nodes, bad noderange, bad sshport) or the targets.
api_result find_targets(const store::database& db, const api_call& call, const authorization& auth,
                        const store::noderange_options& opts, std::vector<node_target>& out);

/// What policy decides a call of `user` on (store::evaluate_policy): the client's names
/// (`localhost` too for loopback and the local socket), the xCAT command and the argument
/// line of `parameters` rows. Whether it has a noderange, and its nodes, are left to the caller.
store::policy_request policy_request_for(const api_call& call, const std::string& user);

/// The policy snapshot as the database holds it now.
auth_snapshot_ptr build_snapshot(const store::database& db, const store::noderange_options& opts);

/// Looks up a token by the SHA-256 (hex) of its id, as of `now`.
token_info find_token(const store::database& db, const std::string& hash, int64_t now);

/// True if a call authorized with `auth` was decided on data that `txn` no longer holds.
bool is_stale(const store::read_txn& txn, const authorization& auth);

} // namespace cws::api
