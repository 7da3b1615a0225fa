// dnsmasq: the server configuration in `<dnsmasq_conf_dir>/clusterws-dhcp.conf` (subnets,
// pools, options, TFTP, boot files by client architecture and iPXE user class) and one
// reservation file per node in the dhcp-hostsdir `<dnsmasq_conf_dir>/clusterws-dhcp-hosts`.
// dnsmasq reads a new or changed file there by itself (inotify) but keeps a removed or
// changed record until SIGHUP, so only removals and changes reload. The reservation lines
// never carry `set:` tags: dnsmasq 2.90 crashes on SIGHUP with tagged hosts and a lease.

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "api/dhcp_backend.hpp"
#include "base/published_file.hpp"

namespace cws::api {

namespace {

constexpr std::size_t max_host_file = 1u << 20;

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

  std::filesystem::path hosts_dir() const {
    return cfg_.dnsmasq_conf_dir / "clusterws-dhcp-hosts";
  }

  std::string render_server(const dhcp_intent& in) const {
    std::string o;
    o += "# clusterws makedhcp -n: dnsmasq DHCP and TFTP. Generated from the store; makedhcp -n\n"
         "# rewrites it, makedhcp <noderange> writes the reservations in dhcp-hostsdir.\n";
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
    o += "dhcp-hostsdir=" + hosts_dir().string() + '\n';
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
    return cfg_.reload_command.empty() ? "systemctl reload dnsmasq" : cfg_.reload_command;
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
    base::read_file(conf_file(), max_host_file * 64, old, &exists);
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
    dhcp_change c;
    bool reload = false;
    std::map<std::string, std::vector<const dhcp_reservation*>> by_node;
    for (const auto& r : in.reservations) {
      by_node[r.node].push_back(&r);
    }
    for (const auto& node : remove) {
      if (by_node.count(node) == 0) {
        auto p = hosts_dir() / node;
        std::error_code ec;
        if (std::filesystem::exists(p, ec)) {
          c.files.push_back({p, {}, true});
          reload = true;
        }
      }
    }
    for (const auto& [node, rs] : by_node) {
      auto p = hosts_dir() / node;
      auto text = host_lines(rs);
      std::string old;
      bool exists = false;
      base::read_file(p, max_host_file, old, &exists);
      if (exists && old == text) {
        continue;
      }
      c.files.push_back({p, std::move(text), false});
      reload = reload || exists; // a changed record stays until SIGHUP; a new one is read
    }
    if (reload) {
      c.steps.push_back(command_step(reload_command()));
    }
    return c;
  }

  std::string query(std::vector<dhcp_entry>& out) const override {
    std::error_code ec;
    std::vector<std::filesystem::path> files;
    for (std::filesystem::directory_iterator it{hosts_dir(), ec}, end; !ec && it != end;
         it.increment(ec)) {
      auto n = it->path().filename().string();
      if (!n.empty() && n.front() != '.' && n.find(".cws-") == std::string::npos
          && it->is_regular_file(ec)) {
        files.push_back(it->path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const auto& p : files) {
      std::string text;
      if (auto e = base::read_file(p, max_host_file, text)) {
        return "Cannot read " + p.string() + ": " + e.message();
      }
      auto entries = parse_dnsmasq_hosts(text, p.filename().string());
      out.insert(out.end(), entries.begin(), entries.end());
    }
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
