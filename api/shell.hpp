#pragma once

// nodeshell and xdsh planning: a call's nodes become SSH jobs run as the authenticated user
// with that user's key, as one node_operation on the SSH engine.

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "api/call.hpp"
#include "api/node_operation.hpp"
#include "api/operations.hpp"
#include "ssh/engine.hpp"

namespace cws::api {

/// How commands run on nodes. Every limit is explicit (docs/nodeshell.md).
struct shell_config {
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
};

/// The private key commands run with for `user`.
std::filesystem::path user_key(const shell_config& cfg, const std::string& user);

/// Plans `call.command` on `targets` as `user` (never anyone else: the identity is not the
/// request's to choose) on `engine`, after `copy` (if any: api/copy.hpp) on each node.
/// @returns a failure when the user has no key; else `out` is set.
api_result plan_shell(const api_call& call, const std::string& user,
                      std::vector<node_target> targets, const shell_config& cfg,
                      std::shared_ptr<ssh::engine> engine, node_operation_ptr& out,
                      std::shared_ptr<const ssh::copy_spec> copy = nullptr);

} // namespace cws::api
