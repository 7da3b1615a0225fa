#pragma once

// The head's registry of service nodes (docs/service-nodes.md): the one actor the head
// publishes on its service-node listener (caf::openssl, `sn_listen`). A service node dials
// the head and registers here (hello -> challenge, join -> welcome: its name, protocol
// version and the proof of its secret); the registry then trades heartbeats with it and
// marks it down when it goes silent for `dead_after` or its link drops. The live list is
// shared with the daemon's metrics page through an sn_board.

#include <caf/typed_actor.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "actors/service_node_actor.hpp"
#include "api/sn_link.hpp"

namespace cws::actors {

/// The registry's interface to service nodes (the handle published).
using sn_registry_actor = caf::typed_actor<
  // A service node says who it is: a challenge, or why it is refused.
  caf::replies_to<api::wire::sn_hello>::with<api::wire::sn_challenge>,
  // It proves it with its secret and names its executor (the actor the head sends shares
  // to): welcome, or why not.
  caf::replies_to<api::wire::sn_join, sn_executor_actor>::with<api::wire::sn_welcome>,
  // A registered service node is alive (and its load).
  caf::reacts_to<api::wire::sn_heartbeat>>;

/// One service node as the head sees it.
struct sn_status {
  std::string name;
  /// Registered now (false: it was, and it left).
  bool registered = false;
  /// Milliseconds since the epoch.
  int64_t joined_ms = 0;
  int64_t last_heartbeat_ms = 0;
  uint32_t load = 0;
  uint64_t heartbeats = 0;
  /// Why it left ("" while registered).
  std::string left;
};

/// What the head's delegated calls did with one service node (the metrics page).
struct sn_traffic {
  std::string name;
  /// Shares sent to it.
  uint64_t shares = 0;
  /// Result batches taken from it.
  uint64_t batches = 0;
  /// Nodes of its shares sent and not ended yet (no result taken, not given up on).
  uint64_t in_flight = 0;
};

/// What the registry shows the rest of the daemon (the metrics page): thread-safe.
class sn_board {
 public:
  /// Every service node seen since the start, by name.
  std::vector<sn_status> snapshot() const;
  void put(const sn_status& s);
  /// Counters: registrations, refusals, departures, heartbeats received.
  uint64_t joins() const;
  uint64_t refusals() const;
  uint64_t departures() const;
  uint64_t heartbeats() const;
  void count_join();
  void count_refusal();
  void count_departure();
  void count_heartbeat();

  /// The delegations' side (actors/delegation_actor): a share of `nodes` nodes sent to
  /// `name`; a batch taken from it with `ended` nodes' results; `ended` nodes of its shares
  /// ended otherwise (lost, refused, cancelled).
  void count_share(const std::string& name, size_t nodes);
  void count_batch(const std::string& name, size_t ended);
  void count_ended(const std::string& name, size_t ended);
  /// Every service node a share went to since the start, by name.
  std::vector<sn_traffic> traffic() const;

 private:
  mutable std::mutex mutex_;
  std::vector<sn_status> list_;
  uint64_t joins_ = 0;
  uint64_t refusals_ = 0;
  uint64_t departures_ = 0;
  uint64_t heartbeats_ = 0;
  std::map<std::string, sn_traffic> traffic_;
};

/// The service nodes the head's executor may delegate to (docs/service-nodes.md): every
/// service node the head knows (a secret in pki/sn/secrets) and, for each registered one,
/// its executor and its secret (the seal's key). The registry writes it; the executor's
/// planner reads a copy per call, on a store reader: thread-safe.
class sn_roster {
 public:
  /// A registered service node.
  struct member {
    sn_executor_actor executor;
    std::string secret;
  };
  /// What one call plans with.
  struct view {
    std::unordered_set<std::string> known;
    std::unordered_map<std::string, member> up;
  };

  /// A copy of the current set (an empty `known`: no service node is configured).
  view snapshot() const;
  /// True if the head knows any service node (a call then reads `servicenode`).
  bool any_known() const;
  void set_known(std::unordered_set<std::string> names);
  void put(const std::string& name, member m);
  void drop(const std::string& name);

 private:
  mutable std::mutex mutex_;
  view v_;
};

/// How the registry runs.
struct sn_registry_config {
  /// The per-service-node secrets: `<dir>/<name>` (clusterctl sn add writes them; sn remove
  /// deletes one, and the registry then drops that service node at its next tick).
  std::filesystem::path secrets;
  std::chrono::milliseconds heartbeat{1000};
  std::chrono::milliseconds dead_after{5000};
  /// The head's name, told to service nodes in the welcome.
  std::string head;
  std::shared_ptr<sn_board> board = std::make_shared<sn_board>();
  /// Where the registered service nodes' executors go for the head's executor.
  std::shared_ptr<sn_roster> roster = std::make_shared<sn_roster>();
  /// A service node joined or left ("joined", "left"), with why it left; on the actor's
  /// thread (the daemon: the event stream).
  std::function<void(const std::string& name, const char* what, const std::string& why)> on_event;
};

/// Spawns the registry.
sn_registry_actor spawn_sn_registry(caf::actor_system& sys, sn_registry_config cfg);

} // namespace cws::actors
