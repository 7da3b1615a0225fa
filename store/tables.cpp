#include "store/tables.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "base/text.hpp"
#include "store/credentials.hpp"
#include "store/tokens.hpp"

namespace cws::store {

namespace {

/// xCAT's column order for the node tables whose full column list differs from the
/// attributes clusterws keeps (xcat-compat.md §5.3); the key column first.
const std::map<std::string_view, std::string_view> node_table_columns = {
  {"nodelist", "node groups status statustime appstatus appstatustime primarysn hidden "
               "updatestatus updatestatustime zonename comments disable"},
  {"nodehm", "node power mgt cons termserver termport conserver serialport serialspeed "
             "serialflow getmac cmdmapping consoleondemand consoleenabled comments disable"},
  {"noderes", "node servicenode netboot tftpserver tftpdir nfsserver monserver nfsdir "
              "installnic primarynic discoverynics cmdinterface xcatmaster current_osimage "
              "next_osimage nimserver routenames nameservers proxydhcp syslog comments disable"},
  {"nodetype", "node os arch profile provmethod supportedarchs nodetype comments disable"},
  {"vm", "node mgr host migrationdest storage storagemodel storagecache storageformat "
         "cfgstore memory cpus nics nicmodel bootorder clockoffset virtflags master vncport "
         "textconsole powerstate beacon datacenter cluster guestostype othersettings physlots "
         "vidmodel vidproto vidpassword comments disable"},
  {"hosts", "node ip hostnames otherinterfaces comments disable"},
  {"mac", "node interface mac comments disable"},
  {"ipmi", "node bmc bmcport taggedvlan bmcid username password comments disable"},
  {"postscripts", "node postscripts postbootscripts comments disable"},
  {"chain", "node currstate currchain chain ondiscover comments disable"},
  {"bootparams", "node kernel initrd kcmdline addkcmdline dhcpstatements adddhcpstatements "
                 "comments disable"},
  {"switch", "node switch port vlan interface comments disable"},
  // xCAT's Schema.pm order (man5/servicenode.5); monserver is not kept (the node attribute
  // of that name is noderes')
  {"servicenode", "node nameserver dhcpserver tftpserver nfsserver conserver monserver "
                  "ldapserver ntpserver ftpserver nimserver ipforward dhcpinterfaces proxydhcp "
                  "comments disable"},
};

/// Node tables keyed by another name than `node` (the row's object is still the key).
const std::map<std::string_view, std::string_view> node_table_keys
  = {{"ppchcp", "hcp"}, {"mpa", "mpa"}, {"switches", "switch"}};

/// The other tables: name, object type, key columns, columns (`column(attr)` where the
/// attribute is named differently, `column()` for one clusterws does not keep), description.
struct other_table {
  const char* name;
  object_type type;
  const char* keys;
  const char* columns;
  const char* description;
};

constexpr other_table other_tables[] = {
  {"site", object_type::site, "key", "key value comments() disable()",
   "Global settings for the whole cluster (the clustersite object)."},
  {"networks", object_type::network, "net mask",
   "netname net mask mgtifname gateway dhcpserver tftpserver nameservers ntpservers "
   "logservers dynamicrange staticrange staticrangeincrement nodehostname ddnsdomain vlanid "
   "domain mtu comments(usercomment) disable()",
   "Describes the networks in the cluster and info necessary to set up nodes on that network."},
  {"nodegroup", object_type::group, "groupname",
   "groupname grouptype members membergroups wherevals comments(usercomment) disable()",
   "Contains group definitions, whose membership is dynamic depending on characteristics of "
   "the node."},
  {"osimage", object_type::osimage, "imagename",
   "imagename groups profile imagetype description provmethod rootfstype nfsrootopts "
   "osdistroname osupdatename cfmdir osname osvers osarch synclists postscripts "
   "postbootscripts serverrole isdeletable kitcomponents environvar comments() disable()",
   "Basic information about an operating system image that can be used to deploy cluster "
   "nodes."},
  {"linuximage", object_type::osimage, "imagename",
   "imagename template boottarget addkcmdline pkglist pkgdir otherpkglist otherpkgdir exlist "
   "postinstall rootimgdir kerneldir nodebootif otherifce netdrivers kernelver krpmver "
   "permission dump crashkernelsize partitionfile driverupdatesrc comments(usercomment) "
   "disable()",
   "Information about a Linux operating system image that can be used to deploy cluster "
   "nodes."},
  {"boottarget", object_type::boottarget, "bprofile",
   "bprofile kernel initrd kcmdline comments disable()",
   "Specify non-standard initrd, kernel, and parameters that should be used for a given "
   "profile."},
  {"policy", object_type::policy, "priority",
   "priority name host commands noderange parameters time rule comments(usercomment) disable",
   "The policy table in xCAT controls who has authority to run specific xCAT operations."},
  {"passwd", object_type::passwd, "key username",
   "key username password cryptmethod() authdomain() comments() disable()",
   "Contains default userids and passwords for xCAT to access cluster components (clusterws: "
   "the API users, key=xcat)."},
};

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    auto end = std::min(text.find(' ', pos), text.size());
    if (end > pos) {
      out.push_back(text.substr(pos, end - pos));
    }
    pos = end + 1;
  }
  return out;
}

