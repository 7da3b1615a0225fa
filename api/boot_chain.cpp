#include "api/boot_chain.hpp"

#include <algorithm>
#include <cstring>

#include "api/dhcp.hpp"
#include "api/nodeset.hpp"
#include "api/nodestat.hpp"
#include "base/published_file.hpp"
#include "store/cluster_view.hpp"
#include "store/schema.hpp"

namespace cws::api {

namespace {

using store::object_type;

std::string site_value(const store::read_txn& txn, std::string_view key) {
  auto rec = txn.get(object_type::site, "clustersite");
  if (!rec) {
    return {};
  }
  auto v = rec->find(key);
  return v ? std::string{*v} : std::string{};
}

std::string osimage_value(const std::optional<store::record_view>& rec, std::string_view key) {
  if (!rec) {
    return {};
  }
  auto v = rec->find(key);
  return v ? std::string{*v} : std::string{};
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    auto end = text.find(sep, pos);
    auto item
      = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    if (!item.empty()) {
      out.emplace_back(item);
    }
    if (end == std::string_view::npos) {
      break;
    }
    pos = end + 1;
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

/// An install state of the chain (the node boots an installer or an image over the network).
bool is_install_state(std::string_view state) {
  return starts_with(state, "install ") || starts_with(state, "netboot ")
         || starts_with(state, "statelite ") || starts_with(state, "boottarget ");
}

bool is_debian_family(std::string_view os) {
  auto p = template_platform(os);
  return p == "debian" || p == "ubuntu";
}

/// The local installer tree: the first `pkgdir` entry that is not a URL.
std::filesystem::path local_pkgdir(std::string_view pkgdir) {
  for (auto& e : split(pkgdir, ',')) {
    if (e.find("://") == std::string::npos) {
      return e;
    }
  }
  return {};
}

/// The package repository the installer reads: a `pkgdir` entry that is a URL, else the
/// local tree as xCAT serves it (`http://<site.master><pkgdir>`).
std::string repo_url(const store::read_txn& txn, std::string_view pkgdir) {
  for (auto& e : split(pkgdir, ',')) {
    if (e.find("://") != std::string::npos) {
      return e;
    }
  }
  auto local = local_pkgdir(pkgdir).string();
  return "http://" + site_value(txn, "master") + local;
}

std::string debian_arch(std::string_view arch) {
  if (arch == "x86_64" || arch == "amd64" || arch.empty()) {
    return "amd64";
  }
  if (arch == "aarch64" || arch == "arm64") {
    return "arm64";
  }
  return std::string{arch};
}

std::string status_of_fetch(boot_fetch f) {
  return f == boot_fetch::install_template ? "installing" : "netbooting";
}

std::string stage_of_fetch(boot_fetch f) {
  switch (f) {
    case boot_fetch::script: return "script";
    case boot_fetch::kernel: return "kernel";
    case boot_fetch::initrd: return "initrd";
    case boot_fetch::install_template: return "installing";
  }
  return {};
}

std::string node_osimage(const store::cluster_view& view, std::string_view node) {
  return view.attribute(node, "provmethod");
}

/// The (status, stage) a fetch moves a node to from (`status`, `stage`); nullopt when the
/// node is marked for bad tokens (only a callback with its token, or a nodeset, clears that).
std::optional<std::pair<std::string, std::string>>
fetch_move(const store::read_txn& txn, std::string_view node, boot_fetch fetched,
           const std::string& status, const std::string& stage) {
  if (stage == "bad install token") {
    return std::nullopt;
  }
  store::cluster_view view{txn};
  auto state = view.attribute(node, "currstate");
  std::pair<std::string, std::string> m{status, stage};
  if (is_install_state(state)) {
    m = {status_of_fetch(fetched), stage_of_fetch(fetched)};
  } else if (state == "boot") {
    m.first = "booting";
  } else if (state == "shell") {
    m.first = "shell";
  }
  return m;
}

} // namespace

bool install_fetch_changes(const store::read_txn& txn, std::string_view node, boot_fetch fetched) {
  auto rec = txn.get(object_type::node, node);
  if (!rec) {
    return false;
  }
  auto status = std::string{rec->find("status").value_or("")};
  auto stage = install_stage_of(rec->find("appstatus").value_or(""));
  auto m = fetch_move(txn, node, fetched, status, stage);
  return m && (m->first != status || m->second != stage);
}

std::optional<install_callback> parse_install_callback(std::string_view word) {
  static const std::pair<const char*, install_callback> words[]
    = {{"installing", install_callback::installing},   {"installed", install_callback::installed},
       {"postbooting", install_callback::postbooting}, {"booted", install_callback::booted},
       {"failed", install_callback::failed},           {"next", install_callback::next}};
  for (const auto& [w, c] : words) {
    if (word == w) {
      return c;
    }
  }
  return std::nullopt;
}

std::string node_of_address(const store::read_txn& txn, std::string_view address) {
  if (address.empty()) {
    return {};
  }
  store::cluster_view view{txn};
  std::string found;
  for (const auto& node : view.nodes()) {
    if (view.attribute(node, "ip") == address) {
      if (!found.empty()) {
        return {}; // (two nodes with one address: neither is named by it)
      }
      found = node;
    }
  }
  return found;
}

std::optional<install_callback> parse_xcat_status_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) {
    line.remove_suffix(1);
  }
  if (line == "next") {
    return install_callback::next;
  }
  constexpr std::string_view verb = "installstatus ";
  if (!starts_with(line, verb)) {
    return std::nullopt;
  }
  auto cb = parse_install_callback(line.substr(verb.size()));
  if (cb == install_callback::next) {
    return std::nullopt; // (`next` is its own line)
  }
  return cb;
}

