#include "api/makedns.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "api/system_change.hpp"
#include "api/targets.hpp"
#include "base/published_file.hpp"
#include "base/text.hpp"
#include "store/cluster_view.hpp"

namespace cws::api {

namespace {

using dns::change;
using dns::record;
using dns::rtype;
namespace fs = std::filesystem;

constexpr size_t max_state_bytes = 256u << 20;
constexpr size_t max_key_bytes = 4096;

struct network {
  uint32_t net = 0;
  uint32_t mask = 0;
  std::string domain;
};

bool ipv4(std::string_view text, uint32_t& out) {
  in_addr a{};
  std::string s{text};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) {
    return false;
  }
  out = ntohl(a.s_addr);
  return true;
}

std::string dotted(uint32_t v) {
  return std::to_string(v >> 24) + "." + std::to_string((v >> 16) & 0xff) + "."
         + std::to_string((v >> 8) & 0xff) + "." + std::to_string(v & 0xff);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string strip_dots(std::string s) {
  while (!s.empty() && s.front() == '.') {
    s.erase(0, 1);
  }
  while (!s.empty() && s.back() == '.') {
    s.pop_back();
  }
  return lower(s);
}

/// The reverse zone name of the first `octets` octets of `addr` (`0.10.in-addr.arpa`).
std::string reverse_zone(uint32_t addr, int octets) {
  std::string z;
  for (int i = octets - 1; i >= 0; --i) {
    z += std::to_string((addr >> (24 - 8 * i)) & 0xff) + ".";
  }
  return z + "in-addr.arpa";
}

/// How many octets a network's reverse zones span: /24 and longer count as /24, shorter
/// masks round up to the next octet (ddns.pm get_reverse_zones_for_entity).
int zone_octets(uint32_t mask) {
  int bits = 0;
  for (uint32_t m = mask; m & 0x80000000u; m <<= 1) {
    ++bits;
  }
  if (bits >= 24) {
    return 3;
  }
  return std::max(1, (bits + 7) / 8);
}

/// Every reverse zone of a network (ddns.pm getzonesfornet).
std::vector<std::string> reverse_zones(const network& n) {
  int octets = zone_octets(n.mask);
  int shift = 32 - 8 * octets;
  uint32_t low = (n.net & n.mask) >> shift;
  uint32_t high = (n.net | ~n.mask) >> shift;
  std::vector<std::string> out;
  for (uint64_t v = low; v <= high && out.size() < 65536; ++v) {
    out.push_back(reverse_zone(static_cast<uint32_t>(v << shift), octets));
  }
  return out;
}

/// The file of a zone: `db.<domain>`, reverse zones by their network (`db.10.0.0`).
std::string zone_file_name(const std::string& zone) {
  const std::string arpa = ".in-addr.arpa";
  if (zone.size() > arpa.size()
      && zone.compare(zone.size() - arpa.size(), arpa.size(), arpa) == 0) {
    std::string prefix = zone.substr(0, zone.size() - arpa.size());
    auto parts = base::split_words(prefix, ".");
    std::string net;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      net += (net.empty() ? "" : ".") + std::string{*it};
    }
    return "db." + net;
  }
  return "db." + zone;
}

bool ends_with_domain(const std::string& name, const std::string& domain) {
  return name.size() > domain.size() + 1
         && name.compare(name.size() - domain.size(), domain.size(), domain) == 0
         && name[name.size() - domain.size() - 1] == '.';
}

bool valid_host_name(std::string_view name) {
  if (name.empty() || name.front() == '.' || name.front() == '-') {
    return false;
  }
  return std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '.'; });
}

std::string site_value(const store::read_txn& txn, std::string_view key) {
  if (auto site = txn.get(store::object_type::site, "clustersite")) {
    return std::string{base::trim(site->find(key).value_or(""))};
  }
  return {};
}

// -- state: what the server was sent ------------------------------------------------

/// Records sent: by zone, name and type, the data and the node it is for. The file has one
/// line `node zone name type data` per record, the first `server ADDR:PORT`.
using rrset_key = std::tuple<std::string, std::string, rtype>; // zone, name, type
struct sent_state {
  std::string server;
  std::map<rrset_key, std::set<std::pair<std::string, std::string>>> sets; // -> (node, data)
};