table_def node_table(std::string_view name) {
  table_def t;
  t.name = std::string{name};
  t.type = object_type::node;
  auto key = node_table_keys.count(name) ? node_table_keys.at(name) : std::string_view{"node"};
  t.keys = {std::string{key}};
  std::vector<std::string_view> cols;
  if (auto it = node_table_columns.find(name); it != node_table_columns.end()) {
    cols = words(it->second);
  } else {
    cols.push_back(key);
    for (const auto& e : node_attribute_entries()) {
      if (e.table == name && std::find(cols.begin(), cols.end(), e.column) == cols.end()) {
        cols.push_back(e.column);
      }
    }
    cols.push_back("comments");
    cols.push_back("disable");
  }
  for (auto c : cols) {
    table_column col{std::string{c}, {}};
    for (const auto& e : node_attribute_entries()) {
      if (e.table == name && e.column == c && e.attr != "node") {
        col.sources.push_back({e.attr, e.only_if});
      }
    }
    t.columns.push_back(std::move(col));
  }
  t.description = "xCAT's " + t.name + " table: node attributes held per node or group.";
  return t;
}

table_def make_other(const other_table& o) {
  table_def t;
  t.name = o.name;
  t.type = o.type;
  for (auto k : words(o.keys)) {
    t.keys.emplace_back(k);
  }
  for (auto c : words(o.columns)) {
    auto paren = c.find('(');
    table_column col{std::string{c.substr(0, paren)}, {}};
    auto attr = paren == std::string_view::npos ? c : c.substr(paren + 1, c.size() - paren - 2);
    // the object's name is its key attribute, never stored as an attribute
    bool name_column = col.name == key_attribute(t.type)
                       || (t.type == object_type::network && col.name == "netname");
    if (!attr.empty() && !name_column && t.type != object_type::site
        && t.type != object_type::passwd) {
      col.sources.push_back({attr, {}}); // (views into the literals above)
    }
    t.columns.push_back(std::move(col));
  }
  t.description = o.description;
  return t;
}

/// The tables an attribute can live in, with their conditions, in Schema order.
const std::unordered_map<std::string_view, std::vector<attribute_entry>>& homes() {
  static const auto instance = [] {
    std::unordered_map<std::string_view, std::vector<attribute_entry>> m;
    for (const auto& e : node_attribute_entries()) {
      m[e.attr].push_back(e);
    }
    return m;
  }();
  return instance;
}

/// True if the object whose attributes `value_of` reads satisfies `only_if`: the value of
/// the named attribute has one of the `|`-separated words (in a comma list).
template<class ValueOf>
bool holds(std::string_view only_if, const ValueOf& value_of) {
  return only_if.empty() || condition_holds(only_if, value_of);
}

