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

/// The provisioning re-apply (setting `provision_reapply = on`): follows the change feed and
/// re-runs what depends on the nodes that changed, each step as the REST resource runs it
/// (through the store, on its system-change thread): makehosts, makedhcp and, when DNS is
/// configured, makedns, for
/// - nodes created, or whose name, MAC or addresses change;
/// - nodes removed: their hosts lines (by name), DHCP reservations and DNS records go
///   (makehosts/makedhcp/makedns -d by name: the definition is gone);
/// - the members of a group whose name-, MAC- or address-bearing attribute changed;
/// - every node when the site's `domain` or `dhcpinterfaces` changed (makedhcp -n first,
///   makedns -n).
/// The same feed keeps the xnba mirror (setting `xnba_mirror = on`, api/xnba_mirror.hpp) of the
/// nodes whose boot state changed. A burst of changes (a chdef loop, a mkdef of a thousand
/// nodes) is one re-apply, `delay` after its first change. It never writes the store, so its
/// own work raises no change to follow.
using reapply_actor = change_subscriber::extend<caf::reacts_to<tick_atom>>;

/// What a burst of changes asks for.
struct reapply_work {
  /// Created nodes and nodes with a changed name-, MAC- or address-bearing attribute (ip,
  /// mac, hostnames, otherinterfaces, nic*, groups: an inherited value).
  std::set<std::string> nodes;
  /// Nodes removed (or renamed away) and not defined again within the burst.
  std::set<std::string> removed;
  /// Groups with a changed name-, MAC- or address-bearing attribute: their members.
  std::set<std::string> groups;
  /// The site's `domain` or `dhcpinterfaces` changed: every node, and the -n forms.
  bool everything = false;
  /// Nodes whose boot state (chain.currstate) changed, created or removed: the xnba mirror.
  std::set<std::string> boot_states;

  bool empty() const {
    return nodes.empty() && removed.empty() && groups.empty() && !everything && boot_states.empty();
  }
};

/// Adds what `set` asks for to `work`.
void reapply_gather(const store::change_set& set, reapply_work& work);

/// How the re-apply runs.
struct reapply_config {
  /// Whether hosts, DHCP and DNS are re-applied (`provision_reapply`).
  bool reapply = true;
  /// From the first change of a burst to the re-apply (`provision_reapply_delay_ms`).
  std::chrono::milliseconds delay{500};
  /// Whether makedns is re-run (DNS is configured: makedns has run once); asked at each
  /// re-apply. None: never.
  std::function<bool()> dns_configured;
  /// Rewrites the xnba mirror of these nodes (`xnba_mirror = on`); none: off. Called on the
  /// actor: it hands the work to a store reader.
  std::function<void(std::vector<std::string>)> mirror;
};

/// The nodes of `set` whose hosts, DHCP or DNS entries may have changed: created nodes and
/// nodes with a changed name-, MAC- or address-bearing attribute (ip, mac, hostnames,
/// otherinterfaces, nic*, groups: an inherited value). Added to `out`.
void reapply_nodes(const store::change_set& set, std::set<std::string>& out);

/// Spawns the re-apply and subscribes it to `events` (from now on).
reapply_actor spawn_reapply(caf::actor_system& sys, events_actor events, store_actor store,
                            reapply_config cfg);

} // namespace cws::actors
