#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/node_result.hpp"

namespace cws::api {

/// One planned per-node operation over a list of nodes, ready to run on its transport: the
/// interface the fan-out executor drives. The executor keeps fanout limits, per-node results,
/// streaming and cancellation in one place and does not know whether a node's work is an
/// SSH command (api/shell.hpp), an IPMI or libvirt call, or a range delegated to a service
/// node: each is an implementation of this class.
class node_operation {
 public:
  virtual ~node_operation() = default;

  using result_fn = std::function<void(size_t index, base::node_result r)>;

  /// The nodes, in noderange order: result indexes refer to it.
  virtual const std::vector<std::string>& nodes() const = 0;

  /// Starts every node, at most the planned fanout at once, each bounded by its per-node
  /// deadline. Calls `on_result` once per node as it ends, then `on_done`; on the
  /// transport's thread, so both must be quick (post elsewhere). Called once.
  virtual void start(result_fn on_result, std::function<void()> on_done) = 0;

  /// Output of node `index` as it arrives (stream 0 stdout, 1 stderr).
  using output_fn = std::function<void(size_t index, int stream, const char* data, size_t size)>;

  /// Asks for output as it arrives, besides the results (xdsh -s); before `start`, on the
  /// transport's thread, quick. Operations whose nodes have no output stream ignore it.
  virtual void stream_output(output_fn f) {
    (void)f;
  }

  /// Ends the nodes still running or waiting; each still gets its result (error
  /// `cancelled`). Any thread; after the end it does nothing.
  virtual void cancel() = 0;
};

using node_operation_ptr = std::shared_ptr<node_operation>;

} // namespace cws::api
