#include "api/node_table.hpp"

#include <algorithm>
#include <numeric>

#include "api/targets.hpp"
#include "store/definitions.hpp"
#include "store/schema.hpp"
#include "store/tables.hpp"

namespace cws::api {

namespace {

using store::object_type;

/// The table's nodes in name order: the noderange's (checked as GET /nodes/{noderange}
/// checks it), or every node; hidden ones left out. Empty with `errors` set on an error.
std::vector<std::string> table_nodes(const store::cluster_view& view, const api_call& call,
                                     const authorization& auth,
                                     const store::noderange_options& opts,
                                     std::vector<std::string>& errors) {
  std::vector<std::string> names;
  if (auth.nodes) {
    names = *auth.nodes; // policy expanded the noderange already
  } else if (call.target.empty()) {
    names = view.nodes();
  } else {
    names = target_names(view, object_type::node, call.target, opts);
  }
  if (auth.nodes || !call.target.empty()) {
    errors = store::listing_errors(view, object_type::node, names, nullptr);
    if (!errors.empty()) {
      return {};
    }
  }
  names.erase(std::remove_if(names.begin(), names.end(),
                             [&](const std::string& n) { return view.hidden(n); }),
              names.end());
  return names;
}

} // namespace

std::vector<std::string> node_table_attributes() {
  std::vector<std::string> out;
  for (auto a : store::node_attributes()) {
    if (a != "node") {
      out.emplace_back(a);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string node_table_error(const std::vector<std::string>& attrs, const std::string& sort) {
  for (const auto& a : attrs) {
    if (a != "node" && !store::is_valid_attribute(object_type::node, a)) {
      return store::invalid_attribute_message(a, object_type::node);
    }
  }
  if (sort != "node" && !store::is_valid_attribute(object_type::node, sort)) {
    return "sort must be 'node' or a node attribute: "
           + store::invalid_attribute_message(sort, object_type::node);
  }
  return {};
}

api_result read_node_table(const store::cluster_view& view, const api_call& call,
                           const authorization& auth, const store::noderange_options& opts) {
  std::vector<std::string> errors;
  auto names = table_nodes(view, call, auth, opts, errors);
  if (!errors.empty()) {
    return api_result::failure(std::move(errors)); // as GET /nodes/{noderange}
  }
  const auto& req = call.table;
  bool hide = !reads_secrets(auth);
  // the page's positions in `names`, in table order
  std::vector<size_t> order(names.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (req.sort != "node" && !(hide && store::is_masked_attribute(req.sort))) {
    // only the sort attribute is read for every node; ties keep name order
    std::vector<std::string> keys;
    keys.reserve(names.size());
    for (const auto& n : names) {
      keys.push_back(view.attribute(n, req.sort));
    }
    bool down = req.descending;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return down ? keys[b] < keys[a] : keys[a] < keys[b];
    });
  } else if (req.descending) {
    std::reverse(order.begin(), order.end());
  }
  api_result r;
  r.total = names.size();
  r.offset = req.offset;
  size_t end = std::min(names.size(), req.offset + std::min(req.limit, names.size()));
  for (size_t i = std::min(req.offset, end); i < end; ++i) {
    const auto& name = names[order[i]];
    store::attr_map row;
    if (!call.attrs.empty()) {
      auto shown = view.display(object_type::node, name).value_or(store::attr_map{});
      if (hide) {
        store::hide_bmc_passwords(shown);
      }
      for (const auto& a : call.attrs) {
        auto it = shown.find(a);
        row[a] = it == shown.end() ? std::string{} : it->second;
      }
    }
    r.objects.emplace_back(name, row);
  }
  return r;
}

} // namespace cws::api
