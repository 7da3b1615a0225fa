// Kea 2.2: the whole kea-dhcp4.conf (subnets, pools, options, reservations, the boot-file
// client classes in Kea 2.2's syntax) rendered from the store and the reservations Kea holds,
// checked by the running server (config-test), written, then applied without a restart
// (config-set) on its unix control socket. Debian's Kea has no host_cmds hook, so every
// change of reservations is a whole configuration.

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <set>

#include "api/dhcp_backend.hpp"
#include "base/published_file.hpp"

namespace cws::api {

namespace {

constexpr std::size_t max_answer = 256u << 20;

std::string json_string(std::string_view s) {
  std::string o = "\"";
  for (char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      case '\r': o += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += c;
        }
    }
  }
  return o + '"';
}

/// Sends `command` to Kea's control socket and returns its answer (or `error`).
std::string kea_command(const std::filesystem::path& socket_path, const std::string& command,
                        std::string& error) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  auto p = socket_path.string();
  if (p.size() >= sizeof addr.sun_path) {
    error = "The Kea control socket path " + p + " is too long.";
    return {};
  }
  std::copy(p.begin(), p.end(), addr.sun_path);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = "Cannot create a socket.";
    return {};
  }
  struct closer {
    int fd;
    ~closer() {
      ::close(fd);
    }
  } guard{fd};
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    error = "dhcp server is not running.  please start the dhcp server. (Kea control socket " + p
            + ": " + std::strerror(errno) + ")";
    return {};
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto remaining_ms = [&] {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<long long>(0, left.count()));
  };
  size_t sent = 0;
  while (sent < command.size()) {
    auto n = ::send(fd, command.data() + sent, command.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      error = std::string{"Cannot send to the Kea control socket: "} + std::strerror(errno);
      return {};
    }
    sent += static_cast<size_t>(n);
  }
  std::string answer;
  char buf[65536];
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    int r = ::poll(&pfd, 1, remaining_ms());
    if (r == 0) {
      error = "Kea did not answer within 60 s.";
      return {};
    }
    if (r < 0) {
      if (errno == EINTR) {
        continue;
      }
      error = "poll failed";
      return {};
    }
    auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    answer.append(buf, static_cast<size_t>(n));
    if (answer.size() > max_answer) {
      error = "Kea's answer is larger than 256 MiB.";
      return {};
    }
    int result = 0;
    std::string text;
    if (parse_kea_answer(answer, result, text)) {
      break; // a whole answer: Kea 2.2 keeps the connection open for a while
    }
  }
  return answer;
}

/// Runs `command` with the configuration `config` as its arguments; "" or the error.
std::string kea_config_command(const std::filesystem::path& socket, std::string_view command,
                               const std::string& config) {
  std::string error;
  auto answer = kea_command(
    socket, "{ \"command\": \"" + std::string{command} + "\", \"arguments\": " + config + " }",
    error);
  if (!error.empty()) {
    return error;
  }
  int result = 1;
  std::string text;
  if (!parse_kea_answer(answer, result, text)) {
    return "Kea's answer to " + std::string{command} + " is not an answer.";
  }
  if (result != 0) {
    return "Kea refused " + std::string{command} + ": " + text;
  }
  return {};
}

class kea_backend final : public dhcp_backend {
 public:
  explicit kea_backend(dhcp_config cfg) : cfg_(std::move(cfg)) {
    // nop
  }

  std::string_view name() const override {
    return "kea";
  }

