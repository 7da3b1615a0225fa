#pragma once

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <functional>
#include <memory>

#include "actors/atoms.hpp"
#include "actors/executor_actor.hpp"
#include "api/job.hpp"

namespace cws::store {
class database;
}

namespace cws::actors {

/// The jobs: every fan-out call runs as a job on the executor, apart from the HTTP call that
/// started it. A synchronous call is a job its caller awaits (its client may leave: the job
/// runs on and can be read or cancelled); an async one (`api_call::async`) is answered at once
/// with the job's id. A job's record (id, user, operation, target count, state, times) is kept
/// in the store's meta space (`job.<id>`), its nodes' results in memory within
/// `output_max_bytes`; finished jobs are forgotten after `keep` or past `keep_max`. Records of
/// jobs that were running when the service stopped read `interrupted` after a start.
/// A user reads and cancels only that user's jobs (another's is "not found"); root all.
using jobs_actor = caf::typed_actor<
  // Runs an authorized fan-out call as a job, or a job call (api::is_job_call), and calls
  // `done` with the result (an async call: at once, accepted with its job's id); the
  // store's and the executor's protocol.
  caf::reacts_to<run_atom, api::api_call_ptr, api::authorization, done_ptr>>;

/// How the jobs actor runs.
struct jobs_config {
  /// Output (stdout and stderr) of a job's nodes kept in memory, at most; past it a node's
  /// output is cut and marked `truncated` (job_output_max_bytes). A synchronous caller still
  /// gets every byte: the job's copy is cut when its caller has the answer.
  size_t output_max_bytes = 16 << 20;
  /// Finished jobs are forgotten this long after they ended (jobs_keep_s) ...
  std::chrono::seconds keep{3600};
  /// ... and the oldest finished ones past this many jobs (jobs_keep_max).
  size_t keep_max = 1000;
  /// Where records persist (none: in memory only).
  std::shared_ptr<store::database> db;
  /// Write records on a thread of their own (fsync must not stall the scheduler). Tests
  /// under the deterministic test coordinator turn this off.
  bool detached_writer = true;
  /// The clock, in Unix milliseconds (tests set their own).
  std::function<int64_t()> now_ms;
  /// Told of each job's creation, progress (at most every `progress_every` of a job) and
  /// end (`created`, `progress`, `ended`; the event stream); on the jobs actor's thread,
  /// quick. None: nobody is told.
  std::function<void(const api::job_info& job, const char* what)> on_event;
  std::chrono::milliseconds progress_every{250};
  /// Told when an rpower result shows a node's power state (on, off) other than the last one
  /// seen (the first one seen included). None: nobody is told.
  std::function<void(const std::string& node, const std::string& state)> on_power;
};

/// Spawns the jobs actor over `executor`; reads the records of the store (a running one is
/// now interrupted).
jobs_actor spawn_jobs(caf::actor_system& sys, executor_actor executor, jobs_config cfg);

} // namespace cws::actors
