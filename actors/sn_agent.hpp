#pragma once

// A service node's side of its link to the head (docs/service-nodes.md): dials the head over
// caf::openssl without blocking an actor thread (the middleman actor's connect, asked with a
// timeout), registers (hello, challenge, join with the proof of its secret), trades
// heartbeats, and when the head goes silent or the link drops ends that head's work
// (`on_head_lost`) and dials again with backoff. A refusal by the head (another protocol
// version, an unknown name, a wrong secret) is permanent: `on_refused`, no more dials.

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "actors/service_node_actor.hpp"

namespace cws::actors {

/// What the agent shows the rest of the service node (its log, metrics): thread-safe.
struct sn_agent_board {
  std::atomic<bool> registered{false};
  std::atomic<uint64_t> dials{0};
  std::atomic<uint64_t> registrations{0};
  std::atomic<uint64_t> heartbeats_sent{0};
  std::atomic<uint64_t> heartbeats_received{0};
};

/// How the agent runs.
struct sn_agent_config {
  /// This service node's name and secret (its home, from clusterctl sn add).
  std::string name;
  std::string secret;
  /// The head's service-node listener.
  std::string host;
  uint16_t port = 0;
  /// The protocol version claimed (api::sn_protocol_version; a test claims another).
  uint32_t version = 0;
  std::chrono::milliseconds heartbeat{1000};
  std::chrono::milliseconds dead_after{5000};
  std::chrono::milliseconds redial_min{1000};
  std::chrono::milliseconds redial_max{30000};
  std::chrono::milliseconds connect_timeout{10000};
  /// This service node's executor (spawn_service_node): the join names it, and the head
  /// sends it its shares.
  sn_executor_actor executor;
  /// Nodes in flight here (sent in heartbeats).
  std::function<uint32_t()> load;
  /// The head refused this service node for good (why): the daemon stops.
  std::function<void(const std::string&)> on_refused;
  /// The link to a registered head was lost (why): end that head's work.
  std::function<void(const std::string&)> on_head_lost;
  std::shared_ptr<sn_agent_board> board = std::make_shared<sn_agent_board>();
};

/// Spawns the agent; it dials at once. Needs caf::openssl's manager loaded.
caf::actor spawn_sn_agent(caf::actor_system& sys, sn_agent_config cfg);

} // namespace cws::actors
