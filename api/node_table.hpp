#pragma once

// GET /clusterws/nodetable: one page of the node table the web console shows (docs/web.md
// "The node table"). clusterws's own resource, not xCAT's.

#include <cstddef>
#include <string>
#include <vector>

#include "api/call.hpp"
#include "api/result.hpp"
#include "store/cluster_view.hpp"
#include "store/noderange.hpp"

namespace cws::api {

/// One page of nodes from one read transaction: the call's noderange (every node when it is
/// empty) without hidden nodes, sorted by `call.table.sort` (a node attribute, or "node":
/// the names in the order GET /nodes lists them), then `offset` and `limit`. Only the sort
/// attribute is read for every node; the other attributes only for the page's rows. The
/// rows go to `objects` in order (each with every attribute of `call.attrs`, "" when unset),
/// the count to `total`. A noderange error as GET /nodes/{noderange} words it.
api_result read_node_table(const store::cluster_view& view, const api_call& call,
                           const authorization& auth, const store::noderange_options& opts);

/// The refusal of bad table parameters (`attrs`, `sort`), or "" when they are good.
std::string node_table_error(const std::vector<std::string>& attrs, const std::string& sort);

/// The attributes a column may show: xCAT's node attributes but `node` (the row's name).
std::vector<std::string> node_table_attributes();

} // namespace cws::api
