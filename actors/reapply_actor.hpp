#pragma once

#include <caf/actor_system.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <functional>
#include <set>
#include <string>

#include "actors/atoms.hpp"
#include "actors/events_actor.hpp"
#include "actors/store_actor.hpp"
#include "store/change_feed.hpp"

namespace cws::actors {

/// The provisioning re-apply (setting `provision_reapply = on`): follows the change feed and,
/// when nodes are created or a node's name, MAC or addresses change, re-runs what depends on
/// them for those nodes: makehosts, makedhcp and, when DNS is configured, makedns, each as the
/// REST resource runs it (through the store, on its system-change thread). A burst of changes
/// (a chdef loop, a mkdef of a thousand nodes) is one re-apply, `delay` after its first
/// change. It never writes the store, so its own work raises no change to follow.
using reapply_actor = change_subscriber::extend<caf::reacts_to<tick_atom>>;

/// How the re-apply runs.
struct reapply_config {
  /// From the first change of a burst to the re-apply (`provision_reapply_delay_ms`).
  std::chrono::milliseconds delay{500};
  /// Whether makedns is re-run (DNS is configured: makedns has run once); asked at each
  /// re-apply. None: never.
  std::function<bool()> dns_configured;
};

/// The nodes of `set` whose hosts, DHCP or DNS entries may have changed: created nodes and
/// nodes with a changed name-, MAC- or address-bearing attribute (ip, mac, hostnames,
/// otherinterfaces, nic*, groups: an inherited value). Added to `out`.
void reapply_nodes(const store::change_set& set, std::set<std::string>& out);

/// Spawns the re-apply and subscribes it to `events` (from now on).
reapply_actor spawn_reapply(caf::actor_system& sys, events_actor events, store_actor store,
                            reapply_config cfg);

} // namespace cws::actors
