// dnsmasq: the server configuration in `<dnsmasq_conf_dir>/clusterws-dhcp.conf` (subnets,
// pools, options, TFTP, boot files by client architecture and iPXE user class) and every
// reservation in one dhcp-hostsfile, `<dnsmasq_conf_dir>/clusterws-dhcp/hosts`, re-read at
// SIGHUP (the reload). Why not a file per node in a dhcp-hostsdir, which dnsmasq reads by
// itself: 10,000 files cost 20,000 fsyncs (123 s on the test machine, against 0.3 s for one
// file), a removed record stays until SIGHUP anyway, and a re-read file in a hostsdir adds
// its records again (a "duplicate dhcp-host" warning per line, temporary files read too).
// The lines never carry `set:` tags: dnsmasq 2.90 crashes on SIGHUP with tagged hosts and a
// lease.

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "api/dhcp_backend.hpp"
#include "base/published_file.hpp"

namespace cws::api {

namespace {

constexpr std::size_t max_hosts_file = 256u << 20;

std::string mask_text(unsigned prefix) {
  return ipv4_text(prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix));
}

std::string host_lines(const std::vector<const dhcp_reservation*>& rs) {
  std::string out;
  for (const auto* r : rs) {
    if (r->deny) {
      out += r->mac + ",ignore\n";
    } else {
      out += r->mac + ',' + r->ip + ',' + r->hostname + '\n';
    }
  }
  return out;
}

class dnsmasq_backend final : public dhcp_backend {
 public:
  explicit dnsmasq_backend(dhcp_config cfg) : cfg_(std::move(cfg)) {
    // nop
  }

  std::string_view name() const override {
    return "dnsmasq";
  }

  std::filesystem::path conf_file() const {
    return cfg_.dnsmasq_conf_dir / "clusterws-dhcp.conf";
  }

  /// In a directory of its own: dnsmasq's conf-dir reads every file of dnsmasq.d as
  /// configuration, but skips directories.
  std::filesystem::path hosts_file() const {
    return cfg_.dnsmasq_conf_dir / "clusterws-dhcp" / "hosts";
  }

  std::string render_server(const dhcp_intent& in) const {
    std::string o;
    o += "# clusterws makedhcp -n: dnsmasq DHCP and TFTP. Generated from the store; makedhcp -n\n"
         "# rewrites it; makedhcp <noderange> writes the reservations' dhcp-hostsfile.\n";
    std::vector<std::string> ifs = in.interfaces;
    if (ifs.empty()) {
      for (const auto& s : in.subnets) {
        if (!s.interface.empty() && s.interface.find('!') == std::string::npos
            && std::find(ifs.begin(), ifs.end(), s.interface) == ifs.end()) {
          ifs.push_back(s.interface);
        }
      }
    }
    for (const auto& i : ifs) {
      o += "interface=" + i + '\n';
    }
    o += "dhcp-authoritative\n";
    o += "dhcp-hostsfile=" + hosts_file().string() + '\n';
    auto lease = std::to_string(in.lease);
    size_t index = 0;
    for (const auto& s : in.subnets) {
      auto tag = "cws-net" + std::to_string(index++);
      auto mask = mask_text(s.prefix);
      o += "# " + s.name + ": " + s.net + '/' + std::to_string(s.prefix)
           + (s.interface.empty() ? "" : " on " + s.interface) + '\n';
      o += "dhcp-range=set:" + tag + ',' + s.net + ",static," + mask + ',' + lease + '\n';
      for (const auto& [first, last] : s.pools) {
        o += "dhcp-range=set:" + tag + ',' + first + ',' + last + ',' + mask + ',' + lease + '\n';
      }
      auto option = [&](std::string_view name, const std::string& value) {
        if (!value.empty()) {
          o += "dhcp-option=tag:" + tag + ",option:" + std::string{name} + ',' + value + '\n';
        }
      };
      option("router", s.gateway);
      option("dns-server", s.nameservers);
      option("domain-name", s.domain);
      option("domain-search", s.domain);
      option("ntp-server", s.ntpservers);
      option("mtu", s.mtu);
    }
    o += "# TFTP: boot loaders for PXE firmware\n";
    o += "enable-tftp\n";
    o += "tftp-root=" + in.tftp_root + '\n';
    o += "# boot files: BIOS PXE -> undionly.kpxe, UEFI x86-64 -> ipxe.efi, iPXE -> the boot\n"
         "# listener's script. The last matching dhcp-boot wins: generic lines first.\n";
    o += "dhcp-match=set:ipxe,175\n";
    o += "dhcp-userclass=set:ipxe,iPXE\n";
    o += "dhcp-match=set:bios,option:client-arch,0\n";
    o += "dhcp-match=set:efi64,option:client-arch,7\n";
    o += "dhcp-match=set:efi64,option:client-arch,9\n";
    o += "dhcp-boot=tag:!ipxe,tag:bios,undionly.kpxe\n";
    o += "dhcp-boot=tag:!ipxe,tag:efi64,ipxe.efi\n";
    if (!in.boot_url.empty()) {
      o += "dhcp-boot=tag:ipxe," + in.boot_url + '\n';
    }
    return o;
  }

