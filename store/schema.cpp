#include "store/schema.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "base/text.hpp"

namespace cws::store {

namespace {

// xcat-compat.md §5.2: node attributes by table, in Schema order, as `attr(column)` where the
// column name differs and `attr[only_if]` where a condition applies to one entry; the third
// field is a condition for every entry of the table.
constexpr std::string_view node_tables[][3] = {
  {"nodelist", "node groups status statustime appstatus appstatustime primarysn hidden "
               "updatestatus updatestatustime zonename usercomment(comments)"},
  {"nodetype", "nodetype arch supportedarchs os profile provmethod"},
  {"postscripts", "postscripts postbootscripts"},
  {"noderes", "xcatmaster servicenode tftpserver tftpdir nfsserver nimserver nfsdir monserver "
              "supportproxydhcp(proxydhcp) syslog primarynic installnic netboot nameservers "
              "routenames"},
  {"bootparams", "kernel initrd kcmdline addkcmdline"},
  {"servicenode", "setupnameserver(nameserver) setupdhcp(dhcpserver) setuptftp(tftpserver) "
                  "setupnfs(nfsserver) setupconserver(conserver) setupipforward(ipforward) "
                  "setupproxydhcp(proxydhcp) setupldap(ldapserver) setupntp(ntpserver) "
                  "setupftp(ftpserver) setupnim(nimserver) dhcpinterfaces"},
  {"iscsi", "iscsiserver(server) iscsitarget(target) iscsiuserid(userid) iscsipassword(passwd)"},
  {"nodehm", "mgt power cons termserver termport conserver getmac cmdmapping serialport "
             "serialspeed serialflow consoleondemand consoleenabled"},
  {"vpd", "serial mtm side"},
  {"mac", "interface mac"},
  {"chain", "chain ondiscover currstate currchain"},
  {"ppchcp", "username password", "nodetype=ivm|hmc|ppc"},
  {"ppc", "hcp id pprofile[mgt=hmc|ivm|fsp] parent[mgt=hmc|ivm|bpa|fsp] "
          "hwtype(nodetype)[mgt=fsp|bpa|ivm|hmc] supernode sfp"},
  {"zvm", "hwtype(nodetype) hcp userid", "mgt=zvm"},
  {"mp", "hwtype(nodetype)[mgt=blade|ipmi|openbmc] mpa slotid(id)[mgt=fsp|ipmi] id[mgt=blade]"},
  {"ppcdirect",
   "passwd.HMC(password) passwd.hscroot(password) passwd.admin(password) "
   "passwd.general(password) passwd.celogin(password)",
   "mgt=fsp|bpa"},
  {"ipmi", "bmc bmcport bmcusername(username) bmcpassword(password) bmcvlantag(taggedvlan)",
   "mgt=ipmi"},
  {"mpa", "username password displayname slots urlpath", "nodetype=mm"},
  {"openbmc", "bmc bmcusername(username) bmcpassword(password) consport bmcvlantag(taggedvlan)",
   "mgt=openbmc"},
  {"nodepos", "rack unit(u) chassis slot room height"},
  {"nics", "nicips nichostnamesuffixes nichostnameprefixes nictypes niccustomscripts "
           "nicnetworks nicaliases nicextraparams nicdevices nicsadapter"},
  {"prodkey", "productkey(key)"},
  {"domain", "ou domainadminuser(adminuser) domainadminpassword(adminpassword) authdomain "
             "domaintype(type)"},
  {"storage", "osvolume storagcontroller(controller) storagetype(type)"},
  {"vm", "vmmanager(mgr) vmhost(host) migrationdest vmstorage(storage) vmphyslots(physlots) "
         "vmothersetting(othersettings) vmstoragemodel(storagemodel) "
         "vmstoragecache(storagecache) vmstorageformat(storageformat) vmcfgstore(cfgstore) "
         "vmmemory(memory) vmcpus(cpus) vmnics(nics) vmnicnicmodel(nicmodel) "
         "vmbootorder(bootorder) vmvirtflags(virtflags) vmmaster(master) vmvncport(vncport) "
         "vmtextconsole(textconsole) vmbeacon(beacon) vmcluster(cluster)"},
  {"hypervisor", "hosttype(type) hostinterface(interface) hostmanager(mgr) hostcluster(cluster)"},
  {"websrv", "webport(port) username password", "nodetype=websrv"},
  {"pduoutlet", "pdu"},
  {"switch", "switch switchport(port) switchvlan(vlan) switchinterface(interface)"},
  {"hosts", "ip hostnames otherinterfaces"},
  {"prescripts", "prescripts-begin(begin) prescripts-end(end)"},
  {"cfgmgt", "cfgmgr cfgserver cfgmgtroles(roles)"},
  {"mic",
   "michost(host) micid(id) hwtype(nodetype) micbridge(bridge) miconboot(onboot) "
   "micvlog(vlog) micpowermgt(powermgt)",
   "mgt=mic"},
  {"hwinv", "cputype cpucount memory disksize"},
  {"pdu",
   "nodetype pdutype outlet username password snmpversion community snmpuser authtype "
   "authkey privtype privkey seclevel",
   "nodetype=pdu"},
  {"switches",
   "snmpusername(username) snmppassword(password) snmpversion snmpprivacy(privacy) "
   "snmpauth(auth) linkports username(sshusername) password(sshpassword) protocol "
   "switchtype",
   "nodetype=switch"},
};

/// Node attributes clusterws adds to xCAT's: the SSH port nodeshell connects to.
constexpr std::string_view node_extensions[] = {"sshport"};

constexpr std::string_view group_own = "groupname grouptype members membergroups wherevals "
                                       "usercomment";

constexpr std::string_view network_attrs
  = "netname net mask mgtifname gateway dhcpserver tftpserver nameservers ntpservers logservers "
    "dynamicrange nodehostname ddnsdomain vlanid domain staticrange staticrangeincrement mtu "
    "usercomment";

constexpr std::string_view osimage_attrs
  = "imagename groups imagetype description provmethod osdistroname osupdatename cfmdir "
    "rootfstype nfsrootopts profile osname osvers osarch synclists postscripts postbootscripts "
    "serverrole isdeletable kitcomponents environvar template boottarget addkcmdline pkglist "
    "pkgdir otherpkglist otherpkgdir exlist postinstall rootimgdir kerneldir nodebootif "
    "otherifce netdrivers kernelver krpmver permission dump crashkernelsize partitionfile "
    "driverupdatesrc usercomment installto winpepath nimtype nimmethod lpp_source spot root "
    "configdump paging resolv_conf image_data tmp home shared_home shared_root script "
    "fb_script bosinst_data installp_bundle otherpkgs mksysb";

constexpr std::string_view policy_attrs = "priority name host commands noderange parameters "
                                          "time rule comments usercomment disable";

template<class F>
void for_each_word(std::string_view words, F&& fn) {
  size_t pos = 0;
  while (pos < words.size()) {
    size_t end = words.find(' ', pos);
    if (end == std::string_view::npos) {
      end = words.size();
    }
    if (end > pos) {
      fn(words.substr(pos, end - pos));
    }
    pos = end + 1;
  }
}

struct schema_tables {
  std::vector<attribute_entry> entries;
  std::vector<std::string_view> node_order;
  std::unordered_set<std::string_view> node;
  std::unordered_set<std::string_view> nodelist;
  std::unordered_set<std::string_view> group;
  std::unordered_set<std::string_view> network;
  std::unordered_set<std::string_view> osimage;
  std::unordered_set<std::string_view> policy;
  std::unordered_map<std::string, std::string_view> columns;

