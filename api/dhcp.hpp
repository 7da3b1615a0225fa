#pragma once

// makedhcp's request layer: what the DHCP server must hold, read from one snapshot of the
// store (networks, site, the nodes' MACs and addresses), in xCAT's terms and with xCAT's
// messages (xCAT-server/lib/xcat/plugins/dhcp.pm). Pure: no file is read or written here;
// api/dhcp_backend.hpp turns it into a server's files and actions.

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "base/settings.hpp"
#include "store/cluster_view.hpp"

namespace cws::api {

/// The settings makedhcp runs with (api/settings.cpp: `dhcp_*`, `dnsmasq_conf_dir`,
/// `kea_*`, `tftp_root`; `boot_listen` is nodeset's).
struct dhcp_config {
  /// `dhcp_backend`: dnsmasq or kea; `site.dhcpbackend` wins when set.
  std::string backend = "dnsmasq";
  /// Where dnsmasq reads its configuration (`clusterws-dhcp.conf` and the reservations'
  /// `clusterws-dhcp/hosts` go there).
  std::filesystem::path dnsmasq_conf_dir = "/etc/dnsmasq.d";
  /// Run after dnsmasq's reservations changed (its hosts file is read at SIGHUP).
  std::string reload_command;
  /// Run after the server configuration itself changed (makedhcp -n).
  std::string restart_command;
  std::filesystem::path kea_control_socket = "/run/kea/kea4-ctrl-socket";
  std::filesystem::path kea_conf_file = "/etc/kea/kea-dhcp4.conf";
  std::filesystem::path kea_lease_file = "/var/lib/kea/kea-leases4.csv";
  /// `tftp_root`; empty: site.tftpdir, else /srv/tftp.
  std::string tftp_root;
  /// nodeset's node-facing listener (address:port); empty: site.master on port 80.
  std::string boot_listen;
};

/// makedhcp's settings from the configuration (keys the schema does not have keep their
/// defaults, so a branch without nodeset's `boot_listen` still reads).
dhcp_config dhcp_settings(const base::settings& s);

/// One network the DHCP server serves (networks table).
struct dhcp_subnet {
  std::string name;
  std::string net;
  std::string mask;
  unsigned prefix = 0;
  /// networks.mgtifname.
  std::string interface;
  std::string gateway;
  std::string domain;
  /// Comma list of addresses (networks.nameservers, else site.nameservers; `<xcatmaster>`
  /// replaced by this host's address on the network).
  std::string nameservers;
  std::string ntpservers;
  std::string mtu;
  /// This host's address on the network, else site.master when it is on it ("" if
  /// neither): Kea's next-server, `<xcatmaster>` in nameservers, gateway and ntpservers.
  std::string server;
  /// networks.dynamicrange, as (first, last) pairs.
  std::vector<std::pair<std::string, std::string>> pools;
};

/// One MAC of a node the server answers with a fixed address.
struct dhcp_reservation {
  std::string node;
  /// Lower case, colon separated.
  std::string mac;
  std::string ip;
  /// The name sent to the client: the node, or the `mac!name` alias.
  std::string hostname;
  /// mac!*NOIP*: the MAC is refused (xCAT's `deny booting`).
  bool deny = false;
};

/// Everything a server configuration is rendered from.
struct dhcp_intent {
  std::vector<dhcp_subnet> subnets;
  /// site.dhcpinterfaces as they apply to this host (empty: every subnet's interface).
  std::vector<std::string> interfaces;
  std::string domain;
  /// Lease time in seconds (site.dhcplease, default 43200).
  unsigned long lease = 43200;
  std::string tftp_root;
  /// What an iPXE client is told to chain to: `http://<boot_listen or site.master>/boot/ipxe`.
  std::string boot_url;
  /// The reservations of the nodes asked for (every node with a MAC for -n and -a).
  std::vector<dhcp_reservation> reservations;
};

/// What makedhcp reports, in xCAT's words: any error means exit status 1.
struct dhcp_messages {
  std::vector<std::string> info;
  std::vector<std::string> warnings;
  std::vector<std::string> errors;
};

/// The inputs read from the host itself (interfaces, its name): a parameter, so rendering
/// stays pure and tests give their own.
struct dhcp_host_facts {
  /// The host's names (hostname, short and long): `site.dhcpinterfaces` entries `host|ifs`
  /// apply when `host` is one of them.
  std::vector<std::string> names;
  /// (address, mask) of each local IPv4 interface: this host's address on a network.
  std::vector<std::pair<std::string, std::string>> addresses;
};

/// The host facts of this machine (gethostname, getifaddrs).
dhcp_host_facts local_host_facts();

/// Reads the site values and the networks served: subnets from the networks table whose
/// interface is in `site.dhcpinterfaces` (every network when it is unset), with xCAT's
/// warnings and errors for each. `backend` gets site.dhcpbackend or the configured one.
dhcp_intent read_dhcp_intent(const store::cluster_view& view, const dhcp_config& cfg,
                             const dhcp_host_facts& host, std::string& backend,
                             dhcp_messages& msgs);

/// The reservations of `nodes` (MAC from `mac`, address from `ip`, an alias's from the node
/// `otherinterfaces` or the node of that name), with xCAT's per-node messages: no MAC and
/// an unresolved name are warnings, a bad MAC, an address in a dynamic range and a
/// duplicated address are errors. A node outside every served subnet is left out with a
/// warning.
std::vector<dhcp_reservation> read_reservations(const store::cluster_view& view,
                                                const std::vector<std::string>& nodes,
                                                const dhcp_intent& intent, dhcp_messages& msgs);

/// A MAC as xCAT accepts it (`aa:bb:..` or `aa-bb-..`, 6 to 9 bytes, or 12 bare hex digits)
/// in lower case with colons; "" if it is not one.
std::string normalize_mac(std::string_view mac);

/// An IPv4 address as a number (host order); false if `text` is not a dotted quad.
bool parse_ipv4(std::string_view text, uint32_t& out);

/// A number as a dotted quad.
std::string ipv4_text(uint32_t value);

} // namespace cws::api