/// The table node attribute `attr` lives in for one object: the first whose condition
/// holds, else the first (xcat-compat.md §5.2).
template<class ValueOf>
std::string_view home_table(std::string_view attr, const ValueOf& value_of) {
  const auto& entries = homes().at(attr);
  for (const auto& e : entries) {
    if (holds(e.only_if, value_of)) {
      return e.table;
    }
  }
  return entries.front().table;
}

/// How one object's attributes are read for its rows.
struct object_reader {
  const cluster_view& view;
  std::string_view name;
  bool is_node;
  const attr_map& own;
  bool resolved;

  std::string value(std::string_view attr) const {
    if (is_node && resolved) {
      return view.attribute(name, attr);
    }
    auto it = own.find(attr);
    return it == own.end() ? std::string{} : it->second;
  }

  /// Values of conditions are always read as the node reads them.
  std::string condition_value(std::string_view attr) const {
    return is_node ? view.attribute(name, attr) : value(attr);
  }
};

/// The row of one object in node table `t`; nullopt when it has none.
std::optional<table_row> object_row(const table_def& t, const object_reader& r) {
  table_row row(t.columns.size());
  bool any = t.name == "nodelist" && r.is_node;
  if (t.name == "nodelist" && !r.is_node) {
    return std::nullopt; // groups are not nodelist rows
  }
  auto cond = [&](std::string_view a) {
    return r.condition_value(a);
  };
  for (size_t i = 0; i < t.columns.size(); ++i) {
    for (const auto& s : t.columns[i].sources) {
      if (auto v = r.value(s.attr); !v.empty() && home_table(s.attr, cond) == t.name) {
        row[i] = std::move(v);
        any = true;
        break;
      }
    }
  }
  if (!any) {
    return std::nullopt;
  }
  row[0] = std::string{r.name};
  return row;
}

/// The row of a network, osimage, policy or group object.
std::optional<table_row> plain_row(const table_def& t, std::string_view name, const attr_map& own) {
  table_row row(t.columns.size());
  bool any = t.name != "linuximage";
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const auto& c = t.columns[i];
    if (c.name == key_attribute(t.type)
        || (t.type == object_type::network && c.name == "netname")) {
      row[i] = std::string{name};
      continue;
    }
    for (const auto& s : c.sources) {
      if (auto it = own.find(s.attr); it != own.end()) {
        row[i] = it->second;
        any = true;
        break;
      }
    }
  }
  if (!any) { // a linuximage row: an image of type linux, or one with linux attributes
    auto type = own.find("imagetype");
    if (type == own.end() || type->second != "linux") {
      return std::nullopt;
    }
  }
  return row;
}

std::string column_value(const table_def& t, const table_row& row, std::string_view column) {
  auto i = t.column(column);
  return i && row[*i] ? *row[*i] : std::string{};
}

[[noreturn]] void reject(std::string message) {
  outcome o;
  o.errors.push_back(std::move(message));
  throw rejected{std::move(o)};
}

/// Adds `from` to `into`; the info lines of chdef are not the table tools' (they print none).
void merge(outcome& into, outcome from) {
  into.warnings.insert(into.warnings.end(), from.warnings.begin(), from.warnings.end());
  into.count += from.count;
}

/// The attribute a change of column `c` writes for object `name`: the first source whose
/// condition holds, else the first.
std::string_view target_attribute(const table_column& c, const cluster_view& view, object_type type,
                                  std::string_view name) {
  auto own = view.txn().get(type, name);
  auto value_of = [&](std::string_view a) -> std::string {
    if (type == object_type::node) {
      return view.attribute(name, a);
    }
    return own ? std::string{own->find(a).value_or("")} : std::string{};
  };
  for (const auto& s : c.sources) {
    if (holds(s.only_if, value_of)) {
      return s.attr;
    }
  }
  return c.sources.front().attr;
}

bool is_name_column(const table_def& t, std::string_view column) {
  return (t.type == object_type::node && column == t.keys.front())
         || column == key_attribute(t.type)
         || (t.type == object_type::network && column == "netname");
}

/// The passwd rows kept apart from the API users (key ipmi and key system), by object name.
bool is_credentials_object(std::string_view name) {
  return name == bmc_credentials_object || name == system_credentials_object;
}

