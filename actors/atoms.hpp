#pragma once

// The atoms of the actor system and the message types CAF may carry without serialization
// (they never leave the process). Each atom means one thing.

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "api/auth.hpp"
#include "api/call.hpp"
#include "api/node_operation.hpp"
#include "api/object_pages.hpp"
#include "api/result.hpp"

namespace cws::store {
class database;
class write_txn;
struct noderange_options;
} // namespace cws::store

namespace cws::actors {

// CAF 0.17: at most 10 characters.

/// A call handed to a dispatcher (service entry).
using submit_atom = caf::atom_constant<caf::atom("submit")>;
/// Authorize a call (policy).
using authz_atom = caf::atom_constant<caf::atom("authz")>;
/// Run an authorized call (store: reads and writes; executor: fan-out calls; a dispatcher:
/// what policy allowed but the store does not run).
using run_atom = caf::atom_constant<caf::atom("run")>;
/// Read the next page of a large listing (store).
using page_atom = caf::atom_constant<caf::atom("page")>;
/// Plan an authorized fan-out call (store).
using plan_atom = caf::atom_constant<caf::atom("plan")>;
/// The policy snapshot (store).
using snapshot_atom = caf::atom_constant<caf::atom("snapshot")>;
/// The generations of policy and membership (store).
using generation_atom = caf::atom_constant<caf::atom("generation")>;
/// Look up a token (store).
using token_atom = caf::atom_constant<caf::atom("token")>;
/// Expand a noderange for policy (store).
using expand_atom = caf::atom_constant<caf::atom("expand")>;
/// Check a password against its hash (hasher).
using verify_atom = caf::atom_constant<caf::atom("verify")>;
/// Counters (policy).
using stats_atom = caf::atom_constant<caf::atom("stats")>;
/// Internal: answer a delayed failure (policy).
using fail_atom = caf::atom_constant<caf::atom("fail")>;
/// Internal: writes gathered for one commit (store gatherer -> writer).
using batch_atom = caf::atom_constant<caf::atom("batch")>;
/// Internal: commit what is queued (store writer, to itself).
using commit_atom = caf::atom_constant<caf::atom("commit")>;
/// Internal: make the last commit durable unless another commit follows (store writer, to
/// itself).
using flush_atom = caf::atom_constant<caf::atom("flush")>;
/// Internal: hand the gathered writes to the writer (store gatherer, to itself).
using handover_atom = caf::atom_constant<caf::atom("handover")>;
/// Internal: one node of a fan-out operation finished (executor).
using node_atom = caf::atom_constant<caf::atom("node")>;
/// Internal: every node of a fan-out operation finished (executor).
using done_atom = caf::atom_constant<caf::atom("done")>;
/// Subscribe to the change feed (events).
using subscribe_atom = caf::atom_constant<caf::atom("subscribe")>;
/// One stream of a subscriber has its backlog: what the feed sends to every stream is its
/// too from then on (to a stream_subscriber).
using join_atom = caf::atom_constant<caf::atom("join")>;
/// Stop a subscription (events).
using unsubscribe_atom = caf::atom_constant<caf::atom("unsubscr")>;
/// The store's writer made its commits durable (events).
using durable_atom = caf::atom_constant<caf::atom("durable")>;
/// A subscriber missed change sets and must read the state again (to a subscriber).
using reset_atom = caf::atom_constant<caf::atom("reset")>;
/// Internal: a periodic look (events: commits of other processes).
using tick_atom = caf::atom_constant<caf::atom("tick")>;

/// Publish an activity (events).
using publish_atom = caf::atom_constant<caf::atom("publish")>;
/// Internal: a job's nodes were planned (jobs).
using job_atom = caf::atom_constant<caf::atom("job")>;
/// Internal: write a job's record (jobs, to its writer).
using record_atom = caf::atom_constant<caf::atom("record")>;
/// A service node dials its head now (sn_agent).
using dial_atom = caf::atom_constant<caf::atom("dial")>;

// Service nodes (actors/service_node_actor.hpp, actors/delegation_actor.hpp): these cross the
// link between the head and a service node.
/// Run a share of a job (head -> service node).
using sn_run_atom = caf::atom_constant<caf::atom("snrun")>;
/// A batch of a share's results (service node -> head).
using sn_batch_atom = caf::atom_constant<caf::atom("snbatch")>;
/// A batch was consumed: one more may be sent (head -> service node).
using sn_credit_atom = caf::atom_constant<caf::atom("sncredit")>;
/// End a share's work (head -> service node).
using sn_cancel_atom = caf::atom_constant<caf::atom("sncancel")>;
/// A share's last word: every node reported, or the share refused (service node -> head).
using sn_end_atom = caf::atom_constant<caf::atom("snend")>;

// The console server (actors/console_actor.hpp).
/// A watcher attaches to a console / the console's bytes to a watcher.
using attach_atom = caf::atom_constant<caf::atom("attach")>;
using console_atom = caf::atom_constant<caf::atom("console")>;
/// A watcher leaves a console / the console server let go of a watcher.
using detach_atom = caf::atom_constant<caf::atom("detach")>;
using detached_atom = caf::atom_constant<caf::atom("detached")>;
/// A message for a watcher (read-only, taken over, console lost, ...).
using notice_atom = caf::atom_constant<caf::atom("notice")>;
/// Keystrokes from a console's writer; a break to the host.
using input_atom = caf::atom_constant<caf::atom("input")>;
using break_atom = caf::atom_constant<caf::atom("break")>;
/// A watcher wrote out bytes it received (its queue shrinks).
using ack_atom = caf::atom_constant<caf::atom("ack")>;
/// Every console's state (console server).
using status_atom = caf::atom_constant<caf::atom("status")>;
/// Internal: console bytes and console events from the console I/O; a reconnect is due; read
/// the definitions again.
using output_atom = caf::atom_constant<caf::atom("output")>;
using sol_atom = caf::atom_constant<caf::atom("sol")>;
using retry_atom = caf::atom_constant<caf::atom("retry")>;
using refresh_atom = caf::atom_constant<caf::atom("refresh")>;

/// Where a call's result goes when no reply message carries it back: called exactly once, on
/// an actor thread.
using done_fn = std::function<void(api::api_result)>;
using done_ptr = std::shared_ptr<done_fn>;

/// Where policy's decision on a call goes when no reply message carries it back: called
/// exactly once, on the policy actor's thread.
using verdict_fn = std::function<void(api::auth_result)>;
using verdict_ptr = std::shared_ptr<verdict_fn>;

/// The store's answer to plan_atom: a failure, or the operation to run.
struct plan_reply {
  api::api_result failure;
  api::node_operation_ptr op;
};

using node_result_ptr = std::shared_ptr<base::node_result>;

/// Binds an authorized fan-out call to the operation of its transport, in one read of the
/// store's database on a store reader: api::plan over the executor's transports in the daemon
/// (so the store knows no transport), a fake in tests. Sets `out` on success.
using bind_fn = std::function<api::api_result(
  const store::database& db, const api::api_call& call, const api::authorization& auth,
  const store::noderange_options& opts, api::node_operation_ptr& out)>;
using bind_ptr = std::shared_ptr<const bind_fn>;

/// A read of the store that is not an API call (the node-facing boot listener: no user, no
/// policy): runs on a store reader with the database and answers by its own means.
using read_fn = std::function<void(const store::database& db)>;
using read_fn_ptr = std::shared_ptr<const read_fn>;

/// A write that is not an API call (the boot listener's install status): runs in the writer's
/// group commit like any write; its result goes to `done` once durable.
using write_fn = std::function<api::api_result(store::write_txn& t)>;
using write_fn_ptr = std::shared_ptr<const write_fn>;

} // namespace cws::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::read_fn_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::write_fn_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::api::api_call_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::api::authorization)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::api::api_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::api::auth_snapshot_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::api::object_pages_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::api::token_info)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::api::auth_result)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::verdict_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::api::auth_stats)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::done_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::plan_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::node_result_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::bind_ptr)
