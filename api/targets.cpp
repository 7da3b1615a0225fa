#include "api/targets.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "store/error.hpp"

namespace cws::api {

using store::object_type;

bool reads_secrets(const authorization& auth) {
  return !auth.stamped || auth.user == "root";
}

store::noderange_options caller_options(store::noderange_options opts, const authorization& auth) {
  opts.hide_secrets = !reads_secrets(auth);
  return opts;
}

store::noderange_options noderange_options_for(const store::cluster_view& view,
                                               store::noderange_options opts) {
  if (auto site = view.txn().get(object_type::site, "clustersite")) {
    opts.exclude = std::string{site->find("excludenodes").value_or("")};
  }
  return opts;
}

std::vector<std::string> target_names(const store::cluster_view& view, store::object_type t,
                                      std::string_view spec, const store::noderange_options& opts) {
  if (t == object_type::site) {
    return {"clustersite"};
  }
  if (t != object_type::node) {
    return base::split_list(spec);
  }
  auto o = noderange_options_for(view, opts);
  o.verify = false;
  return store::expand_noderange(spec, view, o).nodes;
}

api_result verified_nodes(const store::cluster_view& view, const api_call& call,
                          const authorization& auth, const store::noderange_options& opts,
                          std::vector<std::string>& out) {
  store::noderange_result found;
  if (auth.nodes) {
    // expanded by policy already: only verified here, in this transaction
    for (const auto& n : *auth.nodes) {
      (view.exists(object_type::node, n) ? found.nodes : found.missing).push_back(n);
    }
  } else {
    found = store::expand_noderange(call.target, view, noderange_options_for(view, opts));
  }
  if (!found.missing.empty()) {
    return api_result::failure({store::missing_nodes_message(found.missing)});
  }
  out = std::move(found.nodes);
  return {};
}

std::optional<uint16_t> parse_port(std::string_view text) {
  unsigned long long n = 0;
  if (!base::parse_unsigned(text, n) || n == 0 || n > 65535) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(n);
}

api_result node_port(const store::cluster_view& view, const std::string& node, const char* attr,
                     uint16_t& out) {
  auto text = view.attribute(node, attr);
  out = 0;
  if (text.empty()) {
    return {};
  }
  auto port = parse_port(text);
  if (!port) {
    return api_result::failure({"Node " + node + ": " + attr + " '" + text
                                + "' is not a port (a whole number from 1 to 65535); "
                                  "nothing was run."});
  }
  out = *port;
  return {};
}

api_result node_targets(const store::cluster_view& view, const api_call& call,
                        const authorization& auth, const store::noderange_options& opts,
                        std::vector<node_target>& out) {
  std::vector<std::string> nodes;
  if (auto r = verified_nodes(view, call, auth, opts, nodes); !r.ok()) {
    return r;
  }
  out.reserve(nodes.size());
  for (auto& n : nodes) {
    node_target t;
    if (auto r = node_port(view, n, "sshport", t.port); !r.ok()) {
      out.clear();
      return r;
    }
    t.address = view.attribute(n, "ip");
    t.name = std::move(n);
    out.push_back(std::move(t));
  }
  return {};
}

std::vector<std::string> service_node_values(const store::cluster_view& view,
                                             const std::vector<std::string>& nodes) {
  std::vector<std::string> out;
  out.reserve(nodes.size());
  for (const auto& n : nodes) {
    out.push_back(view.attribute(n, "servicenode"));
  }
  return out;
}

std::vector<std::string> head_names(const store::cluster_view& view, std::vector<std::string> own) {
  if (auto site = view.txn().get(object_type::site, "clustersite")) {
    if (auto master = site->find("master"); master && !master->empty()) {
      own.emplace_back(*master);
    }
  }
  return own;
}

size_t effective_fanout(size_t requested, size_t configured, size_t most) {
  return std::max<size_t>(1, std::min(requested > 0 ? requested : configured, most));
}

api_result read_site_number(const store::read_txn& txn, const site_number& n, long& out) {
  out = n.fallback;
  auto site = txn.get(object_type::site, "clustersite");
  if (!site) {
    return {};
  }
  auto v = site->find(n.key);
  if (!v || v->empty()) {
    return {};
  }
  unsigned long long parsed = 0;
  if (!base::parse_unsigned(*v, parsed) || parsed < static_cast<unsigned long long>(n.lo)
      || parsed > static_cast<unsigned long long>(n.hi)) {
    return api_result::failure(
      {"site." + std::string{n.key} + " is '" + std::string{*v}
       + "': it must be a whole number from " + std::to_string(n.lo) + " to " + std::to_string(n.hi)
       + " (unset: " + std::to_string(n.fallback) + "); nothing was run."});
  }
  out = static_cast<long>(parsed);
  return {};
}

} // namespace cws::api
