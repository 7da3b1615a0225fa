#pragma once

#include <caf/actor_system.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>

#include "actors/messages.hpp"
#include "actors/store_actor.hpp"
#include "ssh/engine.hpp"

namespace cws::actors {

using ssh_result_ptr = std::shared_ptr<const ssh::result>;

/// The fan-out executor: splits noderange operations into per-node work. nodeshell runs the
/// command on every node over the SSH engine, at most `fanout` at once, as the authenticated
/// user; node deletes check every node in parallel slices and commit the range in one
/// transaction.
using executor_actor = caf::typed_actor<
  // Runs an authorized nodeshell or node delete; replies when every node is done, results in
  // noderange order (a streaming call also gets each result as it completes).
  caf::replies_to<exec_atom, api_call_ptr>::with<api_result>,
  // Internal: node `index` of request `id` finished.
  caf::reacts_to<node_atom, uint64_t, size_t, ssh_result_ptr>,
  // Internal: every node of request `id` finished.
  caf::reacts_to<done_atom, uint64_t>>;

/// How the executor runs. Every limit is explicit.
struct executor_config {
  /// Nodes worked on at once when the request does not say (xdsh's 64).
  size_t fanout = 64;
  /// The most a request may ask for.
  size_t fanout_max = 1024;
  /// SSH port for nodes without `sshport`.
  uint16_t port = 22;
  /// Command timeout when the request does not say; 0 = none (xdsh's default).
  std::chrono::milliseconds command_timeout{0};
  /// Keys: `<key_dir>/<user>/id_ed25519` (root's too).
  std::filesystem::path key_dir;
  /// Parallel slices a node delete is checked in.
  size_t delete_workers = 16;
  /// Request timeout to the store.
  std::chrono::seconds store_timeout{60};
};

/// Reads the `ssh_*` settings of clusterws.conf (docs/nodeshell.md) into both configurations;
/// keys live under `<home>/ssh` unless configured.
/// @throws std::invalid_argument for a malformed value.
void apply_ssh_settings(const std::map<std::string, std::string>& settings,
                        const std::filesystem::path& home, executor_config& exec,
                        ssh::engine_config& engine);

/// Spawns the executor over the store and the SSH engine.
executor_actor spawn_executor(caf::actor_system& sys, store_actor store,
                              std::shared_ptr<ssh::engine> engine, executor_config cfg);

/// The private key the executor uses for `user`.
std::filesystem::path user_key(const executor_config& cfg, const std::string& user);

} // namespace cws::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::ssh_result_ptr)