sent_state load_state(const fs::path& file, std::string& error) {
  sent_state s;
  std::string text;
  if (auto ec = base::read_file(file, max_state_bytes, text)) {
    error = "cannot read " + file.string() + ": " + ec.message();
    return s;
  }
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto w = base::split_words(line, " ");
    if (w.size() == 2 && w[0] == "server") {
      s.server = std::string{w[1]};
    } else if (w.size() == 5) {
      rtype t = w[3] == "A" ? rtype::a : w[3] == "PTR" ? rtype::ptr : rtype::cname;
      s.sets[{std::string{w[1]}, std::string{w[2]}, t}].insert(
        {std::string{w[0]}, std::string{w[4]}});
    }
  }
  return s;
}

std::string state_text(const sent_state& s) {
  std::string out = "server " + s.server + "\n";
  for (const auto& [k, rows] : s.sets) {
    for (const auto& [node, data] : rows) {
      out += node + " " + std::get<0>(k) + " " + std::get<1>(k) + " "
             + dns::type_name(std::get<2>(k)) + " " + data + "\n";
    }
  }
  return out;
}

// -- the updates -----------------------------------------------------------------------

/// The changes of one zone and, for each, the rows it makes true (or false).
struct zone_changes {
  std::vector<change> changes;
};

struct server_address {
  sockaddr_storage addr{};
  socklen_t len = 0;
};

bool parse_server(const std::string& text, server_address& out) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos) {
    return false;
  }
  std::string host = text.substr(0, colon);
  unsigned long long port = 0;
  if (!base::parse_unsigned(text.substr(colon + 1), port) || port == 0 || port > 65535) {
    return false;
  }
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&out.addr);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(static_cast<uint16_t>(port));
    out.len = sizeof *a6;
    return inet_pton(AF_INET6, host.c_str(), &a6->sin6_addr) == 1;
  }
  auto* a4 = reinterpret_cast<sockaddr_in*>(&out.addr);
  a4->sin_family = AF_INET;
  a4->sin_port = htons(static_cast<uint16_t>(port));
  out.len = sizeof *a4;
  return inet_pton(AF_INET, host.c_str(), &a4->sin_addr) == 1;
}

/// One TCP connection to the name server; messages framed by their length (RFC 1035 4.2.2).
class connection {
 public:
  connection(const server_address& a, unsigned timeout_s)
      : addr_(a), timeout_ms_(timeout_s * 1000) {
  }
  ~connection() {
    close_();
  }

  /// Sends `msg` and reads one answer; "" or why not.
  std::string exchange(const std::string& msg, std::string& reply) {
    if (fd_ < 0) {
      if (auto e = open_(); !e.empty()) {
        return e;
      }
    }
    std::string framed;
    framed.push_back(static_cast<char>(msg.size() >> 8));
    framed.push_back(static_cast<char>(msg.size() & 0xff));
    framed += msg;
    if (auto e = write_(framed); !e.empty()) {
      close_();
      return e;
    }
    std::string len;
    if (auto e = read_(2, len); !e.empty()) {
      close_();
      return e;
    }
    size_t n = (static_cast<uint8_t>(len[0]) << 8) | static_cast<uint8_t>(len[1]);
    if (auto e = read_(n, reply); !e.empty()) {
      close_();
      return e;
    }
    return "";
  }

 private:
  std::string open_() {
    fd_ = ::socket(addr_.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd_ < 0) {
      return std::string{"socket: "} + std::strerror(errno);
    }
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr_.addr), addr_.len) != 0
        && errno != EINPROGRESS) {
      auto e = std::string{"connect: "} + std::strerror(errno);
      close_();
      return e;
    }
    if (!wait_(POLLOUT)) {
      close_();
      return "connect: timed out";
    }
    int err = 0;
    socklen_t l = sizeof err;
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &l);
    if (err != 0) {
      close_();
      return std::string{"connect: "} + std::strerror(err);
    }
    return "";
  }
  void close_() {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  bool wait_(short events) {
    pollfd p{fd_, events, 0};
    return ::poll(&p, 1, static_cast<int>(timeout_ms_)) == 1
           && (p.revents & (events | POLLHUP | POLLERR));
  }
  std::string write_(const std::string& data) {
    size_t done = 0;
    while (done < data.size()) {
      auto n = ::send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n > 0) {
        done += static_cast<size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (!wait_(POLLOUT)) {
          return "send: timed out";
        }
      } else {
        return std::string{"send: "} + std::strerror(errno);
      }
    }
    return "";
  }
  std::string read_(size_t want, std::string& out) {
    out.assign(want, '\0');
    size_t done = 0;
    while (done < want) {
      auto n = ::recv(fd_, out.data() + done, want - done, 0);
      if (n > 0) {
        done += static_cast<size_t>(n);
      } else if (n == 0) {
        return "the server closed the connection";
      } else if (errno == EAGAIN || errno == EINTR) {
        if (!wait_(POLLIN)) {
          return "no answer within the timeout";
        }
      } else {
        return std::string{"recv: "} + std::strerror(errno);
      }
    }
    return "";
  }

  server_address addr_;
  unsigned timeout_ms_;
  int fd_ = -1;
};

