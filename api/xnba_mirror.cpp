#include "api/xnba_mirror.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "api/boot_chain.hpp"
#include "base/published_file.hpp"

namespace cws::api {

namespace {

constexpr const char* bootif = "BOOTIF=01-${netX/mac:hexhyp}";

/// The port of `address:port` ("" for 80 or none), as xnba.pm's portsuffix.
std::string port_suffix(const std::string& listen) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) {
    return {};
  }
  auto port = listen.substr(colon + 1);
  return port == "80" ? std::string{} : ":" + port;
}

std::string base_url(const xnba_mirror_config& cfg) {
  return "http://${next-server}" + port_suffix(cfg.boot_listen);
}

/// The names of a node's files under the TFTP root, in xnba.pm's unlink order.
std::vector<std::string> node_files(std::string_view node) {
  std::string base = "xcat/xnba/nodes/" + std::string{node};
  return {base, base + ".pxelinux", base + ".uefi", base + ".elilo"};
}

/// What is there now ("" when missing; `exists` says which).
std::string current(const std::filesystem::path& path, bool& exists) {
  std::string text;
  exists = false;
  if (base::read_file(path, 1024 * 1024, text, &exists)) {
    exists = true; // (unreadable: rewritten, which says why if it fails)
    text = std::string(1, '\0');
  }
  return text;
}

/// Each file of `nodes` with its new content ("" and `remove` for a file the state has not).
struct planned_file {
  std::filesystem::path path;
  std::string content;
  bool remove = false;
};

std::vector<planned_file> plan(const store::read_txn& txn, const std::vector<std::string>& nodes,
                               const xnba_mirror_config& cfg) {
  std::filesystem::path root = tftp_root_of(txn, cfg.tftp_root);
  auto base = base_url(cfg);
  std::vector<planned_file> out;
  for (const auto& node : nodes) {
    auto files = render_xnba_files(txn, node, base);
    for (const auto& name : node_files(node)) {
      planned_file f;
      f.path = root / name;
      f.remove = true;
      for (auto& [n, content] : files) {
        if (n == name) {
          f.content = content;
          f.remove = false;
        }
      }
      bool exists = false;
      auto old = current(f.path, exists);
      if (f.remove ? exists : (!exists || old != f.content)) {
        out.push_back(std::move(f));
      }
    }
  }
  return out;
}

} // namespace

xnba_mirror_config xnba_mirror_settings(const std::string& mirror, const std::string& tftp_root,
                                        const std::string& boot_listen) {
  xnba_mirror_config c;
  c.on = mirror == "on";
  c.tftp_root = tftp_root;
  c.boot_listen = boot_listen;
  return c;
}

std::vector<std::pair<std::string, std::string>>
render_xnba_files(const store::read_txn& txn, std::string_view node, std::string_view base_url) {
  std::vector<std::pair<std::string, std::string>> out;
  auto p = plan_boot(txn, node, base_url, std::nullopt, nullptr);
  if (p.reply.status != 200) {
    return out; // no boot script: no file (xnba.pm unlinks them for offline)
  }
  std::string name = "xcat/xnba/nodes/" + std::string{node};
  if (p.state == "boot" || p.state == "shell") {
    // xnba.pm: `exit` (boot from the disk), and the same for UEFI (_write_uefi_exit_script);
    // clusterws's shell exits to the disk too (it ships no genesis)
    auto exit = "#!gpxe\n#" + p.state + "\nexit\n";
    out.emplace_back(name, exit);
    out.emplace_back(name + ".uefi", exit);
    return out;
  }
  auto args = p.args;
  if (p.bootif) { // (anaconda's line carries BOOTIF: xnba.pm adds it at the end)
    auto at = args.find(std::string{" "} + bootif);
    if (at != std::string::npos) {
      args.erase(at, std::strlen(bootif) + 1);
    }
  }
  std::string text
    = "#!gpxe\n#" + p.state + "\nimgfetch -n kernel " + p.kernel_url + "\nimgload kernel\n";
  text += args.empty() ? std::string{"imgargs kernel BOOTIF=${netX/mac}\n"}
                       : "imgargs kernel " + args + " " + bootif + "\n";
  if (!p.initrd_url.empty()) {
    text += "imgfetch -n initrd " + p.initrd_url + "\n";
  }
  text += "imgexec kernel\n";
  out.emplace_back(name, std::move(text));
  if (!args.empty() && !p.initrd_url.empty()) {
    // xnba.pm's UEFI variant for a kernel with an EFI stub (every kernel clusterws serves
    // from an installer tree has one)
    out.emplace_back(name + ".uefi", "#!gpxe\nimgfetch -n kernel " + p.kernel_url
                                       + "\nimgload kernel\nimgargs kernel " + args + " " + bootif
                                       + " initrd=initrd\nimgfetch -n initrd " + p.initrd_url
                                       + "\nimgexec kernel\n");
  }
  return out;
}

system_change xnba_mirror_change(const store::read_txn& txn, const std::vector<std::string>& nodes,
                                 const xnba_mirror_config& cfg) {
  system_change change;
  for (auto& f : plan(txn, nodes, cfg)) {
    if (!f.remove) {
      change.files.push_back({f.path, std::move(f.content), 0644});
      continue;
    }
    auto path = f.path;
    change.actions.push_back({"remove " + path.string(), [path](std::string& message) {
                                std::error_code ec;
                                std::filesystem::remove(path, ec);
                                if (ec) {
                                  message = "cannot remove " + path.string() + ": " + ec.message();
                                }
                                return ec;
                              }});
  }
  return change;
}

std::error_code apply_xnba_mirror(const store::read_txn& txn, const std::vector<std::string>& nodes,
                                  const xnba_mirror_config& cfg, std::string& message) {
  auto change = xnba_mirror_change(txn, nodes, cfg);
  if (!change.files.empty()) {
    // the nodes' directory, made as xnba.pm's mkpath does (0755 whatever the umask: the TFTP
    // server reads it as its own user)
    auto dir = change.files.front().path.parent_path();
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      std::filesystem::path made;
      for (const auto& step : dir) {
        made /= step;
        if (!std::filesystem::is_directory(made, ec)) {
          if (!std::filesystem::create_directory(made, ec) && ec) {
            message = "cannot create " + made.string() + ": " + ec.message();
            return ec;
          }
          std::filesystem::permissions(made, std::filesystem::perms(0755), ec);
        }
      }
    }
  }
  return change.apply(message);
}

std::string xnba_mirror_dry_run(const store::read_txn& txn, const std::vector<std::string>& nodes,
                                const xnba_mirror_config& cfg) {
  std::string text;
  for (const auto& f : plan(txn, nodes, cfg)) {
    bool exists = false;
    auto old = current(f.path, exists);
    text += base::unified_diff(old, f.remove ? std::string{} : f.content, f.path.string(),
                               f.path.string());
  }
  return text;
}

} // namespace cws::api