/// The passwd key of credentials object `name` ("ipmi", "system").
std::string_view credentials_key(std::string_view name) {
  return name.substr(name.find('.') + 1);
}

/// Sets the passwd table's ipmi or system row (username, password) from `changes`.
outcome write_credentials(write_txn& txn, std::string_view object, const std::string& user,
                          const std::vector<column_change>& changes) {
  attr_map row;
  if (auto rec = txn.get(object_type::site, object)) {
    row = rec->to_map();
  }
  if (!user.empty()) {
    row["username"] = user;
  }
  for (const auto& c : changes) {
    if ((c.column != "password" && c.column != "username") || c.mode != list_mode::set) {
      reject("Only passwd.username and passwd.password of the "
             + std::string{credentials_key(object)} + " row can be set (with '=').");
    }
    if (c.value.find('\0') != std::string::npos) {
      reject("a password cannot contain a NUL character");
    }
    row[c.column] = c.value;
  }
  txn.put(object_type::site, object, row);
  outcome total;
  total.count = 1;
  return total;
}

/// Writes `changes` into object `name` of table `t` through chdef.
outcome write_object(write_txn& txn, const table_def& t, object_type type, const std::string& name,
                     const std::vector<column_change>& changes) {
  outcome total;
  if (t.type == object_type::passwd && is_credentials_object(name)) {
    return write_credentials(txn, name, {}, changes);
  }
  if (t.type == object_type::passwd) {
    for (const auto& c : changes) {
      if (c.column != "password" || c.mode != list_mode::set) {
        reject("Only passwd.password can be set (with '=').");
      }
      if (c.value.empty()) {
        reject("An API user needs a password; remove the row with 'chtab -d' instead.");
      }
      auto hash = is_password_hash(c.value) ? c.value : hash_password(c.value);
      txn.put(object_type::passwd, name, {{"password", hash}});
      revoke_user_tokens(txn, name); // tokens go with the old password
      ++total.count;
    }
    return total;
  }
  cluster_view view{txn};
  for (auto mode : {list_mode::set, list_mode::append, list_mode::remove}) {
    change_request req;
    req.type = type;
    req.names = {type == object_type::site ? std::string{"clustersite"} : name};
    req.mode = mode;
    req.check_conditions = false; // a row goes where chtab is told, as in xCAT
    for (const auto& c : changes) {
      if (c.mode != mode || is_name_column(t, c.column)) {
        continue;
      }
      if (t.type == object_type::site) {
        req.attrs.push_back({name, c.value}); // the row's key is the attribute
        continue;
      }
      const auto& col = t.columns[*t.column(c.column)];
      req.attrs.push_back({std::string{target_attribute(col, view, type, name)}, c.value});
    }
    if (!req.attrs.empty()) {
      merge(total, change_objects(txn, req));
    }
  }
  return total;
}

/// The type of a node table row's object in table `t`: a node, or a group (defined, or named
/// in a node's groups). A new name is a new node in nodelist (its rows are the nodes) and a
/// group anywhere else: xCAT keys a row by any name, and a row keyed by a name that is not a
/// node is a group's row, the values its members will inherit (`chtab node=kvms vm.host=h1`
/// before any node joins kvms).
object_type node_row_type(const read_txn& txn, const table_def& t, std::string_view name) {
  if (txn.exists(object_type::node, name)) {
    return object_type::node;
  }
  if (txn.exists(object_type::group, name) || !txn.members(name).empty()) {
    return object_type::group;
  }
  return t.name == "nodelist" ? object_type::node : object_type::group;
}

/// xCAT names a network made without a name after its address and mask (makenetworks).
std::string network_name(std::string net, std::string mask) {
  std::replace(net.begin(), net.end(), '.', '_');
  std::replace(mask.begin(), mask.end(), '.', '_');
  return net + "-" + mask;
}