std::string xcat_status_time(std::time_t t) {
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%m-%d-%Y %H:%M:%S", &tm);
  return buf;
}

std::optional<std::time_t> parse_status_time(std::string_view text) {
  std::tm tm{};
  std::string s{text};
  const char* end = strptime(s.c_str(), "%m-%d-%Y %H:%M:%S", &tm);
  if (end == nullptr || *end != '\0') {
    return std::nullopt;
  }
  tm.tm_isdst = -1;
  auto t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) {
    return std::nullopt;
  }
  return t;
}

std::string install_stage_of(std::string_view appstatus) {
  for (auto& item : split(appstatus, ',')) {
    if (starts_with(item, "install=")) {
      return item.substr(8);
    }
  }
  return {};
}

// -- mac_index -----------------------------------------------------------------------

namespace {

/// The MACs of `mac` (xCAT's `mac|mac!name|...`), normalized; `!*NOIP*` ones left out.
template<class F>
void each_mac(std::string_view macs, F f) {
  for (const auto& entry : split(macs, '|')) {
    auto bang = entry.find('!');
    if (bang != std::string::npos && entry.substr(bang + 1) == "*NOIP*") {
      continue; // (xCAT: this MAC must not boot)
    }
    auto m = normalize_mac(entry.substr(0, bang));
    if (!m.empty()) {
      f(std::move(m));
    }
  }
}

} // namespace

std::string mac_index::node_of(const store::read_txn& txn, std::string_view mac) {
  auto want = normalize_mac(mac);
  if (want.empty()) {
    return {};
  }
  std::shared_ptr<const std::map<std::string, std::string>> index;
  bool current = false;
  auto gen = txn.generation();
  {
    std::lock_guard<std::mutex> lock{mu_};
    index = index_;
    current = gen == generation_;
  }
  if (index && !current) {
    // The store moved since the index was built, most often by install status writes (a
    // rack booting writes every few ms). The node the index names still answers if its own
    // `mac` still holds the MAC: one record read instead of a scan of every node. A MAC the
    // index does not know, or a node that no longer has it, rebuilds. (Two nodes with one
    // MAC, a misconfiguration, keep the one found first until the next rebuild.)
    auto it = index->find(want);
    if (it != index->end()) {
      bool holds = false;
      store::cluster_view view{txn};
      each_mac(view.attribute(it->second, "mac"), [&](std::string m) { holds |= m == want; });
      if (holds) {
        return it->second;
      }
    }
    index.reset();
  }
  if (!index) {
    // built outside the lock: two readers may both build one after a change (both right)
    auto fresh = std::make_shared<std::map<std::string, std::string>>();
    store::cluster_view view{txn};
    for (const auto& node : view.nodes()) {
      each_mac(view.attribute(node, "mac"), [&](std::string m) {
        fresh->emplace(std::move(m), node); // (a MAC on two nodes: the first by name)
      });
    }
    index = fresh;
    ++rebuilds_;
    std::lock_guard<std::mutex> lock{mu_};
    if (txn.generation() == gen) {
      generation_ = gen;
      index_ = index;
    }
  }
  auto it = index->find(want);
  return it == index->end() ? std::string{} : it->second;
}

