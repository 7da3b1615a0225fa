#include "api/operations.hpp"

#include <algorithm>
#include <ctime>

#include "api/makenetworks.hpp"
#include "api/node_table.hpp"
#include "api/nodeset.hpp"
#include "api/object_pages.hpp"
#include "api/rinstall.hpp"
#include "api/tables.hpp"
#include "base/text.hpp"
#include "store/credentials.hpp"
#include "store/error.hpp"
#include "store/tables.hpp"
#include "store/templates.hpp"
#include "store/tokens.hpp"

namespace cws::api {

namespace {

using store::object_type;

/// `Y-M-D h:m:s` in local time without zero padding, as xCAT's time2string.
std::string expire_text(std::time_t t) {
  std::tm tm{};
  localtime_r(&t, &tm);
  return std::to_string(tm.tm_year + 1900) + "-" + std::to_string(tm.tm_mon + 1) + "-"
         + std::to_string(tm.tm_mday) + " " + std::to_string(tm.tm_hour) + ":"
         + std::to_string(tm.tm_min) + ":" + std::to_string(tm.tm_sec);
}

/// `t` as ISO 8601 in UTC (`2026-11-27T21:00:00Z`).
std::string utc_text(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

api_result create_token(store::write_txn& t, const api_call& call, const authorization& auth) {
  auto parent = call.creds.token.empty() ? std::string{} : store::sha256_hex(call.creds.token);
  auto [id, rec] = store::create_token(t, auth.user, parent, std::time(nullptr), call.token_life_s);
  api_result r;
  r.created = true;
  r.token_id = std::move(id);
  if (call.token_life_s > 0) {
    r.token_expire = utc_text(rec.expires); // a web console session: ISO 8601
  } else {
    r.token_expire = rec.expires == 0 ? "never" : expire_text(rec.expires);
  }
  return r;
}

void reject(std::string message) {
  throw store::rejected{{{}, {}, {std::move(message)}}};
}

api_result revoke_token(store::write_txn& t, const api_call& call, const authorization& auth) {
  auto key = store::sha256_hex(call.target);
  auto rec = t.get(object_type::token, key);
  if (!rec) {
    reject("Could not find an object named '" + call.target + "' of type 'token'.");
  }
  if (auth.user != "root" && rec->find("username").value_or("") != auth.user) {
    reject("Only root or the owner can revoke a token.");
  }
  t.erase(object_type::token, key);
  return {};
}

/// The caller's own tokens: handle, creation and expiry (never an id).
api_result list_own_tokens(const store::read_txn& t, const api_call& call,
                           const authorization& auth) {
  api_result r;
  if (!call.target.empty()) {
    // GET /session: the caller's session (its SHA-256), its expiry as ISO 8601
    auto rec = store::find_token(t, call.target, std::time(nullptr));
    if (rec.user.empty() || rec.user != auth.user) {
      return api_result::failure(errc::unauthorized, "Authentication failure");
    }
    r.token_expire = rec.expires == 0 ? "never" : utc_text(rec.expires);
    return r;
  }
  for (const auto& tok : store::list_tokens(t, auth.user)) {
    store::attr_map attrs{{"created", expire_text(tok.created)},
                          {"expire", tok.expires == 0 ? "never" : expire_text(tok.expires)}};
    r.objects.emplace_back(tok.handle(), attrs);
  }
  return r;
}

/// GET /nodes/{nr}/bootstate (nodeset stat): each node's state as its answer.
api_result read_boot_states(const store::cluster_view& view, const api_call& call,
                            const authorization& auth, const store::noderange_options& opts) {
  std::vector<std::string> nodes;
  auto found = verified_nodes(view, call, auth, opts, nodes);
  if (!found.ok()) {
    return found;
  }
  api_result r;
  if (call.dry_run) {
    // PUT /bootstate?dryrun=1: what nodeset would write, as lines; a read, nothing written
    std::string error;
    auto action = parse_nodeset_action(call.command, error);
    if (!action) {
      return api_result::failure({error});
    }
    try {
      r.names = boot_state_dry_run(view, nodes, *action).info;
    } catch (const store::rejected& e) {
      return api_result::failure(e.result.errors);
    }
    return r;
  }
  r.nodes.reserve(nodes.size());
  for (auto& n : nodes) {
    base::node_result one;
    one.rc = 0;
    one.out = boot_state_of(view, n);
    one.name = std::move(n);
    r.nodes.push_back(std::move(one));
  }
  return r;
}

/// PUT /nodes/{nr}/bootstate (nodeset nr <state>): one transaction for every node.
api_result write_boot_states(store::write_txn& t, const api_call& call, const authorization& auth,
                             const store::noderange_options& opts) {
  std::string error;
  auto action = parse_nodeset_action(call.command, error);
  if (!action) {
    return api_result::failure({error});
  }
  std::vector<std::string> nodes;
  {
    store::cluster_view view{t};
    auto found = verified_nodes(view, call, auth, opts, nodes);
    if (!found.ok()) {
      return found;
    }
  }
  api_result r;
  if (call.detail) {
    // rinstall's step: each node on its own, its own result (api/rinstall.hpp)
    r.nodes = write_boot_states_each(t, nodes, *action);
    return r;
  }
  auto out = set_boot_state(t, nodes, *action);
  r.nodes.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    base::node_result one;
    one.rc = 0;
    one.name = nodes[i];
    auto& line = out.info[i];
    one.out = line.substr(std::min(line.size(), nodes[i].size() + 2));
    r.nodes.push_back(std::move(one));
  }
  return r;
}

api_result stale() {
  return api_result::failure(errc::stale, "authorization is stale");
}

/// The names a call targets: the nodes policy expanded, if it did.
std::vector<std::string> call_names(const store::cluster_view& view, const api_call& call,
                                    const authorization& auth,
                                    const store::noderange_options& opts) {
  if (auth.nodes && call.type == object_type::node) {
    return *auth.nodes;
  }
  return target_names(view, call.type, call.target, opts);
}

/// DELETE of a node range with format=detail: every node that exists is removed, in one
/// transaction, and each node gets its status.
api_result remove_nodes_detailed(store::write_txn& t, std::vector<std::string> names) {
  store::cluster_view view{t};
  std::vector<std::string> found;
  api_result r;
  r.nodes.reserve(names.size());
  for (auto& n : names) {
    bool exists = view.exists(object_type::node, n);
    if (exists) {
      found.push_back(n);
    }
    base::node_result node;
    node.name = std::move(n);
    node.rc = exists ? 0 : 1;
    node.error = exists ? "" : to_string(base::node_errc::not_found);
    node.message = exists ? "removed" : "not found";
    r.nodes.push_back(std::move(node));
  }
  if (!found.empty()) {
    r.messages = store::remove_objects(t, object_type::node, found).info;
  }
  return r;
}

/// Refuses a listing of groups by a caller who may not read masked attributes when one of
/// the groups is dynamic and tests one: its members would tell the value (N1).
void check_group_tests(const store::cluster_view& view, const std::vector<std::string>& names) {
  for (const auto& g : names) {
    for (const auto& attr : view.dynamic_tests(g)) {
      if (store::is_masked_attribute(attr)) {
        store::refuse_masked_test(attr, g);
      }
    }
  }
}

/// The enabled policy rows of `view`, sorted, their noderanges expanded with `opts` (a
/// broken noderange matches no node).
std::vector<store::policy_row> policy_rows(const store::cluster_view& view,
                                           const store::noderange_options& opts,
                                           bool& has_noderange_rows) {
  std::vector<store::policy_row> rows;
  view.txn().scan(object_type::policy, [&](std::string_view prio, store::record_view rec) {
    auto attrs = rec.to_map();
    if (store::policy_row_enabled(attrs)) {
      rows.push_back(store::make_policy_row(std::string{prio}, attrs));
    }
  });
  has_noderange_rows = false;
  for (auto& row : rows) {
    if (!row.noderange.empty() && row.noderange != "*") {
      has_noderange_rows = true;
      try {
        row.nodes = store::expand_noderange(row.noderange, view, opts).nodes;
      } catch (const store::error&) {
        row.nodes.clear();
      }
    }
  }
  store::sort_policy(rows);
  return rows;
}

/// chdef -n of a node by a caller policy decided on: its new name must be one the caller's
/// policy rows allow the command on, in the cluster as it is after the rename (N3); the
/// rows decided on the old name only.
void check_new_name(store::write_txn& t, const api_call& call, const authorization& auth,
                    const store::noderange_options& configured) {
  store::cluster_view view{t};
  bool has_noderange_rows = false;
  // the rows are the administrator's: expanded as root would (no masked-test refusal)
  auto rows = policy_rows(view, noderange_options_for(view, configured), has_noderange_rows);
  auto req = policy_request_for(call, auth.user);
  req.has_noderange = true;
  req.nodes = {call.new_name};
  req.nodes_known = true;
  if (!store::evaluate_policy(rows, req).allowed) {
    reject("Permission denied for request: policy does not allow " + call.policy_command
           + " on the new name '" + call.new_name + "'.");
  }
}

/// Loopback TCP, or the local Unix socket (client "local"): `localhost` for host rows.
bool is_loopback(const std::string& addr) {
  return addr.rfind("127.", 0) == 0 || addr == "::1" || addr.rfind("::ffff:127.", 0) == 0
         || addr == "local";
}

/// The xCAT-style argument line a policy `parameters` row is matched against.
std::string arguments(const api_call& call) {
  std::string args = "-t " + std::string{store::type_name(call.type)};
  if (!call.target.empty()) {
    args += " -o " + call.target;
  }
  if (!call.template_name.empty()) {
    args += " --template " + call.template_name;
  }
  for (const auto& c : call.changes) {
    args += " " + c.name + "=" + c.value;
  }
  return args;
}

} // namespace

store::policy_request policy_request_for(const api_call& call, const std::string& user) {
  store::policy_request req;
  req.user = user;
  req.hosts = {call.client};
  if (is_loopback(call.client)) {
    req.hosts.emplace_back("localhost");
  }
  req.command = call.policy_command;
  req.arguments = arguments(call);
  return req;
}

std::vector<std::string> expand_nodes(const store::database& db, std::string_view range,
                                      const store::noderange_options& opts) {
  auto txn = db.read();
  store::cluster_view view{txn};
  auto o = opts;
  o.allow_files = false;
  return target_names(view, object_type::node, range, o);
}

api_result run_read(const std::shared_ptr<const store::database>& db, const api_call& call,
                    const authorization& auth, const store::noderange_options& configured) {
  auto opts = caller_options(configured, auth);
  try {
    auto txn = db->read();
    if (is_stale(txn, auth)) {
      return stale();
    }
    store::cluster_view view{txn};
    api_result r;
    switch (call.op) {
      case operation::list: {
        r.names = call.type == object_type::group ? txn.group_names() : txn.names(call.type);
        if (call.type == object_type::node) {
          r.names.erase(std::remove_if(r.names.begin(), r.names.end(),
                                       [&](const std::string& n) { return view.hidden(n); }),
                        r.names.end());
        }
        if (r.names.empty()) {
          return api_result::failure(
            {"Could not get objects of type '" + std::string{store::type_name(call.type)} + "'."});
        }
        return r;
      }
      case operation::site_show: {
        auto site = view.display(object_type::site, "clustersite").value_or(store::attr_map{});
        if (call.only_attrs) {
          store::attr_map picked; // unknown site keys are just not shown
          for (const auto& k : call.attrs) {
            if (auto it = site.find(k); it != site.end()) {
              picked.insert(*it);
            }
          }
          site = std::move(picked);
        }
        r.objects.emplace_back("clustersite", site);
        return r;
      }
      case operation::show: {
        auto names = call_names(view, call, auth, opts);
        if (call.type == object_type::group && opts.hide_secrets) {
          check_group_tests(view, names);
        }
        if (call.page_objects > 0 && names.size() > call.page_objects) {
          const auto* only = call.only_attrs ? &call.attrs : nullptr;
          auto errors = store::listing_errors(view, call.type, names, only);
          if (!errors.empty()) {
            return api_result::failure(std::move(errors));
          }
          r.pages = std::make_shared<object_pages>(db, std::move(txn), call.type, std::move(names),
                                                   call.attrs, call.only_attrs);
          r.pages->hide_bmc_passwords(!reads_secrets(auth));
          return r;
        }
        r.objects.reserve(names.size());
        bool hide = !reads_secrets(auth); // BMC passwords: root's only
        auto errors
          = store::list_objects(view, call.type, names, call.only_attrs ? &call.attrs : nullptr, {},
                                [&](store::listed_object&& o) {
                                  if (hide) {
                                    store::hide_bmc_passwords(o.attrs);
                                  }
                                  r.objects.emplace_back(std::move(o.name), o.attrs);
                                });
        if (!errors.empty()) {
          return api_result::failure(std::move(errors)); // xCAT: any error, no listing
        }
        return r;
      }
      case operation::nodels: {
        auto x = store::expand_noderange(call.target, view, noderange_options_for(view, opts));
        if (!x.missing.empty()) {
          return api_result::failure({store::missing_nodes_message(x.missing)});
        }
        for (auto& n : x.nodes) {
          if (!view.hidden(n)) {
            r.names.push_back(std::move(n));
          }
        }
        return r;
      }
      case operation::template_list:
        for (const auto& t : store::shipped_templates()) {
          if (t.type == call.type) {
            r.names.push_back(t.name);
          }
        }
        return r;
      case operation::template_show: {
        auto found = store::list_templates(view, call.type, base::split_list(call.template_name));
        if (!found.errors.empty()) {
          return api_result::failure(std::move(found.errors));
        }
        for (auto& o : found.objects) {
          r.objects.emplace_back(std::move(o.name), o.attrs);
        }
        return r;
      }
      case operation::token_list: return list_own_tokens(txn, call, auth);
      case operation::bootstate: return read_boot_states(view, call, auth, opts);
      case operation::node_table: return read_node_table(view, call, auth, opts);
      case operation::table_nodes:
      case operation::table_rows: return read_tables(view, call, auth, opts);
      default: return api_result::failure({"This operation is not a read."});
    }
  } catch (const store::error& e) {
    return api_result::failure(from_store(e.code()), e.what());
  }
}

api_result run_write(store::write_txn& t, const api_call& call, const authorization& auth,
                     const store::noderange_options& configured) {
  auto opts = caller_options(configured, auth);
  if (is_stale(t, auth)) {
    return stale();
  }
  if (call.op == operation::token_create) {
    return create_token(t, call, auth);
  }
  if (call.op == operation::token_revoke) {
    return revoke_token(t, call, auth);
  }
  if (call.op == operation::rename) {
    api_result r;
    r.names = store::rename_object(t, call.type, call.target, call.new_name).info;
    if (call.type == object_type::node && auth.stamped && !call.policy_command.empty()) {
      t.check_names(); // a name clash first: the rows would read the new node as the group
      check_new_name(t, call, auth, configured);
    }
    return r;
  }
  if (call.op == operation::make_networks) {
    api_result r;
    r.created = true;
    r.messages = make_networks(t, network_objects(host_networks())).info;
    return r;
  }
  if (call.op == operation::table_set_nodes || call.op == operation::table_set_rows
      || call.op == operation::table_delete_rows) {
    return write_tables(t, call, auth, opts);
  }
  if (call.op == operation::nodeset) {
    return write_boot_states(t, call, auth, opts);
  }
  store::cluster_view view{t};
  std::vector<std::string> names;
  try {
    names = call_names(view, call, auth, opts);
  } catch (const store::error& e) {
    reject(e.what());
  }
  bool node_delete = call.op == operation::remove && call.type == object_type::node;
  if (node_delete && names.empty() && !call.target.empty()) {
    reject("No objects have been removed from the xCAT database.");
  }
  if (auto msg = store::check_change_target(call.type, call.target, names); !msg.empty()) {
    reject(std::move(msg));
  }
  if (node_delete && call.detail) {
    return remove_nodes_detailed(t, std::move(names));
  }
  store::change_request req{call.type, std::move(names),  call.changes, call.mode,
                            false,     call.template_name};
  store::outcome out;
  switch (call.op) {
    case operation::make: out = store::make_objects(t, req); break;
    case operation::change: out = store::change_objects(t, req); break;
    case operation::remove: out = store::remove_objects(t, call.type, req.names); break;
    default: reject("This operation is not a write.");
  }
  api_result r;
  r.created = call.op == operation::make;
  r.messages = std::move(out.info);
  return r;
}

api_result find_targets(const store::database& db, const api_call& call, const authorization& auth,
                        const store::noderange_options& configured, std::vector<node_target>& out) {
  auto opts = caller_options(configured, auth);
  try {
    auto txn = db.read();
    if (is_stale(txn, auth)) {
      return stale();
    }
    store::cluster_view view{txn};
    return node_targets(view, call, auth, opts, out);
  } catch (const store::error& e) {
    return api_result::failure(from_store(e.code()), e.what());
  }
}

bool is_stale(const store::read_txn& txn, const authorization& auth) {
  using counter = store::read_txn::counter;
  return auth.stamped
         && (txn.generation(counter::auth) != auth.stamp.auth_generation
             || (auth.stamp.check_membership
                 && txn.generation(counter::membership) != auth.stamp.membership_generation));
}

auth_snapshot_ptr build_snapshot(const store::database& db, const store::noderange_options& opts) {
  auto txn = db.read();
  auto snap = std::make_shared<auth_snapshot>();
  snap->auth_generation = txn.generation(store::read_txn::counter::auth);
  snap->membership_generation = txn.generation(store::read_txn::counter::membership);
  store::cluster_view view{txn};
  snap->rows = policy_rows(view, noderange_options_for(view, opts), snap->has_noderange_rows);
  txn.scan(object_type::passwd, [&](std::string_view user, store::record_view rec) {
    snap->passwords.emplace(user, rec.find("password").value_or(""));
  });
  return snap;
}

token_info find_token(const store::database& db, const std::string& hash, int64_t now) {
  auto rec = store::find_token(db.read(), hash, now);
  return {!rec.user.empty(), std::move(rec.user), rec.expires};
}

} // namespace cws::api