/// Every row of `t` with its object's name.
std::vector<std::pair<std::string, table_row>> all_rows(const read_txn& txn, const table_def& t) {
  cluster_view view{txn, false};
  std::vector<std::pair<std::string, table_row>> out;
  scan_rows(view, t, true, [&](std::string_view name, table_row&& row) {
    out.emplace_back(std::string{name}, std::move(row));
  });
  return out;
}

} // namespace

std::optional<size_t> table_def::column(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == name) {
      return i;
    }
  }
  return std::nullopt;
}

const std::vector<table_def>& table_catalog() {
  static const auto instance = [] {
    std::vector<table_def> out;
    std::vector<std::string_view> seen;
    for (const auto& e : node_attribute_entries()) {
      // ppcdirect rows are keyed by user name (passwd.<user> attributes): shown on nodes only
      if (e.table != "ppcdirect" && std::find(seen.begin(), seen.end(), e.table) == seen.end()) {
        seen.push_back(e.table);
        out.push_back(node_table(e.table));
      }
    }
    for (const auto& o : other_tables) {
      out.push_back(make_other(o));
    }
    std::sort(out.begin(), out.end(),
              [](const table_def& a, const table_def& b) { return a.name < b.name; });
    return out;
  }();
  return instance;
}

const table_def* find_table(std::string_view name) {
  for (const auto& t : table_catalog()) {
    if (t.name == name) {
      return &t;
    }
  }
  return nullptr;
}

void hide_bmc_passwords(const table_def& t, table_row& row) {
  for (size_t i = 0; i < t.columns.size() && i < row.size(); ++i) {
    for (const auto& s : t.columns[i].sources) {
      if (is_masked_attribute(s.attr) && row[i] && !row[i]->empty()) {
        row[i] = "********";
      }
    }
  }
}

void hide_bmc_passwords(attr_map& attrs) {
  for (auto& [k, v] : attrs) {
    if (is_masked_attribute(k) && !v.empty()) {
      v = "********";
    }
  }
}

bool is_masked_column(const table_def& t, std::string_view column) {
  auto i = t.column(column);
  if (!i) {
    return false;
  }
  if (t.type == object_type::passwd && column == "password") {
    return true;
  }
  const auto& sources = t.columns[*i].sources;
  return std::any_of(sources.begin(), sources.end(),
                     [](const column_source& s) { return is_masked_attribute(s.attr); });
}

void scan_rows(const cluster_view& view, const table_def& t, bool passwords,
               const std::function<void(std::string_view, table_row&&)>& sink) {
  const auto& txn = view.txn();
  switch (t.type) {
    case object_type::node:
      for (auto type : {object_type::node, object_type::group}) {
        txn.scan(type, [&](std::string_view name, record_view rec) {
          auto own = rec.to_map();
          object_reader r{view, name, type == object_type::node, own, false};
          if (auto row = object_row(t, r)) {
            if (!passwords) {
              hide_bmc_passwords(t, *row);
            }
            sink(name, std::move(*row));
          }
        });
      }
      return;
    case object_type::site:
      if (auto rec = txn.get(object_type::site, "clustersite")) {
        rec->for_each([&](std::string_view key, std::string_view value) {
          table_row row(t.columns.size());
          row[0] = std::string{key};
          row[1] = std::string{value};
          sink(key, std::move(row));
        });
      }
      return;
    case object_type::passwd:
      txn.scan(object_type::passwd, [&](std::string_view user, record_view rec) {
        table_row row(t.columns.size());
        row[0] = "xcat";
        row[1] = std::string{user};
        row[2] = passwords ? std::string{rec.find("password").value_or("")} : "********";
        sink(user, std::move(row));
      });
      for (auto object : {bmc_credentials_object, system_credentials_object}) {
        if (auto rec = txn.get(object_type::site, object)) {
          table_row row(t.columns.size());
          row[0] = std::string{credentials_key(object)};
          row[1] = std::string{rec->find("username").value_or("")};
          row[2] = passwords ? std::string{rec->find("password").value_or("")} : "********";
          sink(object, std::move(row));
        }
      }
      return;
    default:
      txn.scan(t.type, [&](std::string_view name, record_view rec) {
        if (auto row = plain_row(t, name, rec.to_map())) {
          sink(name, std::move(*row));
        }
      });
  }
}

