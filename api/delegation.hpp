#pragma once

// Which nodes of a fan-out call go where: the head's own share, one share per service node,
// and the nodes that cannot run at all (docs/service-nodes.md "Which nodes go where"). Pure:
// the caller reads each node's `servicenode` (noderes, inherited from groups) and knows which
// service nodes are registered and up; nothing here reads the store or talks to a peer.

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "api/wire.hpp"

namespace cws::api {

/// What a node whose every service node is down gets (the `sn_fallback` setting).
enum class sn_fallback : uint8_t {
  fail,   ///< a per-node `servicenode` error naming the service nodes (default)
  direct, ///< it runs from the head, as if it had no service node
};

/// How delegated work runs (sn_* settings).
struct delegation_settings {
  sn_fallback fallback = sn_fallback::fail;
  /// Batches a service node may have sent and not seen credited (sn_credits).
  uint32_t credits = 4;
  /// Results in one batch at most (sn_batch_nodes) and their bytes (sn_batch_bytes).
  uint32_t batch_nodes = 128;
  uint64_t batch_bytes = 4u << 20;
  /// Bytes of a copy's files carried in a share at most (sn_copy_max; api/copy_share.hpp).
  uint64_t copy_max = 16u << 20;
};

/// What the head knows of its service nodes when it plans a call.
struct service_nodes {
  /// Every service node the head knows, registered now or not, by name: true if it is
  /// registered and up. A target that is itself one of them runs from the head.
  std::unordered_map<std::string, bool> known;
  /// The names meaning the head itself (site.master, its host names and addresses): a
  /// `servicenode` entry naming one runs the node from the head.
  std::unordered_set<std::string> head;
  sn_fallback fallback = sn_fallback::fail;
};

/// The nodes one service node runs: indexes into the call's nodes, ascending.
struct sn_share {
  std::string service_node;
  std::vector<uint32_t> indexes;
};

/// A node that runs nowhere, and why (its result's message; error `servicenode`).
struct sn_refusal {
  uint32_t index = 0;
  std::string message;
};

/// Where each node of a call runs. Every index of the call is in exactly one of `head`,
/// one share, or `refused`.
struct delegation_plan {
  /// Run from the head, ascending.
  std::vector<uint32_t> head;
  /// One per service node with nodes, by service node name.
  std::vector<sn_share> shares;
  /// Nodes whose every service node is down (sn_fallback = fail), ascending.
  std::vector<sn_refusal> refused;

  /// True if nothing goes to a service node and nothing is refused.
  bool all_on_head() const {
    return shares.empty() && refused.empty();
  }
};

/// Plans the call's nodes `names` (noderange order) whose `servicenode` values are
/// `servicenode` (same order; "" none), with xCAT's meaning: a comma list of names as the
/// head knows them, the first one that is up wins, the rest are backups. From the head: a
/// node with no value, a node whose first usable entry names the head, a node that is itself
/// a service node. A node none of whose entries is up is refused, or runs from the head
/// with `sn_fallback = direct`. Each distinct value is read once (nodes inherit it from a
/// few groups), so 10,000 nodes cost a few lookups each.
/// @pre names.size() == servicenode.size() and fits in 32 bits.
delegation_plan plan_delegation(const std::vector<std::string>& names,
                                const std::vector<std::string>& servicenode,
                                const service_nodes& sns);

/// The request's fanout split across the engines that run its nodes: `counts[i]` nodes on
/// engine i (0: it runs none, and gets 0). Each engine with nodes gets a part in proportion
/// to its nodes, at least 1 and never more than its nodes; the parts add up to `fanout`
/// unless that is less than the engines with nodes (each still gets 1) or more than the nodes.
std::vector<size_t> split_fanout(size_t fanout, const std::vector<size_t>& counts);

/// Service node `service_node`'s share of `job` (the whole call's request, target i being
/// node i): the targets at `indexes`, re-indexed 0..n-1 in that order, under share id `id`,
/// with fanout `fanout` and the batch settings of `s`.
wire::share_request make_share(const wire::job_request& job, const std::vector<uint32_t>& indexes,
                               std::string service_node, uint64_t id, size_t fanout,
                               const delegation_settings& s);

} // namespace cws::api