// -- scripts -------------------------------------------------------------------------

std::string generic_boot_script(std::string_view base_url) {
  // netX: the interface iPXE booted from (xnba's BOOTIF uses it too)
  return "#!ipxe\nchain " + std::string{base_url} + "/boot/mac/${netX/mac:hexhyp}\n";
}

namespace {

/// `#NODEATTRIB:tab:col#`, `#TABLE:tab:$NODE:col#` (THISNODE too) and `!myipfn!` in a
/// boottarget's kcmdline, as xnba.pm's "boottarget mini-template" replaces them: the node's
/// value of that table column, and the server's address (`host`). A `#TABLE#` with another
/// key is left as it is (xCAT reports it as not supported).
std::string expand_kcmdline(const store::cluster_view& view, std::string_view node,
                            std::string text, std::string_view host) {
  for (size_t at = text.find("!myipfn!"); at != std::string::npos;
       at = text.find("!myipfn!", at + host.size())) {
    text.replace(at, 8, host);
  }
  auto value_of = [&](std::string_view table, std::string_view column) {
    auto attr = store::attribute_for_column(std::string{table} + "." + std::string{column});
    return view.attribute(node, attr ? *attr : column);
  };
  size_t pos = 0;
  while ((pos = text.find('#', pos)) != std::string::npos) {
    auto end = text.find('#', pos + 1);
    if (end == std::string::npos) {
      break;
    }
    auto fields = split(std::string_view{text}.substr(pos + 1, end - pos - 1), ':');
    std::optional<std::string> value;
    if (fields.size() == 3 && fields[0] == "NODEATTRIB") {
      value = value_of(fields[1], fields[2]);
    } else if (fields.size() == 4 && fields[0] == "TABLE"
               && (fields[2] == "$NODE" || fields[2] == "THISNODE")) {
      value = value_of(fields[1], fields[3]);
    }
    if (value) {
      text.replace(pos, end - pos + 1, *value);
      pos += value->size();
    } else {
      pos = end;
    }
  }
  return text;
}

/// The host part of `http://host:port` (`${next-server}` stays as it is).
std::string url_host(std::string_view base_url) {
  auto scheme = base_url.find("://");
  auto rest = scheme == std::string_view::npos ? base_url : base_url.substr(scheme + 3);
  if (!rest.empty() && rest.front() == '[') {
    return std::string{rest.substr(1, rest.find(']') - 1)};
  }
  return std::string{rest.substr(0, rest.find(':'))};
}

/// A file of a boottarget, relative to the TFTP root as xCAT writes it (`xcat/...`); a path
/// with a `..` step is refused (empty), so a row never serves a file outside the root.
std::filesystem::path under_root(const std::filesystem::path& root, std::string_view file) {
  while (!file.empty() && file.front() == '/') {
    file.remove_prefix(1);
  }
  std::filesystem::path rel{std::string{file}};
  if (file.empty()) {
    return {};
  }
  for (const auto& step : rel) {
    if (step == "..") {
      return {};
    }
  }
  return root / rel;
}

} // namespace

