#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "store/codec.hpp"

namespace cws::store {

/// One row of the policy table, ready for evaluation.
struct policy_row {
  std::string priority;
  double order = 0;
  std::string name;
  std::string host;
  std::string commands;
  std::string parameters;
  std::string noderange;
  std::string rule;
  /// The row's noderange expanded (sorted), when it has one.
  std::vector<std::string> nodes;
};

/// Builds a row from a policy object; nullopt-like empty priority if the row is disabled.
/// Rows with `disable` set (other than 0/no) are skipped by xCAT and must be left out.
bool policy_row_enabled(const attr_map& attrs);

/// Makes an evaluable row from policy object `priority` (noderange not yet expanded).
policy_row make_policy_row(const std::string& priority, const attr_map& attrs);

/// True if `rule` is a rule the store accepts when a row is written: allow, accept, trusted,
/// deny (any case). Rows stored before are still read as xCAT reads them (see `allows`).
bool is_policy_rule(std::string_view rule);

/// Sorts rows numerically by priority, lowest first (xcatd.pm validate).
void sort_policy(std::vector<policy_row>& rows);

/// What is being asked.
struct policy_request {
  /// The authenticated user (never empty: the service authenticates first).
  std::string user;
  /// Names of the client: its address, and `localhost` for loopback.
  std::vector<std::string> hosts;
  /// The xCAT command the route maps to (lsdef, chdef, mkdef, rmdef, nodels, xdsh, ...).
  std::string command;
  /// The request's arguments joined by spaces (for `parameters` rows).
  std::string arguments;
  /// The request has a noderange (`has_noderange`); its nodes, sorted, once `nodes_known`.
  std::vector<std::string> nodes;
  bool has_noderange = false;
  bool nodes_known = false;
  /// The caller proved a host's identity (xCAT: a host certificate). No caller does yet (a
  /// password, a token and the local socket name users), so `trusted` rows match nobody.
  bool host_identity = false;
};

/// The decision and the row that made it.
struct policy_decision {
  bool allowed = false;
  /// Priority of the deciding row; empty when the end of the table denied.
  std::string row;
  /// Undecided: a row with a noderange matches everything else, so the request's nodes are
  /// needed (evaluate again with `nodes_known`). Never set once the nodes are known.
  bool needs_nodes = false;
};

/// xCAT policy semantics (xcat-compat.md §5.5): rows in priority order; every field of a row
/// must match; a noderange row that allows part of the nodes removes those and evaluation
/// goes on; the first deciding row wins; `allow`, `accept` or `trusted` allow; default deny.
/// A `trusted` row names a host (xCAT's `1.2 <hostname> trusted`), so it is read only for a
/// caller with `host_identity`: a user who shares the host's name gains nothing from it.
/// Rows are read in order until one needs the request's nodes, so a request that rows
/// without noderanges decide (or that no row names) is decided without expanding anything.
policy_decision evaluate_policy(const std::vector<policy_row>& sorted_rows,
                                const policy_request& req);

} // namespace cws::store
