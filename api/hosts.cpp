#include "api/hosts.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "api/operations.hpp"
#include "api/targets.hpp"
#include "base/published_file.hpp"
#include "base/text.hpp"
#include "store/regex_value.hpp"

namespace cws::api {

namespace {

using store::attr_map;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/// Perl's truth of a string: "" and "0" are false.
bool truthy(std::string_view s) {
  return !s.empty() && s != "0";
}

/// Perl's split on any of `seps`: empty fields kept, trailing empty ones dropped.
std::vector<std::string> perl_split(std::string_view s, std::string_view seps) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || seps.find(s[i]) != std::string_view::npos) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  while (!out.empty() && out.back().empty()) {
    out.pop_back();
  }
  return out;
}

/// `name!value` (or `name:value`, xCAT's older form): the two first fields.
std::pair<std::string, std::string> nic_pair(std::string_view item) {
  auto f = perl_split(item, item.find('!') != std::string_view::npos ? "!" : ":");
  f.resize(std::max<size_t>(f.size(), 2));
  return {f[0], f[1]};
}

bool iequals_tail(std::string_view s, std::string_view tail) {
  if (s.size() < tail.size()) {
    return false;
  }
  auto a = s.substr(s.size() - tail.size());
  return std::equal(a.begin(), a.end(), tail.begin(), tail.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x))
           == std::tolower(static_cast<unsigned char>(y));
  });
}

/// xCAT's isIpaddr: an IPv4 or IPv6 address.
bool is_ip(const std::string& ip) {
  unsigned char buf[16];
  return inet_pton(AF_INET, ip.c_str(), buf) == 1 || inet_pton(AF_INET6, ip.c_str(), buf) == 1;
}

bool is_dotted_quad(std::string_view ip) {
  int dots = 0;
  bool digit = false;
  for (char c : ip) {
    if (c == '.') {
      if (!digit) {
        return false;
      }
      ++dots;
      digit = false;
    } else if (c >= '0' && c <= '9') {
      digit = true;
    } else {
      return false;
    }
  }
  return dots == 3 && digit;
}

/// One network definition, parsed once (getIPdomain).
struct network {
  std::string name;
  std::string domain;
  int family = 0;
  unsigned char net[16] = {};
  unsigned char mask[16] = {};
};

