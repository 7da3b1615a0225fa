#pragma once

// Where root's fan-out tools (xdsh, xdcp, rpower and the other hardware verbs, nodestat) run
// on a head with service nodes: through clusterwsd's local socket, so that the daemon
// delegates each node to its service node, audits and keeps the job, as it does for every
// other caller (docs/service-nodes.md, "Root's tools"). Without service nodes they run in
// this process, as always.

#include <filesystem>
#include <optional>
#include <string>

#include "cli/commands.hpp"

namespace cws::cli {

/// True when the home of `s` has service nodes the daemon may delegate to: `sn_listen` is
/// set and `clusterctl sn add` has made at least one (a record in pki/sn/secrets/). One
/// directory read; no store read.
bool has_service_nodes(const session& s);

/// The daemon's local socket when `tool` (root, on the direct path) must send its call
/// through clusterwsd: has_service_nodes() and a daemon accepts a connection there. nullopt:
/// run in this process; when service nodes exist but no daemon answers, after one line on
/// `streams.err` naming why ("Warning: clusterwsd is not reachable on PATH (...); running
/// from this host, service nodes not used.").
/// @throws usage_error instead of that warning when `sn_cli_fallback = fail`.
std::optional<std::filesystem::path> daemon_route(const session& s, const std::string& tool,
                                                  io& streams);

/// For a call that cannot go through the daemon (an option only this process has: xdsh -e,
/// -o, -T, -m; xdcp -P, -F; nodestat -u): when has_service_nodes(), one line on
/// `streams.err` ("Warning: xdsh -e does not go through clusterwsd: running from this host,
/// service nodes not used."); nothing otherwise.
/// @throws usage_error instead when `sn_cli_fallback = fail`.
void warn_in_process(const session& s, const std::string& tool, const std::string& option,
                     io& streams);

} // namespace cws::cli
