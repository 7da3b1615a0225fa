#pragma once

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <filesystem>
#include <memory>

#include "actors/atoms.hpp"
#include "actors/events_actor.hpp"
#include "api/dhcp.hpp"
#include "api/makedns.hpp"
#include "api/service_metrics.hpp"
#include "base/task_thread.hpp"
#include "store/database.hpp"

namespace cws::actors {

/// The store: the only owner of the LMDB environment in the daemon. Reads run on a pool of
/// reader actors; writes are gathered into batches on the scheduler and handed to one writer
/// on its own thread that group-commits them (one fsync for every write waiting), and each
/// result is handed on only after its data is durable.
using store_actor = caf::typed_actor<
  // Runs an authorized read or write (api/operations.hpp) and calls `done` with the result
  // where it is ready (for a write, on the writer's thread after the commit): no reply
  // message, so the result skips a hop back through the caller.
  caf::reacts_to<run_atom, api::api_call_ptr, api::authorization, done_ptr>,
  // Runs a read that is not an API call (the boot listener) on a reader.
  caf::reacts_to<run_atom, read_fn_ptr>,
  // Runs a write that is not an API call (the boot listener's install status) in a group
  // commit, and calls `done` with its result once durable.
  caf::reacts_to<run_atom, write_fn_ptr, done_ptr>,
  // Reads the next page (up to the count) of a large listing a read answered with `pages`,
  // and calls `done` with a result whose `objects` are the page (none: the listing is over).
  caf::reacts_to<page_atom, api::object_pages_ptr, size_t, done_ptr>,
  // Plans an authorized fan-out call in one read: the executor's `bind` makes the operation
  // (the transports are the executor's, never the store's).
  caf::replies_to<plan_atom, api::api_call_ptr, api::authorization, bind_ptr>::with<plan_reply>,
  // Replies the current policy snapshot (passwords, policy rows with their nodes).
  caf::replies_to<snapshot_atom>::with<api::auth_snapshot_ptr>,
  // The generations of the policy/passwd tables and of group membership, as of now.
  caf::replies_to<generation_atom>::with<uint64_t, uint64_t>,
  // Looks up a token by the SHA-256 (hex) of its id.
  caf::replies_to<token_atom, std::string>::with<api::token_info>,
  // Expands a noderange as policy sees it (unverified) within the service's limits; a bad
  // noderange is an error whose context is the message. `true`: for a caller who may not
  // read masked attributes (noderange_options::hide_secrets).
  caf::replies_to<expand_atom, std::string, bool>::with<std::vector<std::string>>>;

/// How the store actor runs.
struct store_config {
  /// Reader actors serving reads in parallel.
  size_t readers = 2;
  /// Run the writer on its own thread (fsync must not stall the scheduler). Tests under the
  /// deterministic test coordinator turn this off.
  bool detached_writer = true;
  /// Most writes committed together.
  size_t max_batch = 512;
  /// How long a commit may wait for the writes of the clients the last commit answered
  /// (0: commit at once). Bounded; a client that does not come back costs this once.
  std::chrono::microseconds commit_wait{1000};
  /// Limits of noderanges in requests (files are never allowed).
  store::noderange_options noderange;
  /// makedns over REST (POST/DELETE /nodes/{nr}/dns, POST /services/dns): its files, server
  /// and key (settings `dns_*`).
  api::dns_config dns;
  /// makedhcp's settings (REST /nodes/{nr}/dhcp, /services/dhcp).
  api::dhcp_config dhcp;
  /// Where the calls that change system files run (makehosts, makedhcp, makedns: file writes, a
  /// reload, Kea's socket, DNS updates), one at a time and off the actor threads; their answer
  /// comes back through a reader. None: they run on a reader (tests).
  std::shared_ptr<base::task_thread> system_changes;
  /// The hosts file makehosts writes (setting `hosts_file`).
  std::filesystem::path hosts_file = "/etc/hosts";
  /// The largest hosts file it reads (setting `hosts_file_max_bytes`).
  size_t hosts_file_max = 256 * 1024 * 1024;
  /// Where commits, their failures, batch sizes and commit times are counted.
  std::shared_ptr<api::service_metrics> metrics = std::make_shared<api::service_metrics>();
  /// The change feed: the writer holds it back from commits not durable yet and tells it
  /// when they are (none: no feed).
  std::shared_ptr<durable_mark> durable;
  events_actor events;
};

/// Spawns the store over `db`.
store_actor spawn_store(caf::actor_system& sys, std::shared_ptr<store::database> db,
                        store_config cfg);

} // namespace cws::actors