bool parse_network(std::string_view netname, const attr_map& attrs, network& out) {
  auto get = [&](const char* k) {
    auto it = attrs.find(k);
    return it == attrs.end() ? std::string{} : it->second;
  };
  out.name = std::string{netname};
  out.domain = get("domain");
  std::string net = get("net");
  std::string mask = get("mask");
  size_t len = 0;
  if (inet_pton(AF_INET, net.c_str(), out.net) == 1) {
    out.family = AF_INET;
    len = 4;
  } else if (inet_pton(AF_INET6, net.c_str(), out.net) == 1) {
    out.family = AF_INET6;
    len = 16;
  } else {
    return false;
  }
  std::string_view m = mask;
  if (!m.empty() && m.front() == '/') {
    m.remove_prefix(1);
  }
  bool prefix
    = !m.empty() && std::all_of(m.begin(), m.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (prefix) {
    size_t bits = std::min<size_t>(std::stoul(std::string{m}), len * 8);
    for (size_t i = 0; i < len; ++i) {
      size_t b = bits > i * 8 ? std::min<size_t>(bits - i * 8, 8) : 0;
      out.mask[i] = static_cast<unsigned char>(b == 0 ? 0 : 0xff << (8 - b));
    }
    return true;
  }
  return out.family == AF_INET && inet_pton(AF_INET, mask.c_str(), out.mask) == 1;
}

/// A node's attributes makehosts reads, the nics ones in the nics table's form
/// (`eth0!10.0.0.1,ib0!...`) whether they are kept so or as `nicips.eth0`.
struct node_hosts {
  std::string ip, hostnames, otherinterfaces;
  std::string nicips, nichostnamesuffixes, nichostnameprefixes, nicnetworks, nicaliases;
  bool has_hosts = false;
};

std::string nics_value(const attr_map& attrs, const std::string& stem) {
  std::string out;
  if (auto it = attrs.find(stem); it != attrs.end()) {
    out = it->second;
  }
  std::string prefix = stem + ".";
  for (auto it = attrs.lower_bound(prefix);
       it != attrs.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    if (!out.empty()) {
      out += ',';
    }
    out += it->first.substr(prefix.size()) + "!" + it->second;
  }
  return out;
}

node_hosts read_node(const store::cluster_view& view, const std::string& node) {
  node_hosts h;
  auto attrs = view.display(store::object_type::node, node);
  if (!attrs) {
    return h;
  }
  auto get = [&](const char* k) {
    auto it = attrs->find(k);
    return it == attrs->end() ? std::string{} : it->second;
  };
  h.ip = get("ip");
  h.hostnames = get("hostnames");
  h.otherinterfaces = get("otherinterfaces");
  h.has_hosts = !h.ip.empty() || !h.hostnames.empty() || !h.otherinterfaces.empty();
  h.nicips = nics_value(*attrs, "nicips");
  if (!h.nicips.empty()) {
    h.nichostnamesuffixes = nics_value(*attrs, "nichostnamesuffixes");
    h.nichostnameprefixes = nics_value(*attrs, "nichostnameprefixes");
    h.nicnetworks = nics_value(*attrs, "nicnetworks");
    h.nicaliases = nics_value(*attrs, "nicaliases");
  }
  return h;
}

/// hosts.pm's state: the file's lines and their indexes by address and by name.
class hosts_file {
 public:
  hosts_file(const hosts_request& req, std::string site_domain, std::vector<network> nets,
             store::outcome& messages)
      : req_(req), site_domain_(std::move(site_domain)), nets_(std::move(nets)), msg_(messages) {
  }

  void load(std::string_view text) {
    size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    by_ip_.reserve(lines + 1024);
    by_name_.reserve(2 * lines + 1024);
    lines_.reserve(lines + 1);
    size_t pos = 0;
    while (pos < text.size()) {
      auto nl = text.find('\n', pos);
      // an unterminated last line gets its newline (xCAT would glue the next line to it)
      std::string line{text.substr(pos, nl == std::string_view::npos ? nl : nl - pos)};
      lines_.push_back(line + "\n");
      index(lines_.size() - 1);
      pos = nl == std::string_view::npos ? text.size() : nl + 1;
    }
  }

  std::string text() const {
    std::string out;
    size_t n = 0;
    for (const auto& l : lines_) {
      n += l.size();
    }
    out.reserve(n);
    for (const auto& l : lines_) {
      out += l;
    }
    return out;
  }

  /// getIPdomain: the domain and name of the first network holding `ip` ("" if none).
  std::pair<std::string, std::string> ip_domain(const std::string& ip) const {
    unsigned char a[16];
    int family = inet_pton(AF_INET, ip.c_str(), a) == 1    ? AF_INET
                 : inet_pton(AF_INET6, ip.c_str(), a) == 1 ? AF_INET6
                                                           : 0;
    if (family == 0) {
      return {};
    }
    size_t len = family == AF_INET ? 4 : 16;
    for (const auto& n : nets_) {
      if (n.family != family) {
        continue;
      }
      bool in = true;
      for (size_t i = 0; i < len && in; ++i) {
        in = (a[i] & n.mask[i]) == (n.net[i] & n.mask[i]);
      }
      if (in) {
        return {n.domain, n.name};
      }
    }
    return {};
  }

  const std::string& site_domain() const {
    return site_domain_;
  }

  void add_node(const std::string& node, const std::string& ip, const std::string& othernames,
                const std::string& domain, bool nics = false) {
    if (!truthy(node) || !truthy(ip)) {
      return; // could zap the file badly
    }
    auto matches = matching(node, ip);
    if (!matches.empty()) {
      size_t idx = matches.front();
      std::optional<std::string> line;
      if (nics) {
        // an existing line for this address: the nic's aliases join its name
        std::string existing = lines_[idx];
        if (!existing.empty() && existing.back() == '\n') {
          existing.pop_back();
        }
        auto fields = perl_split(existing, " ");
        line = build_line(ip, fields.size() > 1 ? fields[1] : "", domain, othernames);
      } else {
        line = build_line(ip, node, domain, othernames);
      }
      set_line(idx, line.value_or(""));
      for (size_t i = 1; i < matches.size(); ++i) {
        set_line(matches[i], "");
      }
      return;
    }
    if (auto line = build_line(ip, node, domain, othernames); line && !line->empty()) {
      lines_.push_back(std::move(*line));
      index(lines_.size() - 1);
    }
  }

  void del_node(const std::string& node, const std::string& ip) {
    if (!truthy(node) || !truthy(ip)) {
      return;
    }
    for (size_t idx : matching(node, ip)) {
      set_line(idx, "");
    }
  }

  /// Removes every line naming `name` (or `name.<domain>`, a long name it starts).
  void del_name(const std::string& name) {
    std::vector<size_t> hit;
    for (const auto& [n, lines] : by_name_) {
      if (n == name
          || (n.size() > name.size() && n.compare(0, name.size(), name) == 0
              && n[name.size()] == '.')) {
        hit.insert(hit.end(), lines.begin(), lines.end());
      }
    }
    std::sort(hit.begin(), hit.end());
    hit.erase(std::unique(hit.begin(), hit.end()), hit.end());
    for (size_t idx : hit) {
      set_line(idx, "");
    }
  }

  void other_interfaces(const std::string& node, const std::string& value, std::string domain,
                        bool remove) {
    for (const auto& item : perl_split(value, ",")) {
      auto [itf, ip] = nic_pair(item);
      if (!truthy(ip) || !is_ip(ip)) {
        continue;
      }
      if (!itf.empty() && itf.front() == '-') {
        itf = node + itf;
      }
      if (remove) {
        del_node(itf, ip);
        continue;
      }
      if (auto d = ip_domain(ip).first; truthy(d)) {
        domain = d; // sticks for the next interfaces, as in hosts.pm
      }
      add_node(itf, ip, "", domain);
    }
  }

  void nics(const std::string& node, const node_hosts& h, const store::cluster_view& view);

 private:
  std::optional<std::string> build_line(const std::string& ip, const std::string& node,
                                        const std::string& domain, std::string othernames) {
    std::vector<std::string> o_names;
    std::vector<std::string> n_names;
    auto t = base::trim(othernames);
    // the hostnames attribute is a list delimited by commas or blanks
    o_names = perl_split(std::string{t}, ", ");
    std::optional<std::string> longname;
    for (auto& n : o_names) {
      if (n == node || (truthy(domain) && n == node + "." + domain)) {
        longname = node + "." + domain;
        n.clear();
      } else if (n.find('.') != std::string::npos) {
        if (!longname || !truthy(*longname)) {
          longname = n;
          n.clear();
        }
      } else if (req_.domain_on_aliases) {
        n_names.insert(n_names.begin(), n + "." + domain);
      }
    }
    o_names.insert(o_names.begin(), n_names.begin(), n_names.end());

    std::string shortname = node;
    std::string suffix = "." + domain;
    if (iequals_tail(node, suffix)) {
      longname = node;
      if (node.size() >= suffix.size()
          && node.compare(node.size() - suffix.size(), suffix.size(), suffix) == 0) {
        shortname = node.substr(0, node.size() - suffix.size());
      }
    } else if (truthy(domain) && (!longname || !truthy(*longname))) {
      longname = node + "." + domain;
    }
    std::string lname = longname.value_or("");
    if (shortname.find('.') != std::string::npos) {
      msg_.errors.push_back("Invalid short node name '" + shortname
                            + "'. The short node name may not contain a dot. The short node "
                              "name is considered to be anything preceeding the network domain "
                              "name in the fully qualified node name '"
                            + lname + "'.");
      return std::nullopt;
    }
    std::string others;
    for (size_t i = 0; i < o_names.size(); ++i) {
      others += (i ? " " : "") + o_names[i];
    }
    if (req_.long_first) {
      return ip + " " + lname + " " + shortname + " " + others + "\n";
    }
    if (req_.others_first) {
      return ip + " " + others + " " + lname + " " + shortname + "\n";
    }
    return ip + " " + shortname + " " + lname + " " + others + "\n";
  }

  /// The address of a line and the names it is found by (its first name and each of that
  /// name's leading parts: `n1` for `n1.cluster`), as hosts.pm indexes them.
  static void index_values(const std::string& line, std::string& ip,
                           std::vector<std::string>& names) {
    ip.clear();
    names.clear();
    size_t i = 0;
    while (i < line.size() && !is_space(line[i])) {
      ++i;
    }
    if (i == 0 || i == line.size()) {
      return;
    }
    ip = line.substr(0, i);
    if (!is_dotted_quad(ip)) {
      return;
    }
    while (i < line.size() && is_space(line[i])) {
      ++i;
    }
    size_t start = i;
    while (i < line.size() && !is_space(line[i])) {
      ++i;
    }
    if (i == start) {
      return;
    }
    std::string primary = line.substr(start, i - start);
    for (size_t dot = primary.find('.'); dot != std::string::npos;
         dot = primary.find('.', dot + 1)) {
      names.push_back(primary.substr(0, dot));
    }
    names.push_back(primary);
  }

  static void drop(std::vector<size_t>& v, size_t idx) {
    v.erase(std::remove(v.begin(), v.end(), idx), v.end());
  }

  void index(size_t idx) {
    std::string ip;
    std::vector<std::string> names;
    index_values(lines_[idx], ip, names);
    if (ip.empty()) {
      return;
    }
    by_ip_[ip].push_back(idx);
    for (auto& n : names) {
      auto& v = by_name_[n];
      if (std::find(v.begin(), v.end(), idx) == v.end()) {
        v.push_back(idx);
      }
    }
  }

  void unindex(size_t idx) {
    std::string ip;
    std::vector<std::string> names;
    index_values(lines_[idx], ip, names);
    if (ip.empty()) {
      return;
    }
    // an emptied entry stays: the line that replaces this one usually brings the key back
    if (auto it = by_ip_.find(ip); it != by_ip_.end()) {
      drop(it->second, idx);
    }
    for (auto& n : names) {
      if (auto it = by_name_.find(n); it != by_name_.end()) {
        drop(it->second, idx);
      }
    }
  }

  void set_line(size_t idx, std::string line) {
    unindex(idx);
    lines_[idx] = std::move(line);
    index(idx);
  }

  std::vector<size_t> matching(const std::string& node, const std::string& ip) const {
    std::vector<size_t> out;
    if (auto it = by_ip_.find(ip); it != by_ip_.end()) {
      out = it->second;
    }
    if (auto it = by_name_.find(node); it != by_name_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  const hosts_request& req_;
  std::string site_domain_;
  std::vector<network> nets_;
  store::outcome& msg_;
  std::vector<std::string> lines_;
  std::unordered_map<std::string, std::vector<size_t>> by_ip_;
  std::unordered_map<std::string, std::vector<size_t>> by_name_;
};

/// xCAT's `|regex|replacement|` form of one nics entry, for `node`.
std::string nic_expression(const std::string& node, const std::string& value) {
  if (value.size() < 2 || value.front() != '|' || value.back() != '|'
      || std::any_of(value.begin(), value.end(), is_space)) {
    return value;
  }
  std::string error;
  auto re = store::regex_value::parse(value, error);
  return re ? re->evaluate(node) : value;
}

void hosts_file::nics(const std::string& node, const node_hosts& h,
                      const store::cluster_view& view) {
  if (h.nicips.empty()) {
    return;
  }
  struct nic {
    std::vector<std::string> ip, sufx, prfx, net, aliases;
    size_t count = 0;
  };
  std::vector<std::string> order; // hosts.pm walks a hash: any order; ours is nicips' order
  std::unordered_map<std::string, nic> nich;
  auto at = [&](const std::string& name) -> nic& {
    auto [it, added] = nich.try_emplace(name);
    if (added) {
      order.push_back(name);
    }
    return it->second;
  };
  auto put = [](std::vector<std::string>& v, size_t i, std::string s) {
    if (v.size() <= i) {
      v.resize(i + 1);
    }
    v[i] = std::move(s);
  };
  auto get = [](const std::vector<std::string>& v, size_t i) {
    return i < v.size() ? v[i] : std::string{};
  };
  for (const auto& item : perl_split(h.nicips, ",")) {
    auto [name, value] = nic_pair(item);
    auto& n = at(name);
    n.count = 0;
    if (!truthy(value)) {
      continue;
    }
    value = nic_expression(node, value);
    for (auto& ip : value.find('|') != std::string::npos ? perl_split(value, "|")
                                                         : std::vector<std::string>{value}) {
      put(n.ip, n.count++, ip);
    }
  }
  auto multi = [&](const std::string& list, std::vector<std::string> nic::*field, bool skip_empty,
                   bool expression) {
    for (const auto& item : perl_split(list, ",")) {
      auto [name, value] = nic_pair(item);
      if (skip_empty && !truthy(value)) {
        continue;
      }
      if (expression) {
        value = nic_expression(node, value);
      }
      auto& n = at(name);
      if (value.find('|') != std::string::npos) {
        size_t i = 0;
        for (auto& v : perl_split(value, "|")) {
          put(n.*field, i++, v);
        }
      } else {
        put(n.*field, 0, value);
      }
    }
  };
  multi(h.nichostnamesuffixes, &nic::sufx, false, false);
  multi(h.nichostnameprefixes, &nic::prfx, false, false);
  // a default suffix where none is given
  for (const auto& name : order) {
    auto& n = nich[name];
    for (size_t i = 0; i < n.count; ++i) {
      auto s = get(n.sufx, i);
      auto p = get(n.prfx, i);
      if (s.empty() && p.empty()) {
        if (name.find('.') != std::string::npos) {
          msg_.errors.push_back(
            node + ": since '" + name + "' contains dot, nics.nichostnamesuffixes." + name
            + " should be configured without dot for '" + name + "' interface.");
          continue;
        }
        put(n.sufx, i, "-" + name);
      } else if (!s.empty() && s.find('.') != std::string::npos) {
        msg_.errors.push_back(node + ": the value '" + s + "' of nics.nichostnamesuffixes." + name
                              + " should not contain dot.");
        put(n.sufx, i, "");
      } else if (!p.empty() && p.find('.') != std::string::npos) {
        msg_.errors.push_back(node + ": the value '" + p + "' of nics.nichostnameprefixes." + name
                              + " should not contain dot.");
        put(n.prfx, i, "");
      }
    }
  }
  multi(h.nicnetworks, &nic::net, true, false);
  multi(h.nicaliases, &nic::aliases, true, true);

  std::string shorthost = node.substr(0, node.find('.'));
  for (const auto& name : order) {
    const auto& n = nich[name];
    for (size_t i = 0; i < n.count; ++i) {
      auto ip = get(n.ip, i);
      if (ip.empty()) {
        continue;
      }
      auto netname = get(n.net, i);
      std::string hostname = get(n.prfx, i) + shorthost + get(n.sufx, i);
      std::string net_domain;
      if (!netname.empty()) {
        if (auto rec = view.txn().get(store::object_type::network, netname)) {
          net_domain = std::string{rec->find("domain").value_or("")};
        }
      }
      auto [ndomain, netn] = ip_domain(ip);
      if (truthy(net_domain) && truthy(ndomain) && netname != netn) {
        msg_.warnings.push_back("The xCAT network name listed for\n'" + hostname + "' is '"
                                + netname + "' however the nic IP address '" + ip
                                + "' seems to be in the '" + netn
                                + "' network.\nIf there is an error then makes corrections to "
                                  "the database definitions and re-run this command.");
      }
      std::string domain = truthy(ndomain)      ? ndomain
                           : truthy(net_domain) ? net_domain
                                                : site_domain_;
      if (!truthy(domain)) {
        msg_.warnings.push_back("No domain can be determined for the NIC IP value of '" + ip
                                + "'. The network domains must be provided in an xCAT network "
                                  "definition or the xCAT site definition.");
        continue;
      }
      if (req_.remove) {
        del_node(hostname, ip);
      } else {
        add_node(hostname, ip, get(n.aliases, i), domain, true);
      }
    }
  }
}

std::string site_value(const store::cluster_view& view, std::string_view key) {
  auto rec = view.txn().get(store::object_type::site, "clustersite");
  return rec ? std::string{rec->find(key).value_or("")} : std::string{};
}

} // namespace

hosts_render render_hosts(const store::cluster_view& view, std::string_view current,
                          const hosts_request& req_in) {
  hosts_render r;
  hosts_request req = req_in;
  std::string fqdn_first = site_value(view, "FQDNfirst");
  std::transform(fqdn_first.begin(), fqdn_first.end(), fqdn_first.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (fqdn_first == "1" || fqdn_first == "yes" || fqdn_first == "enable") {
    req.long_first = true;
  }
  if (!req.nodes && req.remove) {
    r.write = false; // hosts.pm: -d without a noderange does nothing
    r.content = std::string{current};
    return r;
  }
  std::vector<network> nets;
  view.txn().scan(store::object_type::network, [&](std::string_view name, store::record_view rec) {
    network n;
    if (parse_network(name, rec.to_map(), n)) {
      nets.push_back(std::move(n));
    }
  });
  hosts_file f{req, site_value(view, "domain"), std::move(nets), r.messages};
  if (req.new_file) {
    f.load("127.0.0.1 localhost\n");
  } else {
    f.load(current);
  }

  for (const auto& node : req.removed) {
    f.del_name(node);
  }
  if (req.nodes) {
    for (const auto& node : *req.nodes) {
      auto h = read_node(view, node);
      std::string domain = f.ip_domain(h.ip).first;
      if (!truthy(domain)) {
        domain = f.site_domain();
      }
      if (!truthy(domain)) {
        r.messages.warnings.push_back(
          "No domain can be determined for node '" + node
          + "'. The domain of the xCAT node must be provided in an xCAT network definition or "
            "the xCAT site definition.");
      } else if (req.remove) {
        f.del_node(node, h.ip);
        if (!h.otherinterfaces.empty()) {
          f.other_interfaces(node, h.otherinterfaces, domain, true);
        }
      } else {
        if (is_ip(h.ip)) {
          f.add_node(node, h.ip, h.hostnames, domain);
        } else if (h.ip.empty()) {
          // xCAT looks the name up here; clusterws does no per-node lookup
          r.messages.warnings.push_back("Ignoring node '" + node + "', it can not be resolved.");
        } else {
          r.messages.warnings.push_back("Ignoring node '" + node + "', its ip address '" + h.ip
                                        + "' is not valid.");
        }
        if (!h.otherinterfaces.empty()) {
          f.other_interfaces(node, h.otherinterfaces, domain, false);
        }
      }
      f.nics(node, h, view);
    }
  } else {
    for (const auto& node : view.nodes()) {
      auto h = read_node(view, node);
      if (!h.has_hosts) {
        continue;
      }
      std::string domain = f.ip_domain(h.ip).first;
      if (!truthy(domain)) {
        domain = f.site_domain();
      }
      if (is_ip(h.ip)) {
        f.add_node(node, h.ip, h.hostnames, domain);
      } else {
        r.messages.errors.push_back("Invalid IP Addr '" + h.ip + "' for node '" + node + "'.");
      }
      if (!h.otherinterfaces.empty()) {
        f.other_interfaces(node, h.otherinterfaces, domain, false);
      }
      f.nics(node, h, view);
    }
  }
  r.content = f.text();
  return r;
}

store::outcome plan_hosts(const store::cluster_view& view, const std::filesystem::path& path,
                          const hosts_request& req, system_change& change) {
  store::outcome out;
  std::string current;
  if (!req.new_file) {
    if (auto ec = base::read_file(path, req.max_bytes, current)) {
      out.errors.push_back("Cannot read " + path.string() + ": " + ec.message());
      return out;
    }
  }
  auto r = render_hosts(view, current, req);
  change.read_limit = req.max_bytes;
  if (r.write) {
    change.files.push_back({path, std::move(r.content), 0644});
  }
  return std::move(r.messages);
}

api_result run_make_hosts(const store::database& db, const api_call& call,
                          const authorization& auth, const store::noderange_options& opts,
                          const std::filesystem::path& hosts_file, std::size_t max_bytes) {
  static std::mutex one_at_a_time;
  std::lock_guard<std::mutex> guard{one_at_a_time};
  system_change change;
  store::outcome out;
  try {
    auto txn = db.read();
    if (is_stale(txn, auth)) {
      api_result r;
      r.error = errc::stale;
      return r;
    }
    store::cluster_view view{txn, false};
    hosts_request req;
    req.max_bytes = max_bytes;
    if (!call.removed_nodes.empty()) {
      req.nodes.emplace(); // (no defined node: only the removed ones' lines go)
      req.removed = call.removed_nodes;
    } else if (!call.target.empty()) {
      std::vector<std::string> nodes;
      if (auto r = verified_nodes(view, call, auth, caller_options(opts, auth), nodes); !r.ok()) {
        return r;
      }
      req.nodes = std::move(nodes);
    }
    out = plan_hosts(view, hosts_file, req, change);
  } catch (const std::exception& e) {
    return api_result::failure({e.what()});
  }
  if (call.dry_run) {
    api_result r;
    std::string error;
    auto text = change.dry_run_text(&error);
    if (!error.empty()) {
      out.errors.push_back(error);
    }
    if (!out.errors.empty()) {
      return api_result::failure(std::move(out.errors));
    }
    for (size_t pos = 0; pos < text.size();) {
      auto nl = text.find('\n', pos);
      r.names.push_back(text.substr(pos, nl == std::string::npos ? nl : nl - pos));
      pos = nl == std::string::npos ? text.size() : nl + 1;
    }
    return r;
  }
  if (change.files.empty() && !out.errors.empty()) {
    return api_result::failure(std::move(out.errors)); // the file could not be read
  }
  std::string message;
  if (change.apply(message)) {
    out.errors.push_back(message);
  }
  if (!out.errors.empty()) {
    return api_result::failure(std::move(out.errors));
  }
  api_result r;
  r.created = true;
  return r;
}

} // namespace cws::api
