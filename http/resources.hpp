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
  rename,         ///< /nodes/{node}/rename
  site,           ///< /globalconf
  site_attrs,     ///< /globalconf/attrs/{a,b}
  tokens,         ///< /tokens
  token,          ///< /tokens/{id}
  templates,      ///< /templates/node: shipped templates (body `options`: `--template NAMES`)
  template_names, ///< /templates/node/all: their names
  table_nodes,    ///< /tables/{t,...}/nodes/{noderange}[/{cols}]
  table_rows,     ///< /tables/{t,...}/rows[/{keys}[/{cols}]]
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

  bool allows(std::string_view method) const;
};

/// The top-level collections, as `GET /clusterws` lists them.
const std::vector<std::string>& collections();

/// Matches the segments after the base path (`{"nodes", "n1", "nodels"}`) against the
/// resource table; nullopt when nothing matches.
std::optional<resource> match_resource(const std::vector<std::string>& segments);

} // namespace cws::http
