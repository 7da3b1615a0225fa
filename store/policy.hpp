#pragma once

#include <string>
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
  /// The nodes of the request's noderange, sorted; empty with `has_noderange` false if none.
  std::vector<std::string> nodes;
  bool has_noderange = false;
};

/// The decision and the row that made it.
struct policy_decision {
  bool allowed = false;
  /// Priority of the deciding row; empty when the end of the table denied.
  std::string row;
};

/// xCAT policy semantics (xcat-compat.md §5.5): rows in priority order; every field of a row
/// must match; a noderange row that allows part of the nodes removes those and evaluation
/// goes on; the first deciding row wins; `allow`, `accept` or `trusted` allow; default deny.
policy_decision evaluate_policy(const std::vector<policy_row>& sorted_rows,
                                const policy_request& req);

} // namespace cws::store
