#pragma once

// makedhcp as one function of a store snapshot, for the tool (cli/makedhcp.cpp) and the
// REST resources alike: what it prints, and the change it would make (api/dhcp_backend.hpp).

#include <string>
#include <vector>

#include "api/call.hpp"
#include "api/dhcp_backend.hpp"
#include "api/result.hpp"
#include "store/cluster_view.hpp"
#include "store/database.hpp"
#include "store/noderange.hpp"

namespace cws::api {

/// makedhcp's options (xCAT's -n, -a, -d, -q and a noderange).
struct makedhcp_request {
  bool new_config = false; ///< -n
  bool all = false;        ///< -a
  bool remove = false;     ///< -d
  bool query = false;      ///< -q
  /// The noderange (empty with -n, -a).
  std::string noderange;
  /// The nodes, already expanded and verified (REST: policy's); used instead of `noderange`
  /// when `expanded`.
  std::vector<std::string> nodes;
  bool expanded = false;
};

/// What a makedhcp run does: its messages, the lines of -q, the change to apply.
struct makedhcp_plan {
  dhcp_messages messages;
  /// -q: `node: ip-address = IP, hardware-address = MAC` as xCAT's makedhcp -q prints.
  std::vector<std::string> lines;
  dhcp_change change;
  /// Nothing may be applied (a configuration error, duplicated addresses, a bad backend).
  bool refused = false;
};

/// Plans `req` on `view` with the settings `cfg` and this host's `facts`. -q asks the
/// server (dhcp_backend::query) and warns of each difference from the store. Never writes.
/// @throws store::error for a malformed noderange.
makedhcp_plan plan_makedhcp(const store::cluster_view& view, const makedhcp_request& req,
                            const dhcp_config& cfg, const dhcp_host_facts& facts,
                            const store::noderange_options& opts);

/// POST/DELETE /nodes/{nr}/dhcp and POST /services/dhcp (`call.command` "", "-d", "-n"): the
/// plan on one snapshot of `db` (refused when `auth` is stale), then, unless
/// `call.dry_run`, applied. Success: `created`, warnings as `messages` (`Warning: ...`);
/// dry run: the diff's lines in `names`; failure: xCAT's error lines.
api_result run_make_dhcp(const store::database& db, const api_call& call, const authorization& auth,
                         const store::noderange_options& opts, const dhcp_config& cfg);

} // namespace cws::api
