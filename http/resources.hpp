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
  bootstate,      ///< /nodes/{noderange}/bootstate (nodeset)
  provision,      ///< /nodes/{noderange}/provision (rinstall)
  eventlog,       ///< /nodes/{noderange}/eventlog (reventlog)
  beacon,         ///< /nodes/{noderange}/beacon (rbeacon)
  vitals,         ///< /nodes/{noderange}/vitals[/{a;b}] (rvitals)
  inventory,      ///< /nodes/{noderange}/inventory[/{a;b}] (rinv)
  dhcp,           ///< /nodes/{noderange}/dhcp, /services/dhcp (makedhcp)
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
  console,        ///< /nodes/{node}/console: the console over WebSocket (http/ws_console.hpp)
  jobs,           ///< /jobs: the caller's jobs (root: all)
  job,            ///< /jobs/{id}: one job (stream=1: its nodes as NDJSON); DELETE cancels
  dns,            ///< /nodes/{noderange}/dns: makedns (POST), makedns -d (DELETE)
  dns_service,    ///< /services/dns: makedns -n (POST)
  console_log,    ///< /nodes/{node}/console/log: the console log's tail (text)
  conserver,      ///< /nodes/{noderange}/conserver, /services/conserver (makeconservercf)
  session,        ///< /session: the web console's login, its session and logout (docs/web.md)
  nodetable,      ///< /nodetable: a sorted page of nodes for the web console (api/node_table)
  node_columns,   ///< /nodetable/attributes: the attributes a column may show
};

struct routed;

/// How a `local` row is answered: fills the routed request, before its body and credentials
/// are read. A public answer (it holds no data) is set as `routed::answer`, given at once;
/// otherwise the handler names the output the session writes and the call that asks policy
/// whether the caller may have it (credentials are collected after). A new local resource is
/// a row with its handler (resources.cpp), not a branch in the router.
using local_handler = void (*)(routed& r);

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
  /// A `local` row's handler.
  local_handler local = nullptr;

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