std::string tftp_root_of(const store::read_txn& txn, std::string_view setting) {
  if (!setting.empty()) {
    return std::string{setting};
  }
  auto site = site_value(txn, "tftpdir");
  return site.empty() ? "/srv/tftp" : site;
}

boot_plan plan_boot(const store::read_txn& txn, std::string_view node, std::string_view base_url,
                    const std::optional<std::string>& token_in, const install_token_key* key) {
  boot_plan p;
  auto& r = p.reply;
  store::cluster_view view{txn};
  if (!view.is_node(node)) {
    r.status = 404;
    r.body = std::string{node} + ": no such node\n";
    return p;
  }
  r.node = std::string{node};
  auto state = view.attribute(node, "currstate");
  p.state = state;
  if (state.empty() || state == "offline") {
    r.status = 404;
    r.body = r.node + ": offline: no boot script (nodeset it first)\n";
    return p;
  }
  if (state == "boot" || state == "shell") {
    return p;
  }
  bool boottarget_state = starts_with(state, "boottarget ");
  if (!starts_with(state, "install ") && !boottarget_state) {
    r.status = 404;
    r.body = r.node + ": " + state + ": not served by the boot listener\n";
    return p;
  }
  auto image = node_osimage(view, node);
  auto osimage = txn.get(object_type::osimage, image);
  if (!osimage) {
    r.status = 404;
    r.body = r.node + ": osimage '" + image + "' is not defined\n";
    return p;
  }
  std::string token;
  if (key != nullptr) {
    token = key->token(txn, node);
    if (token.empty()) {
      r.status = 404;
      r.body = r.node + ": no install token is armed (run nodeset again)\n";
      return p;
    }
  } else if (token_in) {
    token = *token_in;
  }
  auto with_token = [&](const std::string& url) {
    return key == nullptr && !token_in ? url : url + "?token=" + token;
  };
  auto os = view.attribute(node, "os");
  if (os.empty()) {
    os = osimage_value(osimage, "osvers");
  }
  std::string self = std::string{base_url} + "/boot/node/" + r.node;
  p.kernel_url = self + "/kernel";
  p.initrd_url = self + "/initrd";
  std::string error;
  auto bt = find_boot_target(txn, osimage_value(osimage, "boottarget"), os,
                             view.attribute(node, "profile"), error);
  if (!error.empty()) {
    r.status = 404;
    r.body = r.node + ": " + error + "\n";
    return p;
  }
  if (boottarget_state && !bt) {
    r.status = 404;
    r.body = r.node + ": osimage '" + image + "' names no boottarget\n";
    return p;
  }
  if (bt) {
    // the boottarget's own kernel line (xnba.pm): addkcmdline is not added (Schema.pm)
    p.boottarget = true;
    p.args = expand_kcmdline(view, node, bt->kcmdline, url_host(base_url));
    if (bt->initrd.empty()) {
      p.initrd_url.clear();
    }
    return p;
  }
  std::string console = "console=ttyS0,115200n8";
  if (auto port = view.attribute(node, "serialport"); !port.empty()) {
    auto speed = view.attribute(node, "serialspeed");
    console = "console=ttyS" + port + "," + (speed.empty() ? "115200" : speed) + "n8";
  }
  std::string args;
  if (is_debian_family(os)) {
    auto shortname = r.node.substr(0, r.node.find('.'));
    auto domain = site_value(txn, "domain");
    args += "auto=true priority=critical url=" + with_token(self + "/preseed")
            + " interface=auto netcfg/choose_interface=auto hostname=" + shortname;
    if (!domain.empty()) {
      args += " domain=" + domain;
    }
    args += " lowmem=+0 " + console;
  } else {
    args += "inst.ks=" + with_token(self + "/kickstart")
            + " inst.repo=" + repo_url(txn, osimage_value(osimage, "pkgdir"))
            + " BOOTIF=01-${netX/mac:hexhyp} " + console;
    p.bootif = true;
  }
  for (auto& word : split(osimage_value(osimage, "addkcmdline"), ' ')) {
    if (!starts_with(word, "R::")) { // (R:: options are the installed system's)
      args += " " + word;
    }
  }
  p.args = std::move(args);
  return p;
}

