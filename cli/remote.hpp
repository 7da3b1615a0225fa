#pragma once

// lsdef's, nodels' and xdsh's requests to clusterwsd over the local socket, for a caller who
// cannot open the store (docs/cli.md, "Users other than root"). Each is the REST request an
// HTTPS client would send, so policy decides exactly as it does there; the tools print the
// answers with the formatters of the direct path.

#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/node_result.hpp"
#include "cli/commands.hpp"
#include "cli/local_client.hpp"
#include "store/definitions.hpp"
#include "store/schema.hpp"

namespace cws::cli {

/// The daemon refused or failed a request: its messages (xCAT's client prints each as
/// `Error: ...`; a policy refusal is `Permission denied for request`).
class remote_error : public std::runtime_error {
 public:
  explicit remote_error(std::vector<std::string> messages);

  const std::vector<std::string>& messages() const noexcept {
    return messages_;
  }

 private:
  std::vector<std::string> messages_;
};

/// The daemon, reached over its local socket.
class remote {
 public:
  explicit remote(std::filesystem::path socket);

  /// Every object name of type `t` (lsdef without names; hidden nodes left out). Empty when
  /// there are none.
  /// @throws remote_error, std::runtime_error (unreachable daemon).
  std::vector<std::string> names(store::object_type t) const;

  /// The objects `spec` names (a noderange for nodes, else a comma list; the site for
  /// site) as lsdef -l shows them, and an error per missing name, as store::list_objects.
  store::listing objects(store::object_type t, const std::string& spec) const;

  /// The nodes of the verified noderange `spec`, sorted, hidden ones left out (nodels).
  std::vector<std::string> nodels(const std::string& spec) const;

  /// Runs `command` on the nodes of `spec` (nodeshell, streamed): `on_node` gets each node's
  /// result as it completes. `fanout` 0 and `timeout_s` -1 leave the daemon's defaults.
  void nodeshell(const std::string& spec, const std::string& command, long long fanout,
                 long long timeout_s, const std::function<void(base::node_result)>& on_node) const;

  /// Copies `sources` to `destination` on the nodes of `spec` (nodecopy, streamed; xdcp's -R
  /// and -p), as nodeshell.
  void nodecopy(const std::string& spec, const std::vector<std::string>& sources,
                const std::string& destination, bool recursive, bool preserve, long long fanout,
                long long timeout_s, const std::function<void(base::node_result)>& on_node) const;

  /// Any fan-out call (`method target`, e.g. PUT /clusterws/nodes/NR/power with `body`),
  /// streamed in nodeshell's detail shape (stream=1 in `target`; format=detail is added):
  /// `on_node` gets each node's result as the in-process path gives it. Sent with
  /// cancel_on_close=1: when this process ends (Ctrl-C) the daemon cancels the call.
  /// @throws remote_error when the daemon refused the call before any node ran, or the run
  /// failed on the way; std::runtime_error when it cannot be reached.
  void run(std::string_view method, const std::string& target, const std::string& body,
           const std::function<void(base::node_result)>& on_node) const;

 private:
  std::vector<store::listed_object> fetch(store::object_type t, const std::string& spec,
                                          std::vector<std::string>& missing) const;

  local_client client_;
};

/// Takes the xcatdefaults postscripts off a node's listed `postscripts` and
/// `postbootscripts` (the daemon lists them, as lsdef -l; lsdef -z leaves them out).
void strip_xcatdefaults(store::attr_map& attrs);

} // namespace cws::cli
