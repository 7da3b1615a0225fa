#include "api/makedhcp.hpp"

#include <algorithm>
#include <map>

#include "api/operations.hpp"
#include "api/targets.hpp"
#include "store/error.hpp"

namespace cws::api {

namespace {

std::string entry_text(const std::string& ip, const std::string& mac) {
  return "ip-address = " + ip + ", hardware-address = " + mac;
}

/// -q: what the server holds for `nodes`, then a warning for each difference from what the
/// store says.
void query(const store::cluster_view& view, const std::vector<std::string>& nodes,
           const dhcp_intent& intent, const dhcp_backend& backend, makedhcp_plan& plan) {
  std::vector<dhcp_entry> held;
  if (auto e = backend.query(held); !e.empty()) {
    plan.messages.errors.push_back(e);
    plan.refused = true;
    return;
  }
  std::map<std::string, std::vector<const dhcp_entry*>> by_node;
  for (const auto& e : held) {
    by_node[e.node].push_back(&e);
  }
  dhcp_messages ignored; // the store's own problems are makedhcp's, not -q's
  auto wanted = read_reservations(view, nodes, intent, ignored);
  std::map<std::string, std::vector<const dhcp_reservation*>> store_by_node;
  for (const auto& r : wanted) {
    if (!r.deny) {
      store_by_node[r.node].push_back(&r);
    }
  }
  for (const auto& node : nodes) {
    auto& server = by_node[node];
    auto& stored = store_by_node[node];
    for (const auto* e : server) {
      if (e->ip.empty()) {
        continue; // a refused MAC (*NOIP*)
      }
      plan.lines.push_back(node + ": " + entry_text(e->ip, e->mac));
      bool known = std::any_of(stored.begin(), stored.end(),
                               [&](const auto* r) { return r->mac == e->mac && r->ip == e->ip; });
      if (!known) {
        plan.messages.warnings.push_back(node + ": the DHCP server holds "
                                         + entry_text(e->ip, e->mac)
                                         + ", which the store does not say.");
      }
    }
    for (const auto* r : stored) {
      bool held_too = std::any_of(server.begin(), server.end(), [&](const auto* e) {
        return r->mac == e->mac && r->ip == e->ip;
      });
      if (!held_too) {
        plan.messages.warnings.push_back(node + ": the store says " + entry_text(r->ip, r->mac)
                                         + ", which the DHCP server does not hold.");
      }
    }
  }
}

} // namespace

makedhcp_plan plan_makedhcp(const store::cluster_view& view, const makedhcp_request& req,
                            const dhcp_config& cfg, const dhcp_host_facts& facts,
                            const store::noderange_options& opts) {
  makedhcp_plan plan;
  std::string backend_name;
  auto intent = read_dhcp_intent(view, cfg, facts, backend_name, plan.messages);
  auto backend = make_dhcp_backend(backend_name, cfg);
  if (!backend) {
    plan.messages.errors.push_back("Unknown DHCP backend '" + backend_name
                                   + "' (site.dhcpbackend or dhcp_backend): dnsmasq or kea.");
    plan.refused = true;
    return plan;
  }
  if (req.new_config) {
    if (!plan.messages.errors.empty()) {
      plan.refused = true; // xCAT keeps the old configuration then
      return plan;
    }
    plan.change = backend->render_config(intent);
    return plan;
  }
  // the subnets' messages belong to -n; node runs only need the subnets
  plan.messages = {};
  std::vector<std::string> nodes;
  if (req.all) {
    for (const auto& n : view.nodes()) {
      if (req.remove || !view.attribute(n, "mac").empty()) {
        nodes.push_back(n);
      }
    }
  } else if (req.expanded) {
    nodes = req.nodes;
  } else {
    nodes = target_names(view, store::object_type::node, req.noderange, opts);
    std::vector<std::string> missing;
    for (const auto& n : nodes) {
      if (!view.is_node(n)) {
        missing.push_back(n);
      }
    }
    if (!missing.empty()) {
      std::string list;
      for (const auto& m : missing) {
        list += (list.empty() ? "" : ",") + m;
      }
      plan.messages.errors.push_back("Invalid nodes and/or groups in noderange: " + list);
      plan.refused = true;
      return plan;
    }
  }
  if (req.query) {
    query(view, nodes, intent, *backend, plan);
    return plan;
  }
  if (req.remove) {
    plan.change = backend->render_nodes(intent, nodes);
    return plan;
  }
  intent.reservations = read_reservations(view, nodes, intent, plan.messages);
  if (std::any_of(plan.messages.errors.begin(), plan.messages.errors.end(),
                  [](const auto& e) { return e.rfind("Duplicated IP addresses", 0) == 0; })) {
    plan.refused = true;
    return plan;
  }
  plan.change = backend->render_nodes(intent, {});
  return plan;
}

api_result run_make_dhcp(const store::database& db, const api_call& call, const authorization& auth,
                         const store::noderange_options& opts, const dhcp_config& cfg) {
  makedhcp_plan plan;
  try {
    auto txn = db.read();
    if (is_stale(txn, auth)) {
      return api_result::failure(errc::stale, "stale");
    }
    store::cluster_view view{txn};
    makedhcp_request req;
    req.new_config = call.command == "-n";
    req.remove = call.command == "-d";
    if (!call.removed_nodes.empty()) {
      // nodes no longer defined: their reservations go by name
      req.remove = true;
      req.nodes = call.removed_nodes;
      req.expanded = true;
    } else if (!req.new_config) {
      if (auto r = verified_nodes(view, call, auth, opts, req.nodes); !r.ok()) {
        return r;
      }
      req.expanded = true;
    }
    plan = plan_makedhcp(view, req, cfg, local_host_facts(), opts);
  } catch (const store::error& e) {
    return api_result::failure(from_store(e.code()), e.what());
  }
  auto& m = plan.messages;
  for (const auto& note : plan.change.notes) {
    m.warnings.push_back(note);
  }
  if (plan.refused || !m.errors.empty()) {
    // xCAT's REST answer of a command that printed errors: the errors (and the warnings)
    std::vector<std::string> lines;
    for (const auto& e : m.errors) {
      lines.push_back(e);
    }
    for (const auto& w : m.warnings) {
      lines.push_back("Warning: " + w);
    }
    if (plan.refused || call.dry_run) {
      return api_result::failure(std::move(lines));
    }
    // the nodes without errors are applied, as the tool does; the answer is still a failure
    if (auto e = apply_dhcp_change(plan.change); !e.empty()) {
      lines.push_back(e);
    }
    return api_result::failure(std::move(lines));
  }
  api_result r;
  if (call.dry_run) {
    auto text = dhcp_dry_run_text(plan.change);
    for (size_t pos = 0; pos < text.size();) {
      auto nl = text.find('\n', pos);
      r.names.push_back(text.substr(pos, nl - pos));
      pos = nl == std::string::npos ? text.size() : nl + 1;
    }
    for (const auto& w : m.warnings) {
      r.names.push_back("Warning: " + w);
    }
    return r;
  }
  if (auto e = apply_dhcp_change(plan.change); !e.empty()) {
    return api_result::failure({e});
  }
  r.created = true;
  for (const auto& w : m.warnings) {
    r.messages.push_back("Warning: " + w);
  }
  return r;
}

} // namespace cws::api