boot_reply boot_script(const store::read_txn& txn, std::string_view node, std::string_view base_url,
                       const install_token_key& key) {
  auto p = plan_boot(txn, node, base_url, std::nullopt, &key);
  auto r = std::move(p.reply);
  if (r.status != 200) {
    return r;
  }
  if (p.state == "boot") {
    r.body = "#!ipxe\n#boot\nexit\n";
  } else if (p.state == "shell") {
    r.body = "#!ipxe\n#shell\necho clusterws does not ship the service shell (xCAT's genesis): "
             "booting from the local disk\nexit\n";
  } else if (p.boottarget) {
    // xnba.pm: the kernel line, then BOOTIF (and initrd=initrd for UEFI's stub)
    r.body = "#!ipxe\n#" + p.state + "\nkernel " + p.kernel_url
             + (p.initrd_url.empty() ? "" : " initrd=initrd") + (p.args.empty() ? "" : " ") + p.args
             + " BOOTIF=01-${netX/mac:hexhyp}\n"
             + (p.initrd_url.empty() ? "" : "initrd " + p.initrd_url + "\n") + "boot\n";
  } else {
    r.body = "#!ipxe\n#" + p.state + "\nkernel " + p.kernel_url + " initrd=initrd " + p.args
             + "\ninitrd " + p.initrd_url + "\nboot\n";
  }
  r.infer = boot_fetch::script;
  return r;
}

boot_reply boot_file(const store::read_txn& txn, std::string_view node, boot_fetch which,
                     std::string_view tftp_root) {
  boot_reply r;
  store::cluster_view view{txn};
  const char* what = which == boot_fetch::kernel ? "kernel" : "initrd";
  if (!view.is_node(node)) {
    r.status = 404;
    r.body = std::string{node} + ": no such node\n";
    return r;
  }
  r.node = std::string{node};
  auto state = view.attribute(node, "currstate");
  if (!starts_with(state, "install ") && !starts_with(state, "boottarget ")) {
    r.status = 404;
    r.body = r.node + ": no " + what + " in state '" + (state.empty() ? "offline" : state) + "'\n";
    return r;
  }
  auto image = node_osimage(view, node);
  auto osimage = txn.get(object_type::osimage, image);
  auto os = view.attribute(node, "os");
  if (os.empty()) {
    os = osimage_value(osimage, "osvers");
  }
  std::string error;
  auto bt = osimage ? find_boot_target(txn, osimage_value(osimage, "boottarget"), os,
                                       view.attribute(node, "profile"), error)
                    : std::nullopt;
  if (bt) {
    // a boottarget's files are relative to the TFTP root, as xCAT's xnba fetches them
    const auto& file = which == boot_fetch::kernel ? bt->kernel : bt->initrd;
    r.file = under_root(tftp_root_of(txn, tftp_root), file);
    if (r.file.empty()) {
      r.status = 404;
      r.body = r.node + ": boottarget " + bt->name + " has no " + what
               + (file.empty() ? "" : " under the TFTP root") + "\n";
      return r;
    }
    r.infer = which;
    return r;
  }
  if (!error.empty() || starts_with(state, "boottarget ")) {
    r.status = 404;
    r.body = r.node + ": " + (error.empty() ? "osimage '" + image + "' names no boottarget" : error)
             + "\n";
    return r;
  }
  auto tree = local_pkgdir(osimage_value(osimage, "pkgdir"));
  if (!osimage || tree.empty()) {
    r.status = 404;
    r.body = r.node + ": osimage '" + image + "' has no pkgdir\n";
    return r;
  }
  if (is_debian_family(os)) {
    auto arch = debian_arch(osimage_value(osimage, "osarch"));
    r.file
      = tree / "debian-installer" / arch / (which == boot_fetch::kernel ? "linux" : "initrd.gz");
  } else {
    r.file = tree / "images" / "pxeboot" / (which == boot_fetch::kernel ? "vmlinuz" : "initrd.img");
  }
  r.infer = which;
  return r;
}

