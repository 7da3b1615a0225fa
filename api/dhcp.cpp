#include "api/dhcp.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "base/text.hpp"

namespace cws::api {

namespace {

std::string text_or(const base::settings& s, std::string_view key, std::string fallback) {
  try {
    auto v = s.text(key);
    return v.empty() ? fallback : v;
  } catch (const std::logic_error&) {
    return fallback; // not in this schema (boot_listen before nodeset's branch)
  }
}

std::vector<std::string> split_any(std::string_view text, std::string_view separators) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (separators.find(c) != std::string_view::npos) {
      if (!cur.empty()) {
        out.push_back(std::move(cur));
      }
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) {
    out.push_back(std::move(cur));
  }
  return out;
}

unsigned prefix_of(uint32_t mask) {
  unsigned n = 0;
  while (mask & 0x80000000u) {
    ++n;
    mask <<= 1;
  }
  return n;
}

bool in_net(uint32_t ip, uint32_t net, uint32_t mask) {
  return (ip & mask) == (net & mask);
}

/// This host's address on `net`/`mask`, "" if none.
std::string address_on(const dhcp_host_facts& host, uint32_t net, uint32_t mask) {
  for (const auto& [addr, m] : host.addresses) {
    uint32_t a = 0;
    if (parse_ipv4(addr, a) && in_net(a, net, mask)) {
      return addr;
    }
  }
  return {};
}

std::string replace_master(std::string list, const std::string& server) {
  const std::string token = "<xcatmaster>";
  for (auto pos = list.find(token); pos != std::string::npos; pos = list.find(token)) {
    list.replace(pos, token.size(), server);
  }
  return list;
}

/// site.dhcpinterfaces: `if1,if2` or `host|if1,if2;host2|if3` (xCAT's grammar, `:noboot`
/// dropped); a `host|` entry applies when host names this machine or a group with a node of
/// one of its names.
std::vector<std::string> site_interfaces(const store::cluster_view& view, std::string value,
                                         const dhcp_host_facts& host) {
  for (auto pos = value.find(":noboot"); pos != std::string::npos; pos = value.find(":noboot")) {
    value.erase(pos, 7);
  }
  std::vector<std::string> out;
  for (const auto& entry : split_any(value, ";")) {
    std::string ifs = entry;
    if (auto bar = entry.find('|'); bar != std::string::npos) {
      auto who = entry.substr(0, bar);
      ifs = entry.substr(bar + 1);
      auto mine = [&](const std::string& name) {
        return std::find(host.names.begin(), host.names.end(), name) != host.names.end();
      };
      bool applies = mine(who) || who == "xcatmn";
      if (!applies) {
        if (auto members = view.group(who)) {
          applies = std::any_of(members->begin(), members->end(), mine);
        }
      }
      if (!applies) {
        continue;
      }
    }
    for (auto& i : split_any(ifs, ", \t")) {
      if (std::find(out.begin(), out.end(), i) == out.end()) {
        out.push_back(std::move(i));
      }
    }
  }
  return out;
}

/// networks.dynamicrange: `a-b`, `a,b` or `net/bits`, several separated by `;`.
bool parse_ranges(const std::string& text, std::vector<std::pair<std::string, std::string>>& out) {
  for (const auto& r : split_any(text, ";")) {
    if (auto slash = r.find('/'); slash != std::string::npos) {
      uint32_t base = 0;
      auto bits_string = r.substr(slash + 1);
      auto bits_text = base::trim(bits_string);
      if (!parse_ipv4(base::trim(r.substr(0, slash)), base) || bits_text.empty()
          || bits_text.size() > 2 || !std::all_of(bits_text.begin(), bits_text.end(), ::isdigit)) {
        return false;
      }
      auto bits = std::stoul(std::string{bits_text});
      if (bits > 32) {
        return false;
      }
      uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
      out.emplace_back(ipv4_text(base & mask), ipv4_text((base & mask) | ~mask));
      continue;
    }
    auto parts = split_any(r, " \t,-");
    uint32_t a = 0, b = 0;
    if (parts.size() != 2 || !parse_ipv4(parts[0], a) || !parse_ipv4(parts[1], b) || a > b) {
      return false;
    }
    out.emplace_back(parts[0], parts[1]);
  }
  return true;
}

} // namespace