  std::string render(const dhcp_intent& in, const std::vector<dhcp_reservation>& rs,
                     std::vector<std::string>& notes) const {
    std::string o = "{\n\"Dhcp4\": {\n";
    std::vector<std::string> ifs = in.interfaces;
    if (ifs.empty()) {
      for (const auto& s : in.subnets) {
        if (!s.interface.empty() && s.interface.find('!') == std::string::npos
            && std::find(ifs.begin(), ifs.end(), s.interface) == ifs.end()) {
          ifs.push_back(s.interface);
        }
      }
    }
    if (ifs.empty()) {
      ifs.push_back("*");
    }
    o += "  \"interfaces-config\": { \"interfaces\": [ ";
    for (size_t i = 0; i < ifs.size(); ++i) {
      o += (i ? ", " : "") + json_string(ifs[i]);
    }
    o += " ] },\n";
    o += "  \"control-socket\": { \"socket-type\": \"unix\", \"socket-name\": "
         + json_string(cfg_.kea_control_socket.string()) + " },\n";
    o += "  \"lease-database\": { \"type\": \"memfile\", \"persist\": true, \"name\": "
         + json_string(cfg_.kea_lease_file.string()) + ", \"lfc-interval\": 3600 },\n";
    o += "  \"valid-lifetime\": " + std::to_string(in.lease) + ",\n";
    o += "  \"authoritative\": true,\n";
    // Kea 2.2's class syntax (no only-if-required: every class evaluated at once); iPXE
    // sends option 175 and the user class "iPXE"
    o += "  \"client-classes\": [\n";
    o += "    { \"name\": \"cws-ipxe\", \"test\": \"option[175].exists or "
         "substring(option[77].hex,0,4) == 'iPXE'\"";
    if (!in.boot_url.empty()) {
      o += ", \"boot-file-name\": " + json_string(in.boot_url);
    }
    o += " },\n";
    o += "    { \"name\": \"cws-bios\", \"test\": \"not member('cws-ipxe') and option[93].hex "
         "== 0x0000\", \"boot-file-name\": \"undionly.kpxe\" },\n";
    o += "    { \"name\": \"cws-efi64\", \"test\": \"not member('cws-ipxe') and "
         "(option[93].hex == 0x0007 or option[93].hex == 0x0009)\", \"boot-file-name\": "
         "\"ipxe.efi\" }\n";
    o += "  ],\n";
    // reservations by subnet
    std::vector<std::vector<const dhcp_reservation*>> placed(in.subnets.size());
    for (const auto& r : rs) {
      if (r.deny) {
        notes.push_back("Kea cannot refuse a MAC: " + r.mac + " of " + r.node
                        + " (*NOIP*) is left out.");
        continue;
      }
      uint32_t ip = 0;
      parse_ipv4(r.ip, ip);
      bool found = false;
      for (size_t i = 0; i < in.subnets.size() && !found; ++i) {
        uint32_t net = 0;
        parse_ipv4(in.subnets[i].net, net);
        auto p = in.subnets[i].prefix;
        uint32_t mask = p == 0 ? 0 : ~uint32_t{0} << (32 - p);
        if ((ip & mask) == net) {
          placed[i].push_back(&r);
          found = true;
        }
      }
      if (!found) {
        notes.push_back("Unable to find a Kea subnet for " + r.node + " (" + r.ip
                        + "), skipping DHCP reservation");
      }
    }
    o += "  \"subnet4\": [";
    for (size_t i = 0; i < in.subnets.size(); ++i) {
      const auto& s = in.subnets[i];
      uint32_t net = 0;
      parse_ipv4(s.net, net);
      o += i ? ",\n" : "\n";
      // the id is the network's address: stable whatever other networks come and go
      o += "    { \"id\": " + std::to_string(net == 0 ? 1 : net)
           + ", \"subnet\": " + json_string(s.net + "/" + std::to_string(s.prefix));
      if (!s.interface.empty() && s.interface.find('!') == std::string::npos) {
        o += ", \"interface\": " + json_string(s.interface);
      }
      if (!s.server.empty()) {
        o += ", \"next-server\": " + json_string(s.server);
      }
      o += ",\n      \"pools\": [";
      for (size_t k = 0; k < s.pools.size(); ++k) {
        o += (k ? ", " : " ") + std::string{"{ \"pool\": "}
             + json_string(s.pools[k].first + " - " + s.pools[k].second) + " }";
      }
      o += s.pools.empty() ? "],\n" : " ],\n";
      o += "      \"option-data\": [";
      bool first = true;
      auto option = [&](std::string_view name, const std::string& value) {
        if (value.empty()) {
          return;
        }
        o += first ? " " : ", ";
        first = false;
        o += "{ \"name\": \"" + std::string{name} + "\", \"data\": " + json_string(value) + " }";
      };
      option("routers", s.gateway);
      option("domain-name-servers", s.nameservers);
      option("domain-name", s.domain);
      option("domain-search", s.domain);
      option("ntp-servers", s.ntpservers);
      option("interface-mtu", s.mtu);
      o += first ? "],\n" : " ],\n";
      o += "      \"reservations\": [";
      for (size_t k = 0; k < placed[i].size(); ++k) {
        const auto& r = *placed[i][k];
        o += k ? ",\n        " : "\n        ";
        o += "{ \"hw-address\": " + json_string(r.mac) + ", \"ip-address\": " + json_string(r.ip)
             + ", \"hostname\": " + json_string(r.hostname)
             + ", \"user-context\": { \"node\": " + json_string(r.node) + " } }";
      }
      o += placed[i].empty() ? "] }" : " ] }";
    }
    o += in.subnets.empty() ? "]\n" : "\n  ]\n";
    o += "}\n}\n";
    return o;
  }