std::optional<table_row> node_row(const cluster_view& view, const table_def& t,
                                  std::string_view node) {
  auto rec = view.txn().get(object_type::node, node);
  if (t.type != object_type::node || !rec) {
    return std::nullopt;
  }
  auto own = rec->to_map();
  return object_row(t, object_reader{view, node, true, own, true});
}

bool row_matches(const table_def& t, const table_row& row, const key_values& keys) {
  return std::all_of(keys.begin(), keys.end(),
                     [&](const auto& kv) { return column_value(t, row, kv.first) == kv.second; });
}

std::string parse_key_values(std::string_view text, key_values& out) {
  for (const auto& pair : base::split_list(text)) {
    auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      return "The key '" + pair + "' is not of the form column=value.";
    }
    out.emplace_back(pair.substr(0, eq), pair.substr(eq + 1));
  }
  return out.empty() ? "No key column=value was given." : "";
}

std::string check_columns(const table_def& t, const key_values& keys,
                          const std::vector<column_change>& changes) {
  for (const auto& [k, v] : keys) {
    if (!t.column(k)) {
      return "Unkown key " + k + " to " + t.name; // sic: xCAT's gettab text
    }
  }
  for (const auto& c : changes) {
    auto i = t.column(c.column);
    if (!i) {
      return t.name + "." + c.column + " not a valid table.column description";
    }
    const auto& col = t.columns[*i];
    bool kept
      = !col.sources.empty() || t.type == object_type::site
        || (t.type == object_type::passwd && (col.name == "password" || col.name == "username"))
        || is_name_column(t, col.name);
    if (!kept) {
      return "clusterws does not keep " + t.name + "." + c.column
             + " (no definition attribute holds it).";
    }
    if (t.type == object_type::site && c.column != "value") {
      return "Only site.value can be set; the key column names the setting.";
    }
  }
  return {};
}

outcome set_rows(write_txn& txn, const table_def& t, const key_values& keys,
                 const std::vector<column_change>& changes) {
  if (auto msg = check_columns(t, keys, changes); !msg.empty()) {
    reject(msg);
  }
  outcome total;
  size_t matched = 0;
  for (auto& [name, row] : all_rows(txn, t)) {
    if (!row_matches(t, row, keys)) {
      continue;
    }
    ++matched;
    auto type = t.type == object_type::node ? node_row_type(txn, t, name) : t.type;
    merge(total, write_object(txn, t, type, name, changes));
  }
  if (matched > 0) {
    return total;
  }
  // no row matched: a new row made of the keys, as xCAT's setAttribs
  auto key = [&](std::string_view column) -> std::string {
    for (const auto& [k, v] : keys) {
      if (k == column) {
        return v;
      }
    }
    return {};
  };
  std::string name = key(t.type == object_type::passwd ? "username" : t.keys.front());
  auto all = changes;
  if (t.type == object_type::network) {
    for (const auto& c : changes) {
      if (c.column == "netname") {
        name = c.value;
      }
    }
    if (key("net").empty() || key("mask").empty()) {
      reject("A new networks row needs both keys, net and mask.");
    }
    if (name.empty() || name == key("net")) {
      name = network_name(key("net"), key("mask"));
    }
    all.push_back({"net", key("net")});
    all.push_back({"mask", key("mask")});
  } else if (t.type == object_type::passwd && (key("key") == "ipmi" || key("key") == "system")) {
    std::string user = key("username");
    for (const auto& c : changes) {
      if (c.column == "username") {
        user = c.value;
      }
    }
    return write_credentials(
      txn, key("key") == "ipmi" ? bmc_credentials_object : system_credentials_object, user,
      changes);
  } else if (t.type == object_type::passwd) {
    if (key("key") != "xcat") {
      reject("clusterws keeps only the key=xcat rows of passwd (the API users), its key=ipmi "
             "row (BMC credentials) and its key=system row (the nodes' root password); other "
             "credentials are node or group attributes (bmcusername, bmcpassword, ...).");
    }
    if (!is_user_name(name)) {
      reject("'" + name + "' is not a valid user name.");
    }
  }
  if (name.empty()) {
    reject("A new " + t.name + " row needs its key " + t.keys.front() + ".");
  }
  if (t.type != object_type::site && t.type != object_type::passwd) {
    if (auto msg
        = check_object_name(t.type == object_type::node ? object_type::node : t.type, name);
        !msg.empty()) {
      reject(msg);
    }
  }
  auto type = t.type == object_type::node ? node_row_type(txn, t, name) : t.type;
  merge(total, write_object(txn, t, type, name, all));
  if (total.count == 0 && type != object_type::site) {
    // a row with only its keys still makes the object (chtab node=n5 nodelist.groups=)
    change_request req;
    req.type = type;
    req.names = {name};
    req.check_conditions = false;
    merge(total, make_objects(txn, req));
  }
  return total;
}

