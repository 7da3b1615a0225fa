#pragma once

// Jobs: a fan-out call run apart from the HTTP call that started it (actors/jobs_actor.hpp),
// as a client reads it back. Plain types, no actors: the record kept in the store and the
// view rendered by http/render.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/node_result.hpp"

namespace cws::api {

enum class operation : uint8_t;

/// Where a job is in its life.
enum class job_state : uint8_t {
  queued,      ///< accepted, its nodes not planned yet
  running,     ///< its nodes run
  done,        ///< every node answered (some may have failed: see the counts)
  cancelled,   ///< DELETE /jobs/{id} (or the caller's call_timeout) ended it
  failed,      ///< it could not run (a bad noderange, a refused plan, too many nodes)
  interrupted, ///< the service stopped or restarted while it ran
};

/// The state's wire name (`queued`, `running`, ...).
const char* job_state_name(job_state s);

/// True for the states a job ends in.
bool job_ended(job_state s);

/// A job as a client reads it.
struct job_info {
  /// 16 hex digits, random.
  std::string id;
  /// Who started it.
  std::string user;
  /// What it runs: the operation's name (nodeshell, nodecopy, power, ...).
  std::string operation;
  job_state state = job_state::queued;
  /// Nodes planned, nodes answered so far, and of those how many failed.
  size_t targets = 0;
  size_t finished = 0;
  size_t failed = 0;
  /// Nodes whose output was cut, or dropped, at job_output_max_bytes.
  size_t truncated = 0;
  /// Unix times in milliseconds (0: not yet).
  int64_t created_ms = 0;
  int64_t started_ms = 0;
  int64_t ended_ms = 0;
  /// A failed job: why.
  std::vector<std::string> messages;
  /// GET /jobs/{id}: the nodes answered so far, in the order they finished (their output
  /// within job_output_max_bytes).
  std::vector<base::node_result> nodes;
  /// The operation, for rendering the nodes in its format=detail shape.
  cws::api::operation op{};
};

/// The name of a fan-out operation (nodeshell, nodecopy, power, nextboot, eventlog, beacon,
/// vitals, inventory, nodestat), "" for others.
const char* operation_name(operation op);

/// The record of a job kept in the store: id, user, operation, target count, state, times
/// (never outputs).
std::string encode_job_record(const job_info& job);

/// Reads a record encode_job_record wrote; false when it is damaged.
bool decode_job_record(std::string_view text, job_info& out);

/// The prefix of the job records' keys in the store's meta space (`job.<id>`).
inline constexpr std::string_view job_record_prefix = "job.";

} // namespace cws::api