std::string run_command(const std::string& command) {
  int rc = std::system(command.c_str());
  if (rc != 0) {
    return "'" + command + "' failed (status " + std::to_string(rc) + ")";
  }
  return "";
}

} // namespace

dns_render render_dns(const store::read_txn& txn, const makedns_request& req, const dns_config& cfg,
                      const std::string& host, uint32_t serial) {
  dns_render r;
  std::string domain = strip_dots(site_value(txn, "domain"));
  if (domain.empty()) {
    r.errors.push_back("domain not defined in site table");
    return r;
  }
  std::string master = site_value(txn, "master");
  auto site_ns = base::split_list(site_value(txn, "nameservers"));
  uint32_t master_ip = 0;
  bool have_master = ipv4(master, master_ip);

  // networks: those that use another name server are not ours (ddns.pm)
  std::vector<network> nets;
  txn.scan(store::object_type::network, [&](std::string_view, store::record_view rec) {
    std::string net{rec.find("net").value_or("")};
    std::string mask{rec.find("mask").value_or("")};
    network n;
    if (auto slash = net.find('/'); slash != std::string::npos) {
      unsigned long long bits = 0;
      if (!base::parse_unsigned(net.substr(slash + 1), bits) || bits > 32) {
        return;
      }
      n.mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
      net.resize(slash);
    } else if (!ipv4(mask, n.mask)) {
      return; // IPv6 and malformed networks are not served
    }
    if (!ipv4(net, n.net)) {
      return;
    }
    auto servers = base::split_list(std::string{rec.find("nameservers").value_or("")});
    if (!servers.empty()) {
      bool ours = std::any_of(servers.begin(), servers.end(), [&](const std::string& s) {
        return s == "<xcatmaster>" || s == master
               || std::find(site_ns.begin(), site_ns.end(), s) != site_ns.end();
      });
      if (!ours) {
        return;
      }
    }
    n.domain = strip_dots(std::string{rec.find("domain").value_or("")});
    nets.push_back(std::move(n));
  });

  std::set<std::string> forward{domain};
  std::set<std::string> reverse;
  for (const auto& n : nets) {
    if (!n.domain.empty()) {
      forward.insert(n.domain);
    }
    for (auto& z : reverse_zones(n)) {
      reverse.insert(std::move(z));
    }
  }
  r.zones.assign(forward.begin(), forward.end());
  r.zones.insert(r.zones.end(), reverse.begin(), reverse.end());

  std::string ns = lower(host) + "." + domain + ".";
  if (!req.external) {
    if (!have_master) {
      r.errors.push_back("site.master is '" + master
                         + "': makedns needs this name server's IPv4 address there (the A "
                           "record of its NS name "
                         + ns + ")");
      return r;
    }
    std::string key_include = "include \"" + cfg.key_file.string() + "\";\n";
    std::string conf = "// generated by clusterws: makedns -n (do not edit)\n" + key_include;
    for (const auto& z : r.zones) {
      conf += "zone \"" + z
              + "\" in {\n\ttype master;\n\tallow-update {\n\t\tkey xcat_key;\n\t};\n"
                "\tfile \""
              + (cfg.zone_dir / zone_file_name(z)).string() + "\";\n};\n";
    }
    std::string options = "// generated by clusterws: makedns -n (do not edit); include it in "
                          "named's options { } block\n";
    std::string forwarder_text = site_value(txn, "forwarders");
    auto forwarders = base::split_words(forwarder_text, " ,");
    if (!forwarders.empty()) {
      options += "forwarders {\n";
      for (auto f : forwarders) {
        options += "\t" + std::string{f} + ";\n";
      }
      options += "};\n";
    }
    auto mode = site_value(txn, "forwardmode");
    if (mode == "only" || mode == "first") {
      options += "forward " + mode + ";\n";
    } else if (!mode.empty()) {
      r.info.push_back("Warning: forward mode is wrong.");
    }
    r.files.emplace_back(cfg.conf_dir / "clusterws.conf", conf);
    r.files.emplace_back(cfg.conf_dir / "clusterws-options.conf", options);
    for (const auto& z : r.zones) {
      std::string text = "$TTL 86400\n@ IN SOA " + ns + " root." + ns + " ( "
                         + std::to_string(serial) + " 10800 3600 604800 86400 )\n  IN NS  " + ns
                         + "\n";
      if (z == domain) {
        text += ns + "  IN A  " + dotted(master_ip) + "\n";
      }
      r.files.emplace_back(cfg.zone_dir / zone_file_name(z), text);
    }
  }

  store::cluster_view view(txn);
  for (const auto& node : req.nodes) {
    if (node.find("localhost") != std::string::npos || node.find("loopback") != std::string::npos) {
      continue;
    }
    if (req.remove && !view.is_node(node)) {
      continue; // (removed: its records are the ones the state file says were sent)
    }
    auto ip_text = view.attribute(node, "ip");
    uint32_t ip = 0;
    if (ip_text.empty() || !ipv4(ip_text, ip)) {
      r.errors.push_back(ip_text.empty()
                           ? "Unable to find an IP for " + node
                               + " in hosts table or via system lookup (i.e. /etc/hosts)"
                           : "The hosts table entry for " + node + " indicates " + ip_text
                               + " as an ip address, which is not a valid address");
      continue;
    }
    const network* in = nullptr;
    for (const auto& n : nets) {
      if ((ip & n.mask) == (n.net & n.mask)) {
        in = &n;
        break;
      }
    }
    if (!in) {
      r.info.push_back(":Ignoring host " + node
                       + ", it does not belong to any nets defined in networks table or the net "
                         "it belongs to is configured to use an external nameserver.");
      continue;
    }
    if (!valid_host_name(node)) {
      r.info.push_back(":Ignoring " + node
                       + ", its name contains invalid characters (valid characters include a "
                         "through z, numbers and the '-', but not '_'");
      continue;
    }
    std::string dom = in->domain.empty() ? domain : in->domain;
    std::string name = lower(node);
    if (!ends_with_domain(name, dom)) {
      name += "." + dom;
    }
    name += ".";
    r.records.push_back({node, dom, record{name, rtype::a, dotted(ip)}});
    auto rev = reverse_zone(ip & (~uint32_t{0} << (32 - 8 * zone_octets(in->mask))),
                            zone_octets(in->mask));
    std::string ptr_name = std::to_string(ip & 0xff) + "." + std::to_string((ip >> 8) & 0xff) + "."
                           + std::to_string((ip >> 16) & 0xff) + "." + std::to_string(ip >> 24)
                           + ".in-addr.arpa.";
    r.records.push_back({node, rev, record{ptr_name, rtype::ptr, name}});
    std::string aliases = view.attribute(node, "hostnames");
    for (const auto& alias_text : base::split_words(aliases, " ,")) {
      std::string alias = lower(std::string{alias_text});
      if (!valid_host_name(alias)) {
        continue;
      }
      if (!ends_with_domain(alias, dom)) {
        alias += "." + dom;
      }
      alias += ".";
      if (alias != name) {
        r.records.push_back({node, dom, record{alias, rtype::cname, name}});
      }
    }
  }
  return r;
}

