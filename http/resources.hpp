#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/schema.hpp"

namespace cws::http {

/// What a resource path names; each kind is turned into calls in one place (router.cpp).
enum class resource_kind {
  collection,     ///< /nodes, /groups, ...: the names
  object,         ///< /nodes/{noderange}, /groups/{name}, ...
  attrs,          ///< /{collection}/{name}/attrs/{a,b}
  nodels,         ///< /nodes/{noderange}/nodels
  nodeshell,      ///< /nodes/{noderange}/nodeshell
  nodecopy,       ///< /nodes/{noderange}/nodecopy
  nodestat,       ///< /nodes/{noderange}/nodestat
  rename,         ///< /nodes/{node}/rename
  power,          ///< /nodes/{noderange}/power (rpower)
  nextboot,       ///< /nodes/{noderange}/nextboot (rsetboot)
  eventlog,       ///< /nodes/{noderange}/eventlog (reventlog)
  beacon,         ///< /nodes/{noderange}/beacon (rbeacon)
  vitals,         ///< /nodes/{noderange}/vitals[/{a;b}] (rvitals)
  inventory,      ///< /nodes/{noderange}/inventory[/{a;b}] (rinv)
  host,           ///< /nodes/{noderange}/host, /services/host (makehosts)
  site,           ///< /globalconf
  site_attrs,     ///< /globalconf/attrs/{a,b}
  tokens,         ///< /tokens
  token,          ///< /tokens/{id}
  templates,      ///< /templates/node: shipped templates (body `options`: `--template NAMES`)
  template_names, ///< /templates/node/all: their names
  table_nodes,    ///< /tables/{t,...}/nodes/{noderange}[/{cols}]
  table_rows,     ///< /tables/{t,...}/rows[/{keys}[/{cols}]]
  metrics,        ///< /metrics: the Prometheus text exposition (http/metrics_page.hpp)
  openapi,        ///< /openapi.yaml: the API's description (docs/openapi.yaml)
  events,         ///< /events: the change feed as Server-Sent Events (http/event_stream.hpp)
  jobs,           ///< /jobs: the caller's jobs (root: all)
  job,            ///< /jobs/{id}: one job (stream=1: its nodes as NDJSON); DELETE cancels
};

/// Who answers a resource row: a new kind of answer is a column value, not a branch.
enum class handler_kind {
  call,    ///< a call through policy to the actors, rendered by http/render (most rows)
  local,   ///< answered by the service itself, not the store (openapi, metrics; static files)
  upgrade, ///< a GET that may also switch protocols (WebSocket, http/ws_session.hpp): events
};

/// A path matched against the resource table.
struct resource {
  resource_kind kind = resource_kind::collection;
  store::object_type type = store::object_type::node;
  /// The `{name}` segment: a noderange, an object name, a token id.
  std::string target;
  /// The `{attrs}` (or `{cols}`) segment, split (`,` or `;`).
  std::vector<std::string> attrs;
  /// The `{tables}` segment, split.
  std::vector<std::string> tables;
  /// The methods the resource has, e.g. "GET PUT POST DELETE".
  std::string_view methods;
  /// Its row of the resource table (an index of `routes()`).
  size_t route = 0;
  handler_kind handler = handler_kind::call;

  bool allows(std::string_view method) const;
};

/// One row of the resource table as documented: its path under the base path, with `{name}`,
/// `{attrs}` and `{tables}` for the variable segments, and its methods.
struct route_info {
  std::string path; ///< `/nodes/{name}/attrs/{attrs}`
  std::string_view methods;
};

/// Every row of the resource table, in its order (`resource::route` indexes it); the base path
/// itself (`GET /clusterws`) is not a row.
const std::vector<route_info>& routes();

/// Route numbers past the table's rows, for requests no row matched (metrics labels): the
/// base path itself, and anything else.
size_t base_route();
size_t no_route();

/// The top-level collections, as `GET /clusterws` lists them.
const std::vector<std::string>& collections();

/// Matches the segments after the base path (`{"nodes", "n1", "nodels"}`) against the
/// resource table; nullopt when nothing matches.
std::optional<resource> match_resource(const std::vector<std::string>& segments);

} // namespace cws::http