  schema_tables() {
    for (const auto& [table, words, table_only_if] : node_tables) {
      for_each_word(words,
                    [&, table = table, table_only_if = table_only_if](std::string_view entry) {
                      auto only_if = table_only_if;
                      if (auto bracket = entry.find('['); bracket != std::string_view::npos) {
                        only_if = entry.substr(bracket + 1, entry.size() - bracket - 2);
                        entry = entry.substr(0, bracket);
                      }
                      auto paren = entry.find('(');
                      auto attr = entry.substr(0, paren);
                      auto column = paren == std::string_view::npos
                                      ? attr
                                      : entry.substr(paren + 1, entry.size() - paren - 2);
                      entries.push_back({attr, table, column, only_if});
                      if (node.insert(attr).second) {
                        node_order.push_back(attr);
                      }
                      if (table == "nodelist") {
                        nodelist.insert(attr);
                      }
                      columns.emplace(std::string{table} + "." + std::string{column}, attr);
                    });
    }
    for (auto attr : node_order) {
      if (nodelist.count(attr) == 0) {
        group.insert(attr);
      }
    }
    // clusterws extensions (docs/compatibility.md): valid for nodes and groups
    for (auto attr : node_extensions) {
      node.insert(attr);
      group.insert(attr);
    }
    for_each_word(group_own, [&](std::string_view w) { group.insert(w); });
    for_each_word(network_attrs, [&](std::string_view w) { network.insert(w); });
    for_each_word(osimage_attrs, [&](std::string_view w) { osimage.insert(w); });
    for_each_word(policy_attrs, [&](std::string_view w) { policy.insert(w); });
    // noderange shortnames (NodeRange.pm nodesbycriteria)
    columns.emplace("groups", "groups");
    columns.emplace("tags", "groups");
    columns.emplace("mgt", "mgt");
  }
};

const schema_tables& tables() {
  static const schema_tables instance;
  return instance;
}

constexpr std::string_view names[]
  = {"node", "group", "network", "osimage", "policy", "site", "passwd", "token", "boottarget"};

} // namespace

std::string_view type_name(object_type t) {
  return names[static_cast<size_t>(t)];
}

std::optional<object_type> parse_type(std::string_view name) {
  for (size_t i = 0; i < object_type_count; ++i) {
    auto t = static_cast<object_type>(i);
    if (names[i] == name && t != object_type::passwd && t != object_type::token) {
      return static_cast<object_type>(i);
    }
  }
  return std::nullopt;
}

std::string_view key_attribute(object_type t) {
  switch (t) {
    case object_type::node: return "node";
    case object_type::group: return "groupname";
    case object_type::network: return "netname";
    case object_type::osimage: return "imagename";
    case object_type::policy: return "priority";
    case object_type::boottarget: return "bprofile";
    default: return {};
  }
}

bool is_key_text(std::string_view text) {
  return !text.empty() && text.size() <= max_key_length
         && std::all_of(text.begin(), text.end(), [](char c) {
              auto u = static_cast<unsigned char>(c);
              return u > 0x20 && u < 0x7f && c != '=';
            });
}

bool is_valid_attribute(object_type t, std::string_view attr) {
  if (attr.empty()) {
    return false;
  }
  const auto& s = tables();
  // nic<word>.<ifname> is validated as its stem (DBobjectdefs.pm); the suffix is stored as
  // part of the key, so it obeys the key rules (lsdef prints keys as they are)
  if ((t == object_type::node || t == object_type::group) && attr.substr(0, 3) == "nic") {
    auto dot = attr.find('.');
    if (dot != std::string_view::npos && dot + 1 < attr.size()) {
      if (!is_key_text(attr)) {
        return false;
      }
      attr = attr.substr(0, dot);
    }
  }
  switch (t) {
    case object_type::node: return s.node.count(attr) > 0;
    case object_type::group: return s.group.count(attr) > 0;
    case object_type::network: return s.network.count(attr) > 0;
    case object_type::osimage: return s.osimage.count(attr) > 0;
    case object_type::policy: return s.policy.count(attr) > 0;
    case object_type::boottarget: // (Schema.pm's boottarget defspec)
      return attr == "bprofile" || attr == "kernel" || attr == "initrd" || attr == "kcmdline"
             || attr == "comments";
    case object_type::site:
      // free-form keys, but only ones that round-trip through `key=value` text and a stanza
      // file (lsdef -z, mkdef -z: `objtype` names the stanza's type, `#` starts a comment)
      return is_key_text(attr) && attr != "objtype" && attr.front() != '#';
    default: return false;
  }
}

std::string invalid_attribute_message(std::string_view attr, object_type t) {
  return "'" + std::string{attr} + "' is not a valid attribute name for an object type of '"
         + std::string{type_name(t)} + "'.";
}

const std::vector<attribute_entry>& node_attribute_entries() {
  return tables().entries;
}

const std::vector<std::string_view>& node_attributes() {
  return tables().node_order;
}

bool condition_holds(std::string_view only_if,
                     const std::function<std::string(std::string_view)>& value_of) {
  if (only_if.empty()) {
    return true;
  }
  auto eq = only_if.find('=');
  auto value = value_of(only_if.substr(0, eq));
  auto wanted = only_if.substr(eq + 1);
  for (const auto& word : base::split_list(value)) {
    size_t pos = 0;
    while (pos <= wanted.size()) {
      auto end = std::min(wanted.find('|', pos), wanted.size());
      if (wanted.substr(pos, end - pos) == word) {
        return true;
      }
      pos = end + 1;
    }
  }
  return false;
}

const std::vector<std::string_view>& attribute_conditions(std::string_view attr) {
  static const auto conditions = [] {
    std::unordered_map<std::string_view, std::vector<std::string_view>> m;
    std::unordered_set<std::string_view> always; // an entry without a condition
    for (const auto& e : tables().entries) {
      if (e.only_if.empty()) {
        always.insert(e.attr);
      } else if (std::find(m[e.attr].begin(), m[e.attr].end(), e.only_if) == m[e.attr].end()) {
        m[e.attr].push_back(e.only_if);
      }
    }
    for (auto a : always) {
      m.erase(a);
    }
    return m;
  }();
  static const std::vector<std::string_view> none;
  auto it = conditions.find(attr);
  return it == conditions.end() ? none : it->second;
}

std::string condition_refusal(std::string_view attr,
                              const std::vector<std::string_view>& conditions) {
  // xCAT names the attribute of the conditions and joins their values, sorted, with " or "
  std::string_view key;
  std::vector<std::string_view> values;
  for (auto c : conditions) {
    auto eq = c.find('=');
    key = c.substr(0, eq);
    values.push_back(c.substr(eq + 1));
  }
  std::sort(values.begin(), values.end());
  std::string msg = "Cannot set the attr='" + std::string{attr} + "' attribute unless "
                    + std::string{key} + " value is ";
  for (size_t i = 0; i < values.size(); ++i) {
    msg += (i > 0 ? " or " : "") + std::string{values[i]};
  }
  return msg + ".";
}

bool is_masked_attribute(std::string_view attr) {
  return attr == "bmcpassword";
}

bool is_nodelist_attribute(std::string_view attr) {
  return tables().nodelist.count(attr) > 0;
}

std::optional<std::string_view> attribute_for_column(std::string_view column) {
  const auto& cols = tables().columns;
  if (auto i = cols.find(std::string{column}); i != cols.end()) {
    return i->second;
  }
  // Extension: a plain node attribute name selects that attribute.
  const auto& node = tables().node;
  if (auto i = node.find(column); i != node.end()) {
    return *i;
  }
  return std::nullopt;
}

} // namespace cws::store
