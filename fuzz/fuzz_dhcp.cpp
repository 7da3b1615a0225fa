// libFuzzer: what makedhcp reads from outside (api/dhcp_backend.hpp): dnsmasq's hosts file
// (-q, and the reservations kept by a node run), Kea's control-socket answers and
// kea-dhcp4.conf. Any bytes either parse into well-formed entries or are refused; nothing
// crashes, and what the dnsmasq parser reads back writes and parses to the same entries.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/dhcp_backend.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cws::api;
  std::string_view text{reinterpret_cast<const char*>(data), size};
  auto hosts = parse_dnsmasq_hosts(text, "n");
  std::string again;
  for (const auto& e : hosts) {
    if (normalize_mac(e.mac) != e.mac) {
      std::abort(); // a MAC is always normalized
    }
    uint32_t ip = 0;
    if (!e.ip.empty() && !parse_ipv4(e.ip, ip)) {
      std::abort();
    }
    if (e.hostname.find_first_of(",\n") != std::string::npos) {
      std::abort();
    }
    // as the dnsmasq backend writes a held entry back (its name is the node line's)
    again += "#node " + e.node + "\n"
             + (e.ip.empty() ? e.mac + ",ignore\n" : e.mac + ',' + e.ip + ',' + e.hostname + '\n');
  }
  auto round = parse_dnsmasq_hosts(again, "n");
  if (round.size() != hosts.size()) {
    std::abort();
  }
  for (size_t i = 0; i < round.size(); ++i) {
    if (round[i].mac != hosts[i].mac || round[i].ip != hosts[i].ip) {
      std::abort();
    }
  }
  std::vector<dhcp_entry> reservations;
  parse_kea_reservations(text, reservations);
  for (const auto& r : reservations) {
    if (r.node.empty() || normalize_mac(r.mac) != r.mac) {
      std::abort();
    }
  }
  int result = 0;
  std::string answer;
  parse_kea_answer(text, result, answer);
  return 0;
}