outcome change_node_rows(write_txn& txn, const table_def& t, const std::vector<std::string>& nodes,
                         const std::vector<column_change>& changes) {
  if (t.type != object_type::node) {
    reject("nodech changes node tables; " + t.name + " is not one (use chtab).");
  }
  if (auto msg = check_columns(t, {}, changes); !msg.empty()) {
    reject(msg);
  }
  outcome total;
  for (const auto& n : nodes) {
    if (!txn.exists(object_type::node, n)) {
      reject(not_found_message(n, object_type::node));
    }
    merge(total, write_object(txn, t, object_type::node, n, changes));
  }
  return total;
}

size_t delete_rows(write_txn& txn, const table_def& t, const key_values& keys) {
  if (auto msg = check_columns(t, keys, {}); !msg.empty()) {
    reject(msg);
  }
  size_t deleted = 0;
  for (auto& [name, row] : all_rows(txn, t)) {
    if (!row_matches(t, row, keys)) {
      continue;
    }
    ++deleted;
    auto type = t.type == object_type::node ? node_row_type(txn, t, name) : t.type;
    if (t.type == object_type::passwd && is_credentials_object(name)) {
      txn.erase(object_type::site, name);
    } else if (t.type == object_type::passwd) {
      txn.erase(object_type::passwd, name);
      revoke_user_tokens(txn, name);
    } else if (t.name == "nodelist"
               || (t.type != object_type::node && t.name != "linuximage"
                   && t.type != object_type::site)) {
      remove_objects(txn, type, {name}); // the row is the object
    } else {
      std::vector<column_change> clear;
      for (size_t i = 0; i < t.columns.size(); ++i) {
        if (row[i] && !is_name_column(t, t.columns[i].name) && !t.columns[i].sources.empty()) {
          clear.push_back({t.columns[i].name, ""});
        }
      }
      if (t.type == object_type::site) {
        clear = {{"value", ""}};
      }
      write_object(txn, t, type, name, clear);
    }
  }
  return deleted;
}

std::string csv_line(const table_row& row) {
  std::string line;
  for (size_t i = 0; i < row.size(); ++i) {
    if (i > 0) {
      line += ',';
    }
    if (row[i]) {
      line += '"';
      for (char c : *row[i]) {
        line += c;
        if (c == '"') {
          line += '"';
        }
      }
      line += '"';
    }
  }
  return line;
}