bool parse_ipv4(std::string_view text, uint32_t& out) {
  if (text.empty() || text.size() > 15) {
    return false;
  }
  uint32_t value = 0;
  int parts = 0;
  size_t i = 0;
  while (i <= text.size()) {
    size_t j = i;
    unsigned part = 0;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      part = part * 10 + static_cast<unsigned>(text[j] - '0');
      ++j;
    }
    if (j == i || j - i > 3 || part > 255) {
      return false;
    }
    value = (value << 8) | part;
    ++parts;
    if (j == text.size()) {
      break;
    }
    if (text[j] != '.' || parts == 4) {
      return false;
    }
    i = j + 1;
  }
  if (parts != 4) {
    return false;
  }
  out = value;
  return true;
}

std::string ipv4_text(uint32_t v) {
  return std::to_string(v >> 24) + '.' + std::to_string((v >> 16) & 255) + '.'
         + std::to_string((v >> 8) & 255) + '.' + std::to_string(v & 255);
}

std::string normalize_mac(std::string_view mac) {
  std::string hex;
  if (mac.size() == 12) {
    hex = std::string{mac};
  } else {
    // aa:bb:cc:dd:ee:ff or with '-', 6 to 9 bytes, one separator kind
    if (mac.size() < 17 || (mac.size() + 1) % 3 != 0 || (mac.size() + 1) / 3 > 9) {
      return {};
    }
    char sep = mac[2];
    if (sep != ':' && sep != '-') {
      return {};
    }
    for (size_t i = 0; i < mac.size(); ++i) {
      if (i % 3 == 2) {
        if (mac[i] != sep) {
          return {};
        }
      } else {
        hex += mac[i];
      }
    }
  }
  std::string out;
  for (size_t i = 0; i < hex.size(); ++i) {
    auto c = static_cast<unsigned char>(hex[i]);
    if (!std::isxdigit(c)) {
      return {};
    }
    if (i > 0 && i % 2 == 0) {
      out += ':';
    }
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

dhcp_config dhcp_settings(const base::settings& s) {
  dhcp_config c;
  c.backend = text_or(s, "dhcp_backend", c.backend);
  c.dnsmasq_conf_dir = text_or(s, "dnsmasq_conf_dir", c.dnsmasq_conf_dir);
  c.reload_command = text_or(s, "dhcp_reload_command", "");
  c.restart_command = text_or(s, "dhcp_restart_command", "");
  c.kea_control_socket = text_or(s, "kea_control_socket", c.kea_control_socket);
  c.kea_conf_file = text_or(s, "kea_conf_file", c.kea_conf_file);
  c.kea_lease_file = text_or(s, "kea_lease_file", c.kea_lease_file);
  c.tftp_root = text_or(s, "tftp_root", "");
  c.boot_listen = text_or(s, "boot_listen", "");
  return c;
}

dhcp_host_facts local_host_facts() {
  dhcp_host_facts f;
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') {
    std::string full = name;
    f.names.push_back(full);
    if (auto dot = full.find('.'); dot != std::string::npos) {
      f.names.push_back(full.substr(0, dot));
    }
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> guard{list, freeifaddrs};
    for (auto* i = list; i != nullptr; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || i->ifa_netmask == nullptr || i->ifa_addr->sa_family != AF_INET
          || (i->ifa_flags & IFF_LOOPBACK) != 0) {
        continue;
      }
      auto a = ntohl(reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr);
      auto m = ntohl(reinterpret_cast<const sockaddr_in*>(i->ifa_netmask)->sin_addr.s_addr);
      f.addresses.emplace_back(ipv4_text(a), ipv4_text(m));
    }
  }
  return f;
}