makedns_result run_makedns(const store::read_txn& txn, const makedns_request& req,
                           const dns_config& cfg, uint64_t now) {
  makedns_result res;
  char hostbuf[256] = {};
  ::gethostname(hostbuf, sizeof hostbuf - 1);
  std::string host{hostbuf};
  host = host.substr(0, host.find('.'));
  if (host.empty()) {
    host = "ns";
  }
  auto r = render_dns(txn, req, cfg, host, static_cast<uint32_t>(now));
  res.out = r.info;
  if (!r.errors.empty()) {
    res.errors = r.errors;
    return res;
  }
  server_address server;
  if (!parse_server(cfg.server, server)) {
    res.errors.push_back("dns_server '" + cfg.server + "' is not ADDR:PORT");
    return res;
  }

  // one makedns at a time per home (the tool and the daemon alike): the state file and the
  // server must not be changed by two runs at once
  int lock_fd = -1;
  if (!req.dry_run) {
    lock_fd
      = ::open((cfg.state_file.string() + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX) != 0) {
      res.errors.push_back("cannot lock " + cfg.state_file.string()
                           + ".lock: " + std::strerror(errno));
      if (lock_fd >= 0) {
        ::close(lock_fd);
      }
      return res;
    }
  }
  struct unlock {
    int fd;
    ~unlock() {
      if (fd >= 0) {
        ::close(fd); // releases the lock
      }
    }
  } unlock_at_end{lock_fd};

  // what the server holds, as far as clusterws sent it
  std::string error;
  sent_state state = load_state(cfg.state_file, error);
  if (!error.empty()) {
    res.errors.push_back(error);
    return res;
  }
  if (state.server != cfg.server) {
    state = sent_state{};
    state.server = cfg.server;
  }

  // files: the fragments when they differ, zone files only when missing (named owns a
  // dynamic zone's file once it serves it)
  std::vector<std::pair<fs::path, std::string>> publish;
  std::set<std::string> fresh_zones;
  std::string dry;
  for (size_t i = 0; i < r.files.size(); ++i) {
    const auto& [path, content] = r.files[i];
    std::string old;
    bool exists = false;
    if (auto ec = base::read_file(path, max_state_bytes, old, &exists)) {
      res.errors.push_back("cannot read " + path.string() + ": " + ec.message());
      return res;
    }
    bool zone_file = i >= 2;
    if (zone_file ? exists : old == content) {
      continue;
    }
    if (zone_file) {
      fresh_zones.insert(r.zones[i - 2]);
    }
    publish.emplace_back(path, content);
    dry += base::unified_diff(old, content, path.string(), path.string());
  }
  bool make_key = !req.external && !fs::exists(cfg.key_file);

  // the records: replace each RRset that differs from what was sent
  using rrkey = std::tuple<std::string, rtype>;                            // name, type
  std::map<std::string, std::map<rrkey, std::set<std::string>>> want, had; // zone -> rrset -> data
  std::map<rrkey, std::set<std::string>> owners;                           // rrset -> nodes
  std::set<std::string> scope(req.nodes.begin(), req.nodes.end());
  for (const auto& nr : r.records) {
    if (!req.remove) {
      want[nr.zone][{nr.rr.name, nr.rr.type}].insert(nr.rr.data);
    } else {
      had[nr.zone][{nr.rr.name, nr.rr.type}]; // deleted whatever the state says
    }
  }
  for (const auto& [k, rows] : state.sets) {
    const auto& zone = std::get<0>(k);
    for (const auto& [node, data] : rows) {
      if (((req.all && !req.remove) || scope.count(node)) && !fresh_zones.count(zone)) {
        had[zone][{std::get<1>(k), std::get<2>(k)}].insert(data);
      }
    }
  }
  std::map<std::string, std::vector<change>> updates;
  for (const auto& [zone, sets] : had) {
    for (const auto& [k, data] : sets) {
      auto w = want.find(zone);
      bool kept = w != want.end() && w->second.count(k) && w->second.at(k) == data && !(req.remove);
      if (!kept) {
        updates[zone].push_back(
          {change::kind::delete_rrset, {std::get<0>(k), std::get<1>(k), {}}, 0});
      }
    }
  }
  for (const auto& [zone, sets] : want) {
    auto h = had.find(zone);
    for (const auto& [k, data] : sets) {
      bool same = h != had.end() && h->second.count(k) && h->second.at(k) == data;
      if (same) {
        continue;
      }
      for (const auto& d : data) {
        updates[zone].push_back({change::kind::add, {std::get<0>(k), std::get<1>(k), d}, 86400});
      }
    }
  }
  // an RRset the state did not know in a zone that is not new may hold anything: replace it
  for (auto& [zone, list] : updates) {
    if (fresh_zones.count(zone)) {
      continue;
    }
    std::vector<change> full;
    std::set<rrkey> deleted;
    for (const auto& c : list) {
      if (c.what == change::kind::delete_rrset) {
        deleted.insert({c.rr.name, c.rr.type});
      }
    }
    for (const auto& c : list) {
      rrkey k{c.rr.name, c.rr.type};
      if (c.what == change::kind::add && !deleted.count(k)) {
        full.push_back({change::kind::delete_rrset, {c.rr.name, c.rr.type, {}}, 0});
        deleted.insert(k);
      }
      full.push_back(c);
    }
    list = std::move(full);
  }

  if (req.dry_run) {
    res.out.push_back(dry.empty() && !make_key ? "No file changes." : "");
    if (!dry.empty()) {
      res.out.back() = dry;
    }
    if (make_key) {
      res.out.push_back("would create the TSIG key " + cfg.key_file.string());
    }
    if (!publish.empty() && !cfg.reload_command.empty()) {
      res.out.push_back("would run: " + cfg.reload_command);
    }
    size_t n = 0;
    for (const auto& [zone, list] : updates) {
      for (const auto& c : list) {
        res.out.push_back("update " + zone + ": " + dns::describe(c));
        ++n;
      }
    }
    if (n == 0) {
      res.out.push_back("No DNS updates.");
    }
    return res;
  }

  // apply: key, files, reload, then the updates
  if (make_key) {
    if (auto ec = base::publish_file(cfg.key_file, dns::new_key_file("xcat_key"), 0600)) {
      res.errors.push_back("cannot write " + cfg.key_file.string() + ": " + ec.message());
      return res;
    }
  }
  std::string key_text;
  dns::tsig_key key;
  if (auto ec = base::read_file(cfg.key_file, max_key_bytes, key_text)) {
    res.errors.push_back("cannot read the TSIG key " + cfg.key_file.string() + ": " + ec.message());
    return res;
  }
  if (auto e = dns::parse_key_file(key_text, key); !e.empty()) {
    res.errors.push_back("Unable to use the TSIG key " + cfg.key_file.string() + ": " + e);
    return res;
  }
  if (!publish.empty()) {
    res.out.push_back("Updating zones.");
  }
  // the files and the reload: the shared shape of commands that change system files
  system_change files;
  for (const auto& [path, content] : publish) {
    files.files.push_back({path, content, 0644});
  }
  if (!publish.empty() && !cfg.reload_command.empty()) {
    files.actions.push_back({"reload named (" + cfg.reload_command + ")", [&](std::string& m) {
                               m = run_command(cfg.reload_command);
                               return m.empty() ? std::error_code{}
                                                : std::make_error_code(std::errc::io_error);
                             }});
  }
  for (const auto& [path, content] : publish) {
    fs::remove(fs::path{path.string() + ".jnl"}); // a new zone file starts without a journal
  }
  std::string message;
  if (auto ec = files.apply(message)) {
    res.errors.push_back(message);
    return res;
  }
  bool reloaded = !files.actions.empty();
  if (!publish.empty()) {
    res.out.push_back("Completed updating zones.");
  }

  if (!updates.empty()) {
    res.out.push_back("Updating DNS records, this may take several minutes for a large cluster.");
  }
  // fresh zones start empty: forget what they held
  for (auto it = state.sets.begin(); it != state.sets.end();) {
    it = fresh_zones.count(std::get<0>(it->first)) ? state.sets.erase(it) : std::next(it);
  }
  std::map<std::pair<std::string, record>, std::string> node_of; // (zone, record) -> node
  for (const auto& nr : r.records) {
    node_of[{nr.zone, nr.rr}] = nr.node;
  }
  connection conn(server, cfg.timeout_s);
  uint16_t id = static_cast<uint16_t>(now * 7919u);
  for (const auto& [zone, list] : updates) {
    for (size_t from = 0; from < list.size(); from += cfg.batch) {
      std::vector<change> part(list.begin() + static_cast<long>(from),
                               list.begin()
                                 + static_cast<long>(std::min(list.size(), from + cfg.batch)));
      std::string entry = dns::describe(part.front());
      std::string failure;
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(cfg.timeout_s);
      for (;;) {
        std::string msg, mac, reply, err;
        if (!dns::encode_update(++id, zone, part, msg, err)) {
          failure = err;
          break;
        }
        auto t = static_cast<uint64_t>(std::time(nullptr));
        dns::sign(msg, key, t, mac);
        if (auto e = conn.exchange(msg, reply); !e.empty()) {
          failure = "No reply received when sending DNS update to zone " + zone + " (" + cfg.server
                    + ": " + e + ")";
        } else {
          dns::answer a;
          if (auto e2 = dns::read_answer(reply, key, mac, t, a); !e2.empty()) {
            failure = "The answer of " + cfg.server + " to an update of zone " + zone
                      + " is not valid: " + e2;
          } else if (a.id != id) {
            failure = "The answer of " + cfg.server + " to an update of zone " + zone
                      + " does not answer it (another message id)";
          } else if (a.tsig_error != 0 || a.rcode != 0) {
            // named loads a new configuration in the background: until then a new key is
            // unknown (BADKEY) and a new zone not served (NOTAUTH, REFUSED, SERVFAIL)
            bool retry
              = reloaded
                && (a.tsig_error == 17
                    || (a.tsig_error == 0 && (a.rcode == 9 || a.rcode == 5 || a.rcode == 2)));
            failure = "Failure encountered updating " + zone + " with entry '" + entry
                      + "', error was " + dns::rcode_name(a.rcode)
                      + (a.tsig_error ? " (TSIG " + dns::rcode_name(a.tsig_error) + ")" : "")
                      + ". See more details in system log.";
            if (retry && std::chrono::steady_clock::now() < deadline) {
              std::this_thread::sleep_for(std::chrono::milliseconds(100));
              continue;
            }
          } else if (!a.signature_ok) {
            failure = "The answer of " + cfg.server + " to an update of zone " + zone
                      + " is not signed with key " + key.name + ": it was not trusted";
          } else {
            failure.clear();
          }
        }
        break;
      }
      if (!failure.empty()) {
        res.errors.push_back(failure);
        break;
      }
      ++res.messages;
      res.sent += part.size();
      // the state follows what the server took
      for (const auto& c : part) {
        rrset_key k{zone, c.rr.name, c.rr.type};
        if (c.what == change::kind::delete_rrset) {
          state.sets.erase(k);
        } else if (auto n = node_of.find({zone, c.rr}); n != node_of.end()) {
          state.sets[k].insert({n->second, c.rr.data});
        }
      }
    }
  }
  if (!updates.empty() || !publish.empty()) {
    if (auto ec = base::publish_file(cfg.state_file, state_text(state), 0600)) {
      res.errors.push_back("cannot write " + cfg.state_file.string() + ": " + ec.message());
    }
  }
  if (!updates.empty() && res.errors.empty()) {
    res.out.push_back("Completed updating DNS records.");
  }
  if (res.errors.empty()) {
    res.out.push_back("DNS setup is completed");
  }
  return res;
}

