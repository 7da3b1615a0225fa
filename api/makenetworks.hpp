#pragma once

// makenetworks (and POST /networks): network definitions for the head node's own IPv4
// interfaces, named as xCAT names them (`10_0_0_0-255_255_0_0`).

#include <string>
#include <vector>

#include "store/definitions.hpp"

namespace cws::api {

/// One IPv4 address of the host, with what makenetworks needs to know about it.
struct host_network {
  std::string interface;
  std::string address;
  std::string mask;
  /// The gateway of a route out of this network (default route first), "" if none.
  std::string gateway;
  /// The interface's MTU, "" if unknown.
  std::string mtu;
};

/// The host's IPv4 networks (getifaddrs, /proc/net/route, /sys/class/net/IF/mtu), in
/// interface order; loopback (127.0.0.0/8), link-local (169.254.0.0/16) and down interfaces
/// left out. Only this process's network namespace is seen.
std::vector<host_network> host_networks();

/// The network objects for `nets`, sorted by name: one per distinct net and mask, named
/// `net-mask` with `_` for `.`, with net, mask, mgtifname, and gateway and mtu where known.
std::vector<store::object_change> network_objects(const std::vector<host_network>& nets);

/// makenetworks in `t`: creates each network of `objects` unless a network with the same net
/// and mask exists (a warning names it, as xCAT's). @throws store::rejected.
store::outcome make_networks(store::write_txn& t, const std::vector<store::object_change>& objects);

} // namespace cws::api
