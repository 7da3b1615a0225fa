#include "api/operation_traits.hpp"

#include <array>
#include <cassert>

namespace cws::api {

namespace {

using o = operation;
using sc = state_change;

// One row per operation, in the enum's order (checked below).
// clang-format off
constexpr std::array<operation_traits, operation_count> rows{{
  // op                   name                 write  fan_out changes         policy command             result key
  {o::list,              "list",              false, false, sc::never,       "lsdef",                   ""},
  {o::show,              "show",              false, false, sc::never,       "lsdef",                   ""},
  {o::nodels,            "nodels",            false, false, sc::never,       "nodels",                  ""},
  {o::make,              "make",              true,  false, sc::always,      "mkdef",                   ""},
  {o::change,            "change",            true,  false, sc::always,      "chdef",                   ""},
  {o::remove,            "remove",            true,  false, sc::always,      "rmdef",                   ""},
  {o::site_show,         "site_show",         false, false, sc::never,       "lsdef",                   ""},
  // a new token is not audited (its creation is a login); authentication is all tokens need
  {o::token_create,      "token_create",      true,  false, sc::never,       "",                        ""},
  {o::token_revoke,      "token_revoke",      true,  false, sc::always,      "",                        ""},
  {o::token_list,        "token_list",        false, false, sc::never,       "",                        ""},
  {o::nodeshell,         "nodeshell",         false, true,  sc::always,      "xdsh",                    ""},
  {o::rename,            "rename",            true,  false, sc::always,      "chdef",                   ""},
  {o::template_list,     "template_list",     false, false, sc::never,       "lsdef",                   ""},
  {o::template_show,     "template_show",     false, false, sc::never,       "lsdef",                   ""},
  // GET /tables/{t}/nodes/ALLNODES is getTablesAllNodeAttribs, GET /tables and
  // /tables/{t}/rows are tabdump and getTablesAllRowAttribs (http/router.cpp)
  {o::table_nodes,       "table_nodes",       false, false, sc::never,       "getTablesNodesAttribs",   ""},
  {o::table_rows,        "table_rows",        false, false, sc::never,       "getAttribs",              ""},
  {o::table_set_nodes,   "table_set_nodes",   true,  false, sc::always,      "setNodesAttribs",         ""},
  {o::table_set_rows,    "table_set_rows",    true,  false, sc::always,      "setAttribs",              ""},
  {o::table_delete_rows, "table_delete_rows", true,  false, sc::always,      "delEntries",              ""},
  {o::make_networks,     "make_networks",     true,  false, sc::always,      "makenetworks",            ""},
  // reads the store, changes the DHCP server (not the store): audited as a change
  {o::make_dhcp,         "make_dhcp",         false, false, sc::always,      "makedhcp",                ""},
  // reads the store, writes the hosts file (not the store): audited as a change
  {o::make_hosts,        "make_hosts",        false, false, sc::always,      "makehosts",               ""},
  // /metrics names `metrics`, /events `lsdef` (http/router.cpp)
  {o::authorize,         "authorize",         false, false, sc::never,       "",                        ""},
  {o::nodecopy,          "nodecopy",          false, true,  sc::always,      "xdcp",                    ""},
  {o::power,             "power",             false, true,  sc::unless_stat, "rpower",                  "power"},
  {o::nextboot,          "nextboot",          false, true,  sc::unless_stat, "rsetboot",                "nextboot"},
  {o::eventlog,          "eventlog",          false, true,  sc::only_clear,  "reventlog",               "eventlog"},
  {o::beacon,            "beacon",            false, true,  sc::unless_stat, "rbeacon",                 "beacon"},
  // the readings are not audited: the action, never a BMC password, would be all they say
  {o::vitals,            "vitals",            false, true,  sc::never,       "rvitals",                 "vitals"},
  {o::inventory,         "inventory",         false, true,  sc::never,       "rinv",                    "inventory"},
  // a probe of every node, audited as the commands run on nodes are
  {o::nodestat,          "nodestat",          false, true,  sc::always,      "nodestat",                ""},
  // jobs: authentication is all policy asks; the jobs actor shows a user that user's own
  {o::job_list,          "job_list",          false, false, sc::never,       "",                        ""},
  {o::job_show,          "job_show",          false, false, sc::never,       "",                        ""},
  {o::job_cancel,        "job_cancel",        false, false, sc::never,       "",                        ""},
  // makedns: reads the store, writes named's files and sends updates (audited as writes)
  {o::dns_apply,         "dns_apply",         false, false, sc::always,      "makedns",                 ""},
  {o::dns_delete,        "dns_delete",        false, false, sc::always,      "makedns",                 ""},
  {o::dns_service,       "dns_service",       false, false, sc::always,      "makedns",                 ""},
  // provisioning: `nodeset nr stat` reads, every other nodeset writes the boot state
  {o::bootstate,         "bootstate",         false, false, sc::never,       "nodeset",                 "bootstate"},
  {o::nodeset,           "nodeset",           true,  false, sc::always,      "nodeset",                 "bootstate"},
  // rinstall: nodeset (through the store's writer), then rsetboot and rpower per node
  {o::provision,         "provision",         false, true,  sc::always,      "rinstall",                "provision"},
  // consoles: the log is read as rcons reads it; makeconservercf changes what is held
  {o::console_log,       "console_log",       false, false, sc::never,       "rcons",                   ""},
  {o::conserver,         "conserver",         false, false, sc::always,      "makeconservercf",         ""},
  // the web console's node table: a read of node definitions, as GET /nodes
  {o::node_table,        "node_table",        false, false, sc::never,       "lsdef",                   ""},
}};
// clang-format on

constexpr bool rows_in_enum_order() {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (static_cast<size_t>(rows[i].op) != i) {
      return false;
    }
  }
  return true;
}

static_assert(rows_in_enum_order(), "api::operation's rows must follow the enum's order");

} // namespace

const operation_traits& traits(operation op) {
  assert(static_cast<size_t>(op) < rows.size()); // count_ is no operation
  return rows[static_cast<size_t>(op)];
}

const operation_traits* find_operation(std::string_view name) {
  for (const auto& r : rows) {
    if (r.name == name) {
      return &r;
    }
  }
  return nullptr;
}

bool is_write(operation op) {
  return traits(op).write;
}

bool is_fan_out(operation op) {
  return traits(op).fan_out;
}

bool changes_state(const api_call& call) {
  switch (traits(call.op).changes) {
    case state_change::never: return false;
    case state_change::always: return true;
    case state_change::unless_stat: return call.command != "stat";
    case state_change::only_clear: return call.command == "clear";
  }
  return true;
}

} // namespace cws::api