boot_reply boot_template(const store::read_txn& txn, std::string_view node, std::string_view token,
                         std::string_view base_url, const install_token_key& key,
                         const boot_chain_config& cfg) {
  boot_reply r;
  store::cluster_view view{txn};
  if (!view.is_node(node)) {
    r.status = 404;
    r.body = std::string{node} + ": no such node\n";
    return r;
  }
  r.node = std::string{node};
  if (!key.check(txn, node, token)) {
    r.status = 403;
    r.body = r.node + ": install token refused\n";
    return r;
  }
  auto image = node_osimage(view, node);
  auto osimage = txn.get(object_type::osimage, image);
  auto os = view.attribute(node, "os");
  auto arch = view.attribute(node, "arch");
  auto profile = view.attribute(node, "profile");
  std::optional<std::filesystem::path> file;
  if (auto t = osimage_value(osimage, "template"); !t.empty()) {
    file = std::filesystem::path{t};
  } else {
    auto platform = template_platform(os);
    auto installdir = site_value(txn, "installdir");
    std::filesystem::path custom = (installdir.empty() ? "/install" : installdir);
    file = find_template_file(
      {custom / "custom" / "install" / platform, cfg.template_dir / platform}, profile, os, arch);
  }
  if (!file) {
    r.status = 404;
    r.body = r.node + ": no install template for profile " + profile + ", os " + os + "\n";
    return r;
  }
  auto pkgdir = osimage_value(osimage, "pkgdir");
  auto repo = repo_url(txn, pkgdir);
  auto scheme = repo.find("://");
  auto rest = scheme == std::string::npos ? repo : repo.substr(scheme + 3);
  auto slash = rest.find('/');
  std::map<std::string, std::string> vars{
    {"token", key.token(txn, node)},
    {"status_url", std::string{base_url} + "/boot/node/" + r.node + "/status"},
    {"mirror_host", rest.substr(0, slash)},
    {"mirror_dir", slash == std::string::npos ? "/" : rest.substr(slash)},
    {"repo_url", repo}};
  try {
    std::shared_ptr<const compiled_template> compiled;
    if (cfg.templates) {
      compiled = cfg.templates->get(*file, cfg.limits);
    } else {
      auto reader = file_reader(cfg.limits.max_bytes);
      auto text = reader(*file);
      compiled = std::make_shared<const compiled_template>(
        compiled_template::parse(text, *file, cfg.limits, reader));
    }
    store_template_values values{view, r.node, std::move(vars)};
    r.body = compiled->render(r.node, values);
  } catch (const std::exception& e) {
    r.status = 404;
    r.body = r.node + ": " + e.what() + "\n";
    return r;
  }
  r.infer = boot_fetch::install_template;
  return r;
}

// -- status --------------------------------------------------------------------------