dhcp_intent read_dhcp_intent(const store::cluster_view& view, const dhcp_config& cfg,
                             const dhcp_host_facts& host, std::string& backend,
                             dhcp_messages& msgs) {
  auto site_rec = view.txn().get(store::object_type::site, "clustersite");
  auto site = [&](std::string_view key) {
    return site_rec ? std::string{site_rec->find(key).value_or("")} : std::string{};
  };
  dhcp_intent in;
  backend = site("dhcpbackend").empty() ? cfg.backend : site("dhcpbackend");
  in.domain = site("domain");
  if (auto lease = site("dhcplease");
      !lease.empty() && lease.size() < 10 && std::all_of(lease.begin(), lease.end(), ::isdigit)) {
    in.lease = std::stoul(lease);
  }
  in.tftp_root = !cfg.tftp_root.empty()     ? cfg.tftp_root
                 : !site("tftpdir").empty() ? site("tftpdir")
                                            : "/srv/tftp";
  auto boot_host = !cfg.boot_listen.empty() ? cfg.boot_listen : site("master");
  if (!boot_host.empty()) {
    in.boot_url = "http://" + boot_host + "/boot/ipxe";
  }
  auto dhcpinterfaces = site("dhcpinterfaces");
  if (dhcpinterfaces.empty()) {
    dhcpinterfaces = site("dhcpinterface"); // xCAT's legacy singular key
  }
  in.interfaces = site_interfaces(view, dhcpinterfaces, host);
  bool all_interfaces = dhcpinterfaces.empty();
  auto site_nameservers = site("nameservers");
  auto site_ntp = site("ntpservers");

  view.txn().scan(store::object_type::network, [&](std::string_view name, store::record_view r) {
    dhcp_subnet s;
    s.name = std::string{name};
    s.net = std::string{r.find("net").value_or("")};
    s.mask = std::string{r.find("mask").value_or("")};
    s.interface = std::string{r.find("mgtifname").value_or("")};
    uint32_t net = 0, mask = 0;
    if (s.net.find(':') != std::string::npos || !parse_ipv4(s.net, net)
        || !parse_ipv4(s.mask, mask)) {
      return; // IPv6 networks and incomplete rows: not served (DHCPv6 is not supported)
    }
    if (!all_interfaces
        && std::find(in.interfaces.begin(), in.interfaces.end(), s.interface)
             == in.interfaces.end()) {
      return;
    }
    s.net = ipv4_text(net & mask);
    s.prefix = prefix_of(mask);
    s.server = address_on(host, net, mask);
    if (uint32_t m = 0; s.server.empty() && parse_ipv4(site("master"), m) && in_net(m, net, mask)) {
      s.server = site("master"); // the master's address is on it (a relay, a namespace)
    }
    s.mtu = std::string{r.find("mtu").value_or("")};
    s.domain = std::string{r.find("domain").value_or("")};
    if (s.domain.empty()) {
      s.domain = in.domain;
    }
    if (s.domain.empty()) {
      msgs.errors.push_back("No domain defined for " + s.net
                            + " entry in networks table, and no domain defined in site table.");
    }
    s.nameservers = std::string{r.find("nameservers").value_or("")};
    if (s.nameservers.empty()) {
      s.nameservers = site_nameservers;
    }
    if (s.nameservers.empty()) {
      msgs.warnings.push_back("No " + s.net
                              + " specific entry for nameservers, and no nameservers defined in "
                                "site table.");
    }
    s.nameservers = replace_master(s.nameservers, s.server);
    s.ntpservers = std::string{r.find("ntpservers").value_or("")};
    if (s.ntpservers.empty()) {
      s.ntpservers = site_ntp;
    }
    if (s.ntpservers.empty() || s.ntpservers == "<xcatmaster>") {
      s.ntpservers = s.server;
    }
    s.ntpservers = replace_master(s.ntpservers, s.server);
    s.gateway = std::string{r.find("gateway").value_or("")};
    if (s.gateway == "<xcatmaster>") {
      s.gateway = s.server;
    }
    if (uint32_t gw = 0; !s.gateway.empty()) {
      if (!parse_ipv4(s.gateway, gw) || !in_net(gw, net, mask)) {
        msgs.errors.push_back("Specified gateway " + s.gateway + " is not valid for " + s.net + "/"
                              + s.mask + ", must be on same network");
        s.gateway.clear();
      }
    }
    auto range = std::string{r.find("dynamicrange").value_or("")};
    if (range.empty()) {
      msgs.warnings.push_back("No dynamic range specified for " + s.net
                              + ". If hardware discovery is being used, a dynamic range is "
                                "required.");
    } else if (!parse_ranges(range, s.pools)) {
      msgs.errors.push_back("Invalid dynamic range '" + range + "' for " + s.net
                            + " in the networks table.");
      s.pools.clear();
    } else {
      for (const auto& [first, last] : s.pools) {
        uint32_t a = 0, b = 0;
        parse_ipv4(first, a);
        parse_ipv4(last, b);
        if (!in_net(a, net, mask) || !in_net(b, net, mask)) {
          msgs.errors.push_back("The dynamic range " + first + "-" + last + " is not in " + s.net
                                + "/" + s.mask + ".");
        }
      }
    }
    in.subnets.push_back(std::move(s));
  });
  if (in.subnets.empty()) {
    msgs.warnings.push_back(all_interfaces ? "No IPv4 network is defined in the networks table."
                                           : "No network in the networks table is on the "
                                             "interfaces of site.dhcpinterfaces ("
                                               + dhcpinterfaces + ").");
  }
  if (in.boot_url.empty()) {
    msgs.warnings.push_back(
      "Neither boot_listen nor site.master is set: iPXE clients get no boot script.");
  }
  return in;
}