  /// The reservations in kea_conf_file as clusterws wrote it; a note when it is not one.
  std::vector<dhcp_reservation> held(std::vector<std::string>& notes) const {
    std::string text;
    bool exists = false;
    if (base::read_file(cfg_.kea_conf_file, max_answer, text, &exists) || !exists) {
      return {};
    }
    std::vector<dhcp_entry> entries;
    if (auto e = parse_kea_reservations(text, entries); !e.empty()) {
      notes.push_back(cfg_.kea_conf_file.string() + " is not a configuration clusterws wrote (" + e
                      + "): no reservation is carried over from it.");
      return {};
    }
    std::vector<dhcp_reservation> out;
    for (auto& e : entries) {
      out.push_back({e.node, e.mac, e.ip, e.hostname, false});
    }
    return out;
  }

  dhcp_change change_for(const dhcp_intent& in, const std::vector<dhcp_reservation>& rs,
                         std::vector<std::string> notes) const {
    dhcp_change c;
    c.notes = std::move(notes);
    auto text = render(in, rs, c.notes);
    std::string old;
    bool exists = false;
    base::read_file(cfg_.kea_conf_file, max_answer, old, &exists);
    if (exists && old == text) {
      return c;
    }
    c.files.push_back({cfg_.kea_conf_file, text, false});
    auto socket = cfg_.kea_control_socket;
    std::error_code ec;
    if (!std::filesystem::exists(socket, ec)) {
      c.notes.push_back("Kea is not running (no control socket " + socket.string()
                        + "): it reads the new configuration when it starts.");
      return c;
    }
    auto shared = std::make_shared<const std::string>(std::move(text));
    c.checks.push_back({"config-test on " + socket.string(), [socket, shared] {
                          return kea_config_command(socket, "config-test", *shared);
                        }});
    c.steps.push_back({"config-set on " + socket.string(), [socket, shared] {
                         return kea_config_command(socket, "config-set", *shared);
                       }});
    return c;
  }

  dhcp_change render_config(const dhcp_intent& in) const override {
    std::vector<std::string> notes;
    auto rs = held(notes); // -n keeps the reservations the server holds, as xCAT's does
    return change_for(in, rs, std::move(notes));
  }

  dhcp_change render_nodes(const dhcp_intent& in,
                           const std::vector<std::string>& remove) const override {
    std::vector<std::string> notes;
    auto rs = held(notes);
    std::set<std::string> drop{remove.begin(), remove.end()};
    for (const auto& r : in.reservations) {
      drop.insert(r.node);
    }
    rs.erase(
      std::remove_if(rs.begin(), rs.end(), [&](const auto& r) { return drop.count(r.node); }),
      rs.end());
    rs.insert(rs.end(), in.reservations.begin(), in.reservations.end());
    std::sort(rs.begin(), rs.end(), [](const auto& a, const auto& b) {
      return std::tie(a.node, a.mac) < std::tie(b.node, b.mac);
    });
    return change_for(in, rs, std::move(notes));
  }

  std::string query(std::vector<dhcp_entry>& out) const override {
    std::error_code ec;
    if (std::filesystem::exists(cfg_.kea_control_socket, ec)) {
      std::string error;
      auto answer = kea_command(cfg_.kea_control_socket, "{ \"command\": \"config-get\" }", error);
      if (!error.empty()) {
        return error;
      }
      int result = 1;
      std::string text;
      if (!parse_kea_answer(answer, result, text) || result != 0) {
        return "Kea refused config-get: " + text;
      }
      if (auto e = parse_kea_reservations(answer, out); !e.empty()) {
        return "Kea's configuration cannot be read: " + e;
      }
    } else {
      std::string text;
      bool exists = false;
      if (auto e = base::read_file(cfg_.kea_conf_file, max_answer, text, &exists)) {
        return "Cannot read " + cfg_.kea_conf_file.string() + ": " + e.message();
      }
      if (exists) {
        if (auto e = parse_kea_reservations(text, out); !e.empty()) {
          return cfg_.kea_conf_file.string() + " cannot be read: " + e;
        }
      }
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
      return std::tie(a.node, a.mac) < std::tie(b.node, b.mac);
    });
    return {};
  }

 private:
  dhcp_config cfg_;
};

} // namespace

std::unique_ptr<dhcp_backend> make_kea_backend(const dhcp_config& cfg) {
  return std::make_unique<kea_backend>(cfg);
}

} // namespace cws::api