  std::string restart_command() const {
    return cfg_.restart_command.empty() ? "systemctl restart dnsmasq" : cfg_.restart_command;
  }

  std::string reload_command() const {
    return cfg_.reload_command.empty() ? "systemctl reload-or-restart dnsmasq"
                                       : cfg_.reload_command;
  }

  static dhcp_step command_step(const std::string& command) {
    return {command, [command] {
              return run_shell_command(command);
            }};
  }

  dhcp_change render_config(const dhcp_intent& in) const override {
    dhcp_change c;
    auto text = render_server(in);
    std::string old;
    bool exists = false;
    base::read_file(conf_file(), max_hosts_file, old, &exists);
    if (!exists || old != text) {
      c.files.push_back({conf_file(), text, false});
      auto file = conf_file().string();
      c.checks.push_back({"dnsmasq --test with the new " + file, [text] {
                            return check_with_dnsmasq(text);
                          }});
      c.steps.push_back(command_step(restart_command()));
    }
    return c;
  }

  /// `dnsmasq --test` on the new text (the server's own checker), when dnsmasq is here.
  static std::string check_with_dnsmasq(const std::string& text) {
    if (run_shell_command("command -v dnsmasq >/dev/null").size() > 0) {
      return {};
    }
    char path[] = "/tmp/clusterws-dhcp-check-XXXXXX";
    int fd = ::mkstemp(path);
    if (fd < 0) {
      return {};
    }
    ::close(fd);
    base::publish_file(path, text, 0600);
    auto e = run_shell_command(std::string{"dnsmasq --test --conf-file="} + path);
    ::unlink(path);
    return e.empty() ? e : "The new dnsmasq configuration is not valid: " + e;
  }

  dhcp_change render_nodes(const dhcp_intent& in,
                           const std::vector<std::string>& remove) const override {
    std::string old;
    bool exists = false;
    if (auto e = base::read_file(hosts_file(), max_hosts_file, old, &exists)) {
      dhcp_change c;
      c.checks.push_back({"read " + hosts_file().string(), [p = hosts_file(), e] {
                            return "Cannot read " + p.string() + ": " + e.message();
                          }});
      return c;
    }
    // the reservations held, by node: those of the nodes asked for or removed are replaced
    std::map<std::string, std::string> lines;
    for (auto& e : parse_dnsmasq_hosts(old, "")) {
      lines[e.node]
        += e.ip.empty() ? e.mac + ",ignore\n" : e.mac + ',' + e.ip + ',' + e.hostname + '\n';
    }
    for (const auto& node : remove) {
      lines.erase(node);
    }
    std::map<std::string, std::vector<const dhcp_reservation*>> by_node;
    for (const auto& r : in.reservations) {
      by_node[r.node].push_back(&r);
    }
    for (const auto& [node, rs] : by_node) {
      lines[node] = host_lines(rs);
    }
    std::string text = "# clusterws makedhcp: one dhcp-host per MAC, each node's after its "
                       "#node line.\n";
    for (const auto& [node, l] : lines) {
      text += "#node " + node + '\n' + l;
    }
    dhcp_change c;
    if (exists && text == old) {
      return c;
    }
    c.files.push_back({hosts_file(), std::move(text), false});
    // dhcp-hostsfile is read at the start and at SIGHUP (safe: the lines carry no set: tags)
    c.steps.push_back(command_step(reload_command()));
    return c;
  }

  std::string query(std::vector<dhcp_entry>& out) const override {
    std::string text;
    if (auto e = base::read_file(hosts_file(), max_hosts_file, text)) {
      return "Cannot read " + hosts_file().string() + ": " + e.message();
    }
    out = parse_dnsmasq_hosts(text, "");
    std::stable_sort(out.begin(), out.end(),
                     [](const auto& a, const auto& b) { return a.node < b.node; });
    return {};
  }

 private:
  dhcp_config cfg_;
};

} // namespace

std::unique_ptr<dhcp_backend> make_dnsmasq_backend(const dhcp_config& cfg) {
  return std::make_unique<dnsmasq_backend>(cfg);
}

} // namespace cws::api
