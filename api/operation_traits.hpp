#pragma once

// What each API operation is, in one row: whether it writes, whether it runs node by node,
// when it changes state (what the audit log records), the xCAT command policy rows name,
// and the key its per-node answers carry. A new verb is one row here, its planner
// (api/planner.cpp) and its renderer: nothing else asks "which operation is this?".

#include <cstddef>
#include <string_view>

#include "api/call.hpp"

namespace cws::api {

/// When a call of an operation changes state (and is audited).
enum class state_change : uint8_t {
  never,       ///< a read
  always,      ///< every call
  unless_stat, ///< every action but `stat` (rpower, rsetboot, rbeacon: `stat` reads)
  only_clear,  ///< the action `clear` only (reventlog: the rest read the log)
};

/// One operation's row.
struct operation_traits {
  operation op;
  /// Its name: logs, metrics, wire messages (api/wire.hpp).
  std::string_view name;
  /// It writes the database (the store's writer runs it).
  bool write;
  /// The executor runs it node by node (api/planner.cpp has its planner).
  bool fan_out;
  /// When it changes state: what the audit log records, and what audit_required refuses.
  state_change changes;
  /// The xCAT command policy rows name for it ("" = authentication is all it needs). A route
  /// names another where one operation answers several commands (tables, events, metrics).
  std::string_view policy_command;
  /// The key of a node's answer in xCAT's output (`{"n1":{"power":"on"}}`); "" = none.
  std::string_view result_key;
};

/// The number of operations (one row each).
constexpr size_t operation_count = static_cast<size_t>(operation::count_);

/// The row of `op` (an operation, never `count_`).
const operation_traits& traits(operation op);

/// The operation named `name` (as traits(op).name); nullptr for no such name.
const operation_traits* find_operation(std::string_view name);

/// True if `call` changes state (its operation's rule applied to its action): the audit
/// log records it, and `audit_required` refuses it while the log cannot be written.
bool changes_state(const api_call& call);

/// The xCAT command policy rows name for `op` (traits(op).policy_command).
inline std::string_view policy_command(operation op) {
  return traits(op).policy_command;
}

} // namespace cws::api
