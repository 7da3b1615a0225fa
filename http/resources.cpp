#include "http/resources.hpp"

#include <algorithm>
#include <iterator>

#include "api/node_table.hpp"
#include "base/text.hpp"
#include "http/router.hpp"

namespace cws::http {

namespace {

using store::object_type;

/// GET /openapi.yaml: public, as GET /clusterws: it describes the service, it holds no data.
void answer_openapi(routed& r) {
  r.answer.emplace();
  r.out = output::openapi;
  r.cacheable = true;
}

/// GET /metrics: policy decides who may read it (command `metrics`); the session writes the
/// page (http/metrics_page).
void answer_metrics(routed& r) {
  r.call->op = api::operation::authorize;
  r.call->policy_command = "metrics";
  r.out = output::metrics;
}

/// GET /nodetable/attributes: public, as GET /openapi.yaml: the schema's node attribute names
/// (what the web console's column chooser offers), no data.
void answer_nodetable_attributes(routed& r) {
  r.answer.emplace().names = api::node_table_attributes();
  r.out = output::names;
  r.cacheable = true;
}

/// One row of the resource table: a path pattern under a collection and its methods.
/// `{name}` and `{attrs}` match one non-empty segment.
struct route_row {
  const char* collection;
  object_type type;
  const char* pattern;
  resource_kind kind;
  const char* methods;
  handler_kind handler = handler_kind::call;
  local_handler local = nullptr;
};

// xcatws.cgi's resources (xcat-compat.md §1). POST on a group is refused as in xCAT (groups
// are made by naming them in a node's `groups`); `/globalconf` has no object of its own.
constexpr route_row table[] = {
  {"nodes", object_type::node, "", resource_kind::collection, "GET"},
  {"nodes", object_type::node, "{name}", resource_kind::object, "GET PUT POST DELETE"},
  {"nodes", object_type::node, "{name}/attrs/{attrs}", resource_kind::attrs, "GET"},
  {"nodes", object_type::node, "{name}/nodels", resource_kind::nodels, "GET"},
  {"nodes", object_type::node, "{name}/nodeshell", resource_kind::nodeshell, "POST"},
  {"nodes", object_type::node, "{name}/nodecopy", resource_kind::nodecopy, "POST"},
  {"nodes", object_type::node, "{name}/nodestat", resource_kind::nodestat, "GET"},
  {"nodes", object_type::node, "{name}/rename", resource_kind::rename, "PUT"},
  {"nodes", object_type::node, "{name}/power", resource_kind::power, "GET PUT"},
  {"nodes", object_type::node, "{name}/nextboot", resource_kind::nextboot, "GET PUT"},
  {"nodes", object_type::node, "{name}/bootstate", resource_kind::bootstate, "GET PUT"},
  {"nodes", object_type::node, "{name}/provision", resource_kind::provision, "PUT"},
  {"nodes", object_type::node, "{name}/eventlog", resource_kind::eventlog, "GET DELETE"},
  {"nodes", object_type::node, "{name}/beacon", resource_kind::beacon, "GET PUT"},
  {"nodes", object_type::node, "{name}/vitals", resource_kind::vitals, "GET"},
  {"nodes", object_type::node, "{name}/vitals/{attrs}", resource_kind::vitals, "GET"},
  {"nodes", object_type::node, "{name}/inventory", resource_kind::inventory, "GET"},
  {"nodes", object_type::node, "{name}/inventory/{attrs}", resource_kind::inventory, "GET"},
  {"nodes", object_type::node, "{name}/dns", resource_kind::dns, "POST DELETE"},
  {"nodes", object_type::node, "{name}/dhcp", resource_kind::dhcp, "POST DELETE"},
  {"services", object_type::site, "dhcp", resource_kind::dhcp, "POST"},
  {"nodes", object_type::node, "{name}/host", resource_kind::host, "POST"},
  {"services", object_type::site, "host", resource_kind::host, "POST"},
  {"groups", object_type::group, "", resource_kind::collection, "GET"},
  {"groups", object_type::group, "{name}", resource_kind::object, "GET PUT"},
  {"groups", object_type::group, "{name}/attrs/{attrs}", resource_kind::attrs, "GET"},
  {"networks", object_type::network, "", resource_kind::collection, "GET POST"},
  {"networks", object_type::network, "{name}", resource_kind::object, "GET PUT POST DELETE"},
  {"networks", object_type::network, "{name}/attrs/{attrs}", resource_kind::attrs, "GET"},
  {"osimages", object_type::osimage, "", resource_kind::collection, "GET"},
  {"osimages", object_type::osimage, "{name}", resource_kind::object, "GET PUT POST DELETE"},
  {"osimages", object_type::osimage, "{name}/attrs/{attrs}", resource_kind::attrs, "GET"},
  {"policy", object_type::policy, "", resource_kind::collection, "GET"},
  {"policy", object_type::policy, "{name}", resource_kind::object, "GET PUT POST DELETE"},
  {"policy", object_type::policy, "{name}/attrs/{attrs}", resource_kind::attrs, "GET"},
  {"globalconf", object_type::site, "", resource_kind::site, "GET"},
  {"globalconf", object_type::site, "attrs/{attrs}", resource_kind::site_attrs, "GET PUT DELETE"},
  {"templates", object_type::node, "node", resource_kind::templates, "GET"},
  {"templates", object_type::node, "node/all", resource_kind::template_names, "GET"},
  {"services", object_type::site, "dns", resource_kind::dns_service, "POST"},
  {"tokens", object_type::token, "", resource_kind::tokens, "GET POST"},
  {"tokens", object_type::token, "{name}", resource_kind::token, "POST DELETE"},
  {"tables", object_type::site, "", resource_kind::table_rows, "GET"},
  {"tables", object_type::node, "{tables}/nodes/{name}", resource_kind::table_nodes, "GET PUT"},
  {"tables", object_type::node, "{tables}/nodes/{name}/{attrs}", resource_kind::table_nodes, "GET"},
  {"tables", object_type::site, "{tables}/rows", resource_kind::table_rows, "GET"},
  {"tables", object_type::site, "{tables}/rows/{name}", resource_kind::table_rows,
   "GET PUT DELETE"},
  {"tables", object_type::site, "{tables}/rows/{name}/{attrs}", resource_kind::table_rows, "GET"},
  // clusterws's own: not xCAT resources, nor listed by GET /clusterws
  {"metrics", object_type::site, "", resource_kind::metrics, "GET", handler_kind::local,
   answer_metrics},
  {"openapi.yaml", object_type::site, "", resource_kind::openapi, "GET", handler_kind::local,
   answer_openapi},
  {"events", object_type::node, "", resource_kind::events, "GET", handler_kind::upgrade},
  {"jobs", object_type::site, "", resource_kind::jobs, "GET"},
  {"nodes", object_type::node, "{name}/console/log", resource_kind::console_log, "GET"},
  {"nodes", object_type::node, "{name}/console", resource_kind::console, "GET",
   handler_kind::upgrade},
  {"nodes", object_type::node, "{name}/conserver", resource_kind::conserver, "POST DELETE"},
  {"services", object_type::site, "conserver", resource_kind::conserver, "POST"},
  {"jobs", object_type::site, "{name}", resource_kind::job, "GET DELETE"},
  // the web console's session (docs/web.md): a token in a cookie, with a CSRF token
  {"session", object_type::token, "", resource_kind::session, "GET POST DELETE"},
  {"nodetable", object_type::node, "", resource_kind::nodetable, "GET"},
  {"nodetable", object_type::site, "attributes", resource_kind::node_columns, "GET",
   handler_kind::local, answer_nodetable_attributes},
};

/// Matches `segments` (after the collection) against `pattern`, filling `out`. A segment
/// with a '/' (sent as `%2F`) matches only the `{name}` of a node row, where it is a noderange
/// (`/regex`); anywhere else it names nothing.
bool matches(std::string_view pattern, const std::vector<std::string>& segments, bool noderange,
             resource& out) {
  size_t i = 1;
  while (!pattern.empty()) {
    auto slash = pattern.find('/');
    auto part = pattern.substr(0, slash);
    pattern = slash == std::string_view::npos ? std::string_view{} : pattern.substr(slash + 1);
    if (i >= segments.size()) {
      return false;
    }
    const auto& seg = segments[i++];
    if (seg.find('/') != std::string::npos && !(noderange && part == "{name}")) {
      return false;
    }
    if (part == "{name}" || part == "{attrs}" || part == "{tables}") {
      if (seg.empty()) {
        return false;
      }
      if (part == "{name}") {
        out.target = seg;
      } else if (part == "{tables}") {
        out.tables = base::split_list(seg);
      } else {
        std::string list = seg;
        std::replace(list.begin(), list.end(), ';', ',');
        out.attrs = base::split_list(list);
      }
    } else if (seg != part) {
      return false;
    }
  }
  return i == segments.size();
}

} // namespace

bool resource::allows(std::string_view method) const {
  std::string_view rest = methods;
  while (!rest.empty()) {
    auto space = rest.find(' ');
    if (rest.substr(0, space) == method) {
      return true;
    }
    rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
  }
  return false;
}

const std::vector<route_info>& routes() {
  static const std::vector<route_info> all = [] {
    std::vector<route_info> out;
    for (const auto& row : table) {
      std::string path = std::string{"/"} + row.collection;
      if (*row.pattern != '\0') {
        path += std::string{"/"} + row.pattern;
      }
      out.push_back({std::move(path), row.methods});
    }
    return out;
  }();
  return all;
}

size_t base_route() {
  return routes().size();
}

size_t no_route() {
  return routes().size() + 1;
}

const std::vector<std::string>& collections() {
  static const std::vector<std::string> names{"globalconf", "groups",    "networks",
                                              "nodes",      "osimages",  "policy",
                                              "tables",     "templates", "tokens"};
  return names;
}

std::optional<resource> match_resource(const std::vector<std::string>& segments) {
  if (segments.empty()) {
    return std::nullopt;
  }
  for (size_t i = 0; i < std::size(table); ++i) {
    const auto& row = table[i];
    resource r;
    if (segments[0] == row.collection
        && matches(row.pattern, segments, row.type == object_type::node, r)) {
      r.kind = row.kind;
      r.type = row.type;
      r.methods = row.methods;
      r.route = i;
      r.handler = row.handler;
      r.local = row.local;
      return r;
    }
  }
  return std::nullopt;
}

} // namespace cws::http
