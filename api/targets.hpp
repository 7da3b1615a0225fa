#pragma once

// What a fan-out call runs on: the call's nodes, verified in one read, with the settings a
// request brings to a noderange (site.excludenodes, masked attributes), their ports, and the
// one fanout rule. Every planner (shell, hardware, nodestat) and the table API take these
// from here.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/auth.hpp"
#include "api/call.hpp"
#include "api/result.hpp"
#include "store/cluster_view.hpp"
#include "store/noderange.hpp"

namespace cws::api {

/// The noderange options of a request: the configured limits plus `site.excludenodes`,
/// which xCAT's noderange() removes from every expansion (the CLI's and the API's alike).
store::noderange_options noderange_options_for(const store::cluster_view& view,
                                               store::noderange_options opts);

/// True if the caller of `auth` may read masked attributes (store/schema.hpp
/// is_masked_attribute; passwd.password): root, and calls made in-process (the CLI on root's
/// store). Everyone else sees "********" and may not test them (docs/security.md N1).
bool reads_secrets(const authorization& auth);

/// `opts` for the caller of `auth`: hide_secrets set unless they may read masked attributes.
store::noderange_options caller_options(store::noderange_options opts, const authorization& auth);

/// The object names `spec` targets for type `t`: `clustersite` for the site, a noderange
/// (unverified, `site.excludenodes` removed) for nodes, else a comma list.
/// @throws store::error for a malformed or oversized noderange.
std::vector<std::string> target_names(const store::cluster_view& view, store::object_type t,
                                      std::string_view spec, const store::noderange_options& opts);

/// The call's nodes, verified in `view`: the nodes policy expanded (auth.nodes) as they are,
/// else `call.target` expanded with `opts` (the caller's) and `site.excludenodes`.
/// @returns a failure naming the missing nodes, or success with `out` set.
/// @throws store::error for a malformed or oversized noderange.
api_result verified_nodes(const store::cluster_view& view, const api_call& call,
                          const authorization& auth, const store::noderange_options& opts,
                          std::vector<std::string>& out);

/// A TCP or UDP port as an attribute holds it: a whole number from 1 to 65535.
/// @returns nothing for any other text (empty included).
std::optional<uint16_t> parse_port(std::string_view text);

/// The port node `node`'s attribute `attr` (sshport, bmcport) names; 0 when it is unset
/// (the caller's default applies).
/// @returns a failure naming the node, the attribute and the value when it is set to
/// anything but a port: the call runs on no node (a typo never reaches the wrong port).
api_result node_port(const store::cluster_view& view, const std::string& node, const char* attr,
                     uint16_t& out);

/// Where a node's per-node work goes: its address and port (`ip`, `sshport`, inherited).
struct node_target {
  std::string name;
  std::string address;
  /// 0: the transport's default port.
  uint16_t port = 0;
};

/// The nodes of the call's verified noderange with their `ip` and `sshport`, in one read.
/// @returns a failure (stale, missing nodes, bad noderange, bad sshport) or the targets.
api_result node_targets(const store::cluster_view& view, const api_call& call,
                        const authorization& auth, const store::noderange_options& opts,
                        std::vector<node_target>& out);

/// Each node's `servicenode` (noderes, inherited from its groups; "" none), in the order of
/// `nodes`: what api::plan_delegation reads.
std::vector<std::string> service_node_values(const store::cluster_view& view,
                                             const std::vector<std::string>& nodes);

/// The names meaning the head in a `servicenode` list: `site.master` (when set) and `own`
/// (the head's host names and addresses, which the daemon knows).
std::vector<std::string> head_names(const store::cluster_view& view, std::vector<std::string> own);

/// The one fanout rule of every fan-out operation: what the request asks (0: not asked)
/// else the configured default, never more than the configured most, never less than 1.
size_t effective_fanout(size_t requested, size_t configured, size_t most);

/// A number xCAT keeps in the site table (ipmitimeout, ipmiretries, syspowerinterval, ...).
struct site_number {
  const char* key;
  /// xCAT's default, used when the key is unset or empty.
  long fallback;
  long lo;
  long hi;
};

/// The site value `n.key` as a whole number within [lo, hi], or `n.fallback` when the key is
/// unset or empty.
/// @returns a failure naming the key, its value and the range when the value is set to
/// anything else: xCAT would use the text as Perl reads it ("abc" = 0, "5s" = 5), so the
/// call runs on no node rather than on a guess (docs/hardware.md).
api_result read_site_number(const store::read_txn& txn, const site_number& n, long& out);

} // namespace cws::api