std::vector<install_update_result> apply_install_updates(store::write_txn& t,
                                                         const std::vector<install_update>& updates,
                                                         const install_token_key& key,
                                                         std::time_t now) {
  std::vector<install_update_result> out(updates.size());
  auto when = xcat_status_time(now);
  for (size_t i = 0; i < updates.size(); ++i) {
    const auto& u = updates[i];
    auto& res = out[i];
    auto rec = t.get(object_type::node, u.node);
    if (!rec) {
      res.refused = u.callback.has_value();
      continue;
    }
    if (u.callback && !u.by_address && !key.check(t, u.node, u.token)) {
      res.refused = true; // (the token ended since the read that checked it)
      continue;
    }
    auto attrs = rec->to_map();
    auto get = [&](const char* k) {
      auto it = attrs.find(k);
      return it == attrs.end() ? std::string{} : it->second;
    };
    std::string status = get("status");
    std::string stage = install_stage_of(get("appstatus"));
    std::string new_status = status;
    std::string new_stage = stage;
    bool advance = false;
    if (u.fetched) {
      auto m = fetch_move(t, u.node, *u.fetched, status, stage);
      if (!m) {
        res.status = status;
        continue;
      }
      new_status = m->first;
      new_stage = m->second;
    } else if (u.callback) {
      switch (*u.callback) {
        case install_callback::installing: new_status = new_stage = "installing"; break;
        case install_callback::installed: new_status = new_stage = "installed"; break;
        case install_callback::postbooting: new_status = "postbooting"; break;
        case install_callback::booted: new_status = "booted"; break;
        case install_callback::failed: new_status = new_stage = "failed"; break;
        case install_callback::next: advance = true; break;
      }
    } else if (!u.refused_nonce.empty()) {
      auto count = count_refused_token(t, u.node, u.refused_nonce);
      if (u.bad_token_limit == 0 || count != u.bad_token_limit) {
        res.status = status;
        continue;
      }
      res.marked = true;
      new_status = "failed";
      new_stage = "bad install token";
    } else if (u.bad_tokens) {
      new_status = "failed";
      new_stage = "bad install token";
    } else if (u.overdue) {
      // still overdue in this transaction? (a fetch or a callback may have moved it since)
      if (status == "failed" || stage != u.stage || !install_token_armed(t, u.node)) {
        res.status = status;
        continue;
      }
      new_status = "failed";
      new_stage = u.message;
    }
    if (advance) {
      // nodeset next; the token is carried over the step unless the node said installed
      auto nonce = install_token_nonce(t, u.node);
      nodeset_action next;
      next.what = nodeset_action::kind::next;
      try {
        set_boot_state(t, {u.node}, next);
      } catch (const store::rejected&) {
        res.status = status; // (a chain nodeset refuses: nothing was written)
        continue;
      }
      rec = t.get(object_type::node, u.node);
      attrs = rec ? rec->to_map() : store::attr_map{};
      if (!nonce.empty() && stage != "installed") {
        rearm_install_token(t, u.node, nonce);
      }
      res.changed = true;
    }
    if (new_status != status || new_stage != stage) {
      if (new_status != status) {
        attrs["status"] = new_status;
        attrs["statustime"] = when;
      }
      if (new_stage != stage) {
        attrs["appstatus"] = merge_appstatus(get("appstatus"), "install=" + new_stage);
        attrs["appstatustime"] = when;
      }
      t.put(object_type::node, u.node, attrs);
      res.changed = true;
    }
    // the token ends once the node said installed and its chain left the install state
    if (u.callback
        && (*u.callback == install_callback::installed || *u.callback == install_callback::next)) {
      store::cluster_view view{t};
      if (new_stage == "installed" && !is_install_state(view.attribute(u.node, "currstate"))) {
        disarm_install_token(t, u.node);
      }
    }
    res.status = new_status;
  }
  return out;
}

std::vector<install_update> overdue_installs(const store::read_txn& txn, std::time_t now,
                                             const install_deadlines& d) {
  std::vector<install_update> out;
  store::cluster_view view{txn};
  for (const auto& node : install_token_nodes(txn)) {
    auto state = view.attribute(node, "currstate");
    if (!view.is_node(node)
        || (!starts_with(state, "install ") && !starts_with(state, "boottarget "))) {
      continue;
    }
    if (view.attribute(node, "status") == "failed") {
      continue;
    }
    auto stage = install_stage_of(view.attribute(node, "appstatus"));
    const char* next = nullptr;
    long limit = 0;
    if (stage == "script") {
      next = "kernel";
      limit = d.kernel;
    } else if (stage == "kernel" || stage == "initrd") {
      next = "installing";
      limit = d.installing;
    } else if (stage == "installing") {
      next = "installed";
      limit = d.installed;
    }
    if (next == nullptr || limit <= 0) {
      continue;
    }
    auto since = parse_status_time(view.attribute(node, "appstatustime"));
    if (!since || now - *since < limit) {
      continue;
    }
    install_update u;
    u.node = node;
    u.overdue = true;
    u.stage = stage;
    u.message = "no " + std::string{next} + " within " + std::to_string(limit) + " s";
    out.push_back(std::move(u));
  }
  return out;
}

} // namespace cws::api
