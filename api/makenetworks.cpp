#include "api/makenetworks.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>

namespace cws::api {

namespace {

std::string ipv4_text(uint32_t network_order) {
  char buf[INET_ADDRSTRLEN] = {};
  in_addr a{network_order};
  inet_ntop(AF_INET, &a, buf, sizeof buf);
  return buf;
}

uint32_t ipv4_value(const std::string& text) {
  in_addr a{};
  inet_pton(AF_INET, text.c_str(), &a);
  return a.s_addr;
}

/// Routes with a gateway from /proc/net/route: (interface, destination, mask, gateway), all
/// in network byte order as the kernel prints them (hex of the in-memory value).
struct route {
  std::string interface;
  uint32_t destination = 0;
  uint32_t mask = 0;
  uint32_t gateway = 0;
};

std::vector<route> gateway_routes() {
  std::vector<route> out;
  std::ifstream in{"/proc/net/route"};
  std::string line;
  std::getline(in, line); // header
  while (std::getline(in, line)) {
    std::istringstream fields{line};
    std::string iface, dest, gw, flags, refcnt, use, metric, mask;
    if (!(fields >> iface >> dest >> gw >> flags >> refcnt >> use >> metric >> mask)) {
      continue;
    }
    route r{iface, static_cast<uint32_t>(std::stoul(dest, nullptr, 16)),
            static_cast<uint32_t>(std::stoul(mask, nullptr, 16)),
            static_cast<uint32_t>(std::stoul(gw, nullptr, 16))};
    if (r.gateway != 0) {
      out.push_back(r);
    }
  }
  // the default route first: it is the gateway an installer wants
  std::stable_sort(out.begin(), out.end(),
                   [](const route& a, const route& b) { return a.mask < b.mask; });
  return out;
}

std::string mtu_of(const std::string& interface) {
  std::ifstream in{"/sys/class/net/" + interface + "/mtu"};
  std::string mtu;
  in >> mtu;
  return mtu;
}

std::string dotted_to_name(std::string text) {
  std::replace(text.begin(), text.end(), '.', '_');
  return text;
}

} // namespace

std::vector<host_network> host_networks() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    return {};
  }
  std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> guard{list, freeifaddrs};
  auto routes = gateway_routes();
  std::vector<host_network> out;
  for (auto* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || i->ifa_netmask == nullptr
        || (i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0) {
      continue;
    }
    auto addr = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr;
    auto mask = reinterpret_cast<const sockaddr_in*>(i->ifa_netmask)->sin_addr.s_addr;
    if ((ntohl(addr) & 0xffff0000u) == 0xa9fe0000u) {
      continue; // link-local 169.254/16: no cluster network (xCAT's networks.pm skips it)
    }
    host_network n{i->ifa_name, ipv4_text(addr), ipv4_text(mask), {}, mtu_of(i->ifa_name)};
    for (const auto& r : routes) {
      if (r.interface == n.interface && (r.gateway & mask) == (addr & mask)) {
        n.gateway = ipv4_text(r.gateway);
        break;
      }
    }
    out.push_back(std::move(n));
  }
  return out;
}

std::vector<store::object_change> network_objects(const std::vector<host_network>& nets) {
  std::vector<store::object_change> out;
  for (const auto& n : nets) {
    auto net = ipv4_text(ipv4_value(n.address) & ipv4_value(n.mask));
    auto name = dotted_to_name(net) + "-" + dotted_to_name(n.mask);
    if (std::any_of(out.begin(), out.end(), [&](const auto& o) { return o.name == name; })) {
      continue; // a second address in the same network
    }
    store::object_change o{store::object_type::network, name, {}};
    if (!n.gateway.empty()) {
      o.attrs.push_back({"gateway", n.gateway});
    }
    o.attrs.push_back({"mask", n.mask});
    o.attrs.push_back({"mgtifname", n.interface});
    if (!n.mtu.empty()) {
      o.attrs.push_back({"mtu", n.mtu});
    }
    o.attrs.push_back({"net", net});
    out.push_back(std::move(o));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

store::outcome make_networks(store::write_txn& t,
                             const std::vector<store::object_change>& objects) {
  store::outcome total;
  std::vector<store::object_change> fresh;
  for (const auto& o : objects) {
    auto value = [&](std::string_view attr) {
      for (const auto& a : o.attrs) {
        if (a.name == attr) {
          return a.value;
        }
      }
      return std::string{};
    };
    std::string existing;
    t.scan(store::object_type::network, [&](std::string_view name, store::record_view rec) {
      if (existing.empty() && rec.find("net").value_or("") == value("net")
          && rec.find("mask").value_or("") == value("mask")) {
        existing = std::string{name};
      }
    });
    if (existing.empty()) {
      fresh.push_back(o);
    } else {
      total.warnings.push_back("A network definition called '" + existing
                               + "' already exists that contains the same net and mask values. "
                                 "Cannot create a definition for '"
                               + o.name + "'.");
    }
  }
  if (!fresh.empty()) {
    auto made = store::make_objects(t, fresh, false);
    total.info = std::move(made.info);
    total.count = made.count;
  }
  return total;
}

} // namespace cws::api