std::string parse_csv(std::string_view text, const table_def& t, csv_table& out) {
  out = {};
  auto lines = base::output_lines(text);
  size_t n = 0;
  while (n < lines.size() && base::trim(lines[n]).empty()) {
    ++n;
  }
  if (n == lines.size() || lines[n].empty() || lines[n][0] != '#') {
    return "Data missing header line starting with #";
  }
  std::string header{base::trim(lines[n])};
  header.erase(std::remove(header.begin(), header.end(), '"'), header.end());
  for (const auto& c : base::split_list(header.substr(1))) {
    if (!t.column(c)) {
      return "The header line indicates that column '" + c
             + "' should exist, which is not defined in the schema for '" + t.name + "'";
    }
    out.columns.push_back(c);
  }
  for (++n; n < lines.size(); ++n) {
    std::string line{lines[n]};
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.pop_back();
    }
    if (line.empty()) {
      continue;
    }
    auto where = [&](std::string_view what, size_t at) {
      return "CSV " + std::string{what} + " in record on line " + std::to_string(n + 1)
             + ", character " + std::to_string(at) + ": " + std::string{lines[n]};
    };
    table_row row(out.columns.size());
    size_t pos = 0;
    for (size_t c = 0; c < out.columns.size() && pos <= line.size(); ++c) {
      if (pos == line.size() || line[pos] == ',') {
        ++pos; // an empty field: unset
        continue;
      }
      if (line[pos] != '"') {
        auto end = std::min(line.find(',', pos), line.size());
        auto field = line.substr(pos, end - pos);
        if (field.find('"') != std::string::npos) {
          return where("missing opening \" for record with \" characters", pos);
        }
        row[c] = field;
        pos = end + 1;
        continue;
      }
      std::string value;
      size_t i = pos + 1;
      for (;;) {
        if (i >= line.size()) {
          if (n + 1 >= lines.size()) {
            return where("unmatched \"", pos);
          }
          line += '\n'; // a quoted value goes on on the next line
          line += std::string{lines[++n]};
          continue;
        }
        if (line[i] != '"') {
          value += line[i++];
        } else if (i + 1 < line.size() && line[i + 1] == '"') {
          value += '"';
          i += 2;
        } else if (i + 1 == line.size() || line[i + 1] == ',') {
          break;
        } else {
          return where("unescaped \"", i);
        }
      }
      row[c] = std::move(value);
      pos = i + 2;
    }
    if (pos < line.size()) {
      return "Too many fields on line " + std::to_string(n + 1) + ": " + std::string{lines[n]};
    }
    out.rows.push_back(std::move(row));
  }
  return {};
}

outcome restore_rows(write_txn& txn, const table_def& t, const csv_table& rows, bool append) {
  for (const auto& k : t.keys) {
    if (std::find(rows.columns.begin(), rows.columns.end(), k) == rows.columns.end()) {
      reject("The header line of the " + t.name + " data lacks its key column '" + k + "'.");
    }
  }
  auto keys_of = [&](const table_row& row) {
    key_values keys;
    for (const auto& k : t.keys) {
      auto i = std::find(rows.columns.begin(), rows.columns.end(), k) - rows.columns.begin();
      keys.emplace_back(k, row[i].value_or(""));
    }
    return keys;
  };
  outcome total;
  if (!append) { // rows not in the data go; rows in it are replaced below
    std::set<key_values> kept;
    for (const auto& row : rows.rows) {
      kept.insert(keys_of(row));
    }
    for (auto& [name, row] : all_rows(txn, t)) {
      key_values keys;
      for (const auto& k : t.keys) {
        keys.emplace_back(k, column_value(t, row, k));
      }
      if (kept.count(keys) == 0) {
        total.count += delete_rows(txn, t, keys);
      }
    }
  }
  for (const auto& row : rows.rows) {
    std::vector<column_change> changes;
    for (size_t i = 0; i < rows.columns.size(); ++i) {
      const auto& col = rows.columns[i];
      bool key = std::find(t.keys.begin(), t.keys.end(), col) != t.keys.end();
      const auto& def = t.columns[*t.column(col)];
      if (key || (!row[i] && (def.sources.empty() || t.type == object_type::passwd))) {
        continue; // an unset column clusterws does not keep is nothing to restore
      }
      if (append && !row[i]) {
        continue;
      }
      changes.push_back({col, row[i].value_or("")});
    }
    if (!append) { // the table's columns not in the data are cleared too
      for (const auto& c : t.columns) {
        bool given
          = std::find(rows.columns.begin(), rows.columns.end(), c.name) != rows.columns.end();
        if (!given && !c.sources.empty() && !is_name_column(t, c.name)) {
          changes.push_back({c.name, ""});
        }
      }
    }
    merge(total, set_rows(txn, t, keys_of(row), changes));
  }
  return total;
}

} // namespace cws::store