std::vector<dhcp_reservation> read_reservations(const store::cluster_view& view,
                                                const std::vector<std::string>& nodes,
                                                const dhcp_intent& intent, dhcp_messages& msgs) {
  struct net_range {
    uint32_t net, mask;
    std::vector<std::pair<uint32_t, uint32_t>> pools;
  };
  std::vector<net_range> nets;
  for (const auto& s : intent.subnets) {
    net_range n{};
    parse_ipv4(s.net, n.net);
    n.mask = s.prefix == 0 ? 0 : ~uint32_t{0} << (32 - s.prefix);
    for (const auto& [first, last] : s.pools) {
      uint32_t a = 0, b = 0;
      parse_ipv4(first, a);
      parse_ipv4(last, b);
      n.pools.emplace_back(a, b);
    }
    nets.push_back(std::move(n));
  }
  // xCAT refuses the whole run when two of the nodes share an address
  std::unordered_map<std::string, std::string> owner;
  for (const auto& node : nodes) {
    auto ip = view.attribute(node, "ip");
    if (ip.empty()) {
      continue;
    }
    auto [it, fresh] = owner.emplace(ip, node);
    if (!fresh) {
      msgs.errors.push_back("Duplicated IP addresses in hosts table for following nodes: " + node
                            + "," + it->second);
      return {};
    }
  }
  std::vector<dhcp_reservation> out;
  for (const auto& node : nodes) {
    auto macs = view.attribute(node, "mac");
    if (macs.empty()) {
      msgs.warnings.push_back("Unable to find mac address for " + node);
      continue;
    }
    for (const auto& entry : split_any(macs, "|")) {
      auto bang = entry.find('!');
      auto mac_text = entry.substr(0, bang);
      auto name = bang == std::string::npos ? std::string{} : entry.substr(bang + 1);
      if (name.empty()) {
        name = node;
      }
      if (mac_text.empty()) {
        continue; // xCAT: "Skip corrupt format"
      }
      auto mac = normalize_mac(mac_text);
      if (mac.empty()) {
        msgs.errors.push_back("Invalid mac address " + mac_text + " for " + node);
        continue;
      }
      dhcp_reservation r{node, mac, {}, name, false};
      if (name == "*NOIP*") {
        r.hostname = node + "-noip" + mac;
        r.hostname.erase(std::remove(r.hostname.begin(), r.hostname.end(), ':'), r.hostname.end());
        r.deny = true;
        out.push_back(std::move(r));
        continue;
      }
      if (name == node) {
        r.ip = view.attribute(node, "ip");
      } else {
        // an alias: the node's otherinterfaces (`name:ip,...`), else a node of that name
        for (const auto& pair : split_any(view.attribute(node, "otherinterfaces"), ",")) {
          auto colon = pair.find(':');
          if (colon != std::string::npos && pair.substr(0, colon) == name) {
            r.ip = pair.substr(colon + 1);
          }
        }
        if (r.ip.empty() && view.is_node(name)) {
          r.ip = view.attribute(name, "ip");
        }
      }
      uint32_t ip = 0;
      if (r.ip.empty() || !parse_ipv4(r.ip, ip)) {
        msgs.warnings.push_back("The hostname " + name + " of node " + node
                                + " could not be resolved.");
        continue;
      }
      const net_range* on = nullptr;
      for (const auto& n : nets) {
        if (in_net(ip, n.net, n.mask)) {
          on = &n;
          break;
        }
      }
      if (on == nullptr) {
        msgs.warnings.push_back("Unable to find a DHCP subnet for " + node + " (" + r.ip
                                + "), skipping DHCP reservation");
        continue;
      }
      if (std::any_of(on->pools.begin(), on->pools.end(),
                      [&](const auto& p) { return ip >= p.first && ip <= p.second; })) {
        msgs.errors.push_back("Node " + node + " has IP " + r.ip
                              + " which is inside the DHCP dynamic range. Move the node IP "
                                "outside the dynamic range or adjust the range in the networks "
                                "table.");
        continue;
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

} // namespace cws::api