api_result run_dns_call(const store::database& db, const api_call& call, const authorization& auth,
                        const store::noderange_options& opts, const dns_config& cfg) {
  try {
    auto txn = db.read();
    store::cluster_view view{txn};
    makedns_request req;
    req.remove = call.op == operation::dns_delete;
    req.fresh = call.op == operation::dns_service;
    req.all = call.op == operation::dns_service;
    req.dry_run = call.dry_run;
    if (auto site = txn.get(store::object_type::site, "clustersite")) {
      auto ext = site->find("externaldns").value_or("");
      req.external = ext == "1" || ext == "yes";
    }
    if (!call.removed_nodes.empty()) {
      req.remove = true; // nodes no longer defined: the records sent for them go
      req.all = false;
      req.nodes = call.removed_nodes;
    } else if (req.all) {
      req.nodes = txn.names(store::object_type::node);
    } else if (auto r = verified_nodes(view, call, auth, caller_options(opts, auth), req.nodes);
               !r.ok()) {
      return r;
    }
    auto res = run_makedns(txn, req, cfg, static_cast<uint64_t>(std::time(nullptr)));
    if (!res.errors.empty()) {
      return api_result::failure(res.errors);
    }
    api_result out;
    out.created = call.op != operation::dns_delete && !req.dry_run;
    if (req.dry_run) {
      for (const auto& line : res.out) {
        for (auto& l : base::output_lines(line)) {
          out.names.push_back(std::move(l));
        }
      }
    }
    return out;
  } catch (const std::exception& e) {
    return api_result::failure({e.what()});
  }
}

} // namespace cws::api
