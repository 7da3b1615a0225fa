#include "http/router.hpp"

#include <algorithm>

#include "api/node_table.hpp"
#include "api/operation_traits.hpp"
#include "base/text.hpp"
#include "http/credentials.hpp"
#include "http/query.hpp"
#include "http/request_body.hpp"
#include "http/resources.hpp"
#include "http/web_session.hpp"
#include "store/credentials.hpp"

namespace cws::http {

namespace {

using api::errc;
using api::operation;
using store::object_type;

using fields = std::vector<std::pair<std::string, std::string>>;

/// Sets the router's own answer (a refusal) and returns `r`.
routed& refuse(routed& r, errc code, std::string message) {
  r.answer = api::api_result::failure(code, std::move(message));
  return r;
}

std::vector<std::string_view> split_path(std::string_view s) {
  std::vector<std::string_view> out;
  while (true) {
    auto end = s.find('/');
    out.push_back(s.substr(0, end));
    if (end == std::string_view::npos) {
      return out;
    }
    s = s.substr(end + 1);
  }
}

/// A request path after the base path (`/clusterws` or `/xcatws`): its segments, each
/// decoded on its own, and the decoded path for messages.
struct resource_path_parts {
  std::vector<std::string> segments;
  std::string text;
};

/// Splits the raw path at its slashes first, then decodes each segment, so an encoded '/'
/// (`%2F`) stays inside its segment: a regex noderange (`/cn0[0-9]+`) can be sent, and only
/// a noderange segment accepts one (resources.cpp). nullopt when the path is not under a
/// base path, has a bad escape or a NUL, or names nothing; one trailing slash is ignored.
std::optional<resource_path_parts> resource_path(std::string_view raw_path) {
  if (raw_path.empty() || raw_path.front() != '/') {
    return std::nullopt;
  }
  resource_path_parts out;
  for (auto raw : split_path(raw_path.substr(1))) {
    std::string seg;
    if (!percent_decode(raw, seg, false) || seg.find('\0') != std::string::npos) {
      return std::nullopt;
    }
    out.segments.push_back(std::move(seg));
  }
  if (out.segments.front() != "clusterws" && out.segments.front() != "xcatws") {
    return std::nullopt;
  }
  out.segments.erase(out.segments.begin());
  if (!out.segments.empty() && out.segments.back().empty()) {
    out.segments.pop_back();
  }
  for (const auto& seg : out.segments) {
    out.text += "/" + seg;
  }
  return out;
}

/// The attributes a PUT or POST sets: the body's, then the query's other parameters, the
/// query winning (xcatws.cgi).
fields attributes(const fields& body, const query_params& query, bool with_query) {
  fields attrs;
  for (const auto& [k, v] : body) {
    if (!is_general_parameter(k)) {
      attrs.emplace_back(k, v);
    }
  }
  if (!with_query) {
    return attrs;
  }
  for (const auto& [k, v] : query.all()) {
    if (is_general_parameter(k)) {
      continue;
    }
    const std::string& key = k; // (structured bindings cannot be captured in C++17)
    auto it = std::find_if(attrs.begin(), attrs.end(), [&](auto& a) { return a.first == key; });
    if (it != attrs.end()) {
      it->second = v;
    } else {
      attrs.emplace_back(k, v);
    }
  }
  return attrs;
}

/// A fan-out call's `fanout` and `timeout` (seconds) from the query.
/// @returns false, the request refused, for a value out of range.
bool read_fanout(routed& r, const query_params& query) {
  constexpr long long max_fanout = 100000;
  constexpr long long max_timeout = 86400;
  auto fanout = query.number("fanout", max_fanout, 0);
  auto timeout = query.number("timeout", max_timeout, -1);
  if (!fanout || !timeout) {
    bool bad_fanout = !fanout;
    refuse(r, errc::bad_request,
           std::string{bad_fanout ? "fanout" : "timeout"} + " must be a whole number from 0 to "
             + std::to_string(bad_fanout ? max_fanout : max_timeout) + ".");
    return false;
  }
  r.call->fanout = static_cast<size_t>(*fanout);
  r.call->timeout_ms = *timeout < 0 ? -1 : *timeout * 1000;
  return true;
}

/// POST /nodes/{noderange}/nodeshell: fanout and timeout from the query, the command from
/// the body.
void build_nodeshell(routed& r, const query_params& query, const fields& attrs) {
  auto& call = *r.call;
  call.op = operation::nodeshell;
  r.out = output::nodeshell;
  r.stream = query.flag("stream");
  if (!read_fanout(r, query)) {
    return;
  }
  for (const auto& [k, v] : attrs) {
    if (k == "command") {
      call.command = v;
    } else if (k == "ENV" || k == "raw") {
      refuse(r, errc::bad_request,
             "'" + k
               + "' is not accepted: nodeshell runs as the authenticated user with the "
                 "service's options.");
      return;
    }
  }
  if (call.command.empty()) {
    refuse(r, errc::missing_data, "Lack of operation data.");
  }
}

/// POST /nodes/{noderange}/nodecopy: xCAT's body `{"src":[paths],"target":path}`; the
/// sources must lie under copy_root (api/copy.hpp), fanout and timeout as nodeshell's.
/// `recursive` and `preserve` ("1") are xdcp's -R and -p. Root on the local socket (root's
/// xdcp on a head with service nodes, docs/service-nodes.md) copies from anywhere, as its
/// in-process xdcp does: that caller can read every file of this host anyway.
void build_nodecopy(routed& r, const query_params& query, const fields& attrs, bool local_root) {
  auto& call = *r.call;
  call.op = operation::nodecopy;
  r.out = output::nodecopy;
  r.stream = query.flag("stream");
  if (!read_fanout(r, query)) {
    return;
  }
  auto req = std::make_shared<api::copy_request>();
  req->confined = !local_root;
  api::copy_entry e;
  auto yes = [](const std::string& v) {
    return v == "1" || v == "true" || v == "yes";
  };
  for (const auto& [k, v] : attrs) {
    if (k == "recursive") {
      req->recursive = yes(v);
    } else if (k == "preserve") {
      req->preserve = yes(v);
    } else if (k == "src") {
      for (size_t at = 0; at <= v.size();) {
        auto nl = std::min(v.find('\n', at), v.size());
        e.sources.push_back(v.substr(at, nl - at));
        at = nl + 1;
      }
    } else if (k == "target") {
      e.target = v;
    } else if (k == "ENV" || k == "raw") {
      refuse(r, errc::bad_request,
             "'" + k
               + "' is not accepted: nodecopy runs as the authenticated user with the "
                 "service's options.");
      return;
    }
  }
  if (e.sources.empty() || e.target.empty()) {
    refuse(r, errc::missing_data, "Lack of operation data.");
    return;
  }
  req->entries.push_back(std::move(e));
  call.copy = std::move(req);
}

/// /nodes/{noderange}/power, /nextboot and /beacon (xcatws.cgi): GET runs `rpower nr stat` /
/// `rsetboot nr stat` / `rbeacon nr stat`; PUT the body's `action` / `order` / `action`, 404
/// "Missed Action." without it. /eventlog: GET `reventlog nr all`, DELETE `reventlog nr clear`.
/// /vitals and /inventory: GET runs `rvitals` / `rinv` with the path's keywords.
void build_hardware(routed& r, const resource& res, const std::string& m, const query_params& query,
                    const fields& attrs) {
  auto& call = *r.call;
  if (res.kind == resource_kind::vitals || res.kind == resource_kind::inventory) {
    // GET /vitals[/{a;b}]: `rvitals nr a b` (all without keywords); /inventory: `rinv`
    bool vitals = res.kind == resource_kind::vitals;
    call.op = vitals ? operation::vitals : operation::inventory;
    r.out = output::action;
    r.stream = query.flag("stream");
    for (const auto& a : res.attrs) {
      call.command += (call.command.empty() ? "" : " ") + a;
    }
    if (call.command.empty()) {
      call.command = "all";
    }
    return;
  }
  bool power = res.kind == resource_kind::power;
  call.op = power ? operation::power : operation::nextboot;
  r.out = output::action;
  r.stream = query.flag("stream");
  if (res.kind == resource_kind::eventlog) {
    // GET: `reventlog nr all`; DELETE: `reventlog nr clear` (xcatws.cgi)
    call.op = operation::eventlog;
    call.command = m == "DELETE" ? "clear" : "all";
    return;
  }
  if (res.kind == resource_kind::beacon) {
    call.op = operation::beacon;
    power = true; // PUT's body key is `action`, as for power
  }
  if (m == "GET") {
    call.command = "stat";
    return;
  }
  const char* key = power ? "action" : "order";
  for (const auto& [k, v] : attrs) {
    if (k == key) {
      call.command = v;
    }
  }
  if (call.command.empty()) {
    refuse(r, errc::not_found, "Missed Action.");
  }
}

/// /nodes/{noderange}/bootstate (xcatws.cgi): GET runs `nodeset nr stat`; PUT `nodeset nr
/// osimage=<osimage>` for {"osimage":...}, `nodeset nr <state>` for {"state":...} (offline) or
/// {"action":...}; 404 "Missed Action." without any.
void build_bootstate(routed& r, const std::string& m, const query_params& query,
                     const fields& attrs) {
  auto& call = *r.call;
  r.out = output::action;
  if (m == "GET") {
    call.op = operation::bootstate;
    call.command = "stat";
    return;
  }
  call.op = operation::nodeset;
  for (const auto& [k, v] : attrs) {
    if (k == "osimage" && !v.empty()) {
      call.command = "osimage=" + v;
    } else if ((k == "state" || k == "action") && call.command.empty()) {
      call.command = v;
    }
  }
  if (call.command.empty()) {
    refuse(r, errc::not_found, "Missed Action.");
    return;
  }
  if (query.flag("dryrun")) {
    // nodeset --dry-run: a read of what would change (the lines), policy command nodeset
    call.op = operation::bootstate;
    call.dry_run = true;
    r.out = output::names;
  }
}

/// PUT /nodes/{noderange}/provision (xcatws.cgi): `rinstall nr osimage=<osimage>` for
/// {"osimage":...}, `rinstall nr <state>` for {"action":...} or {"state":...} (boot, shell),
/// `rinstall nr` (each node's provmethod) for neither; {"uefimode":"1"} adds `-u`.
void build_provision(routed& r, const query_params& query, const fields& attrs) {
  auto& call = *r.call;
  r.out = output::action;
  r.stream = query.flag("stream");
  call.op = operation::provision;
  bool uefi = false;
  for (const auto& [k, v] : attrs) {
    if (k == "osimage" && !v.empty()) {
      call.command = "osimage=" + v;
    } else if ((k == "action" || k == "state") && call.command.empty() && !v.empty()) {
      call.command = v;
    } else if (k == "uefimode" || k == "uefi") {
      uefi = v == "1" || v == "true" || v == "yes";
    }
  }
  if (call.command.empty()) {
    call.command = "osimage";
  }
  if (uefi) {
    call.command += " -u";
  }
}

/// /tables (xcatws.cgi's tablenodehdl and tablerowhdl): the operation and the xCAT command
/// that policy rows name for it.
void build_table(routed& r, const resource& res, const std::string& m, const fields& attrs) {
  auto& call = *r.call;
  call.tables = res.tables;
  r.out = m == "GET" ? output::tables : output::none;
  if (res.kind == resource_kind::table_nodes) {
    if (call.target == "ALLNODES") {
      call.target.clear();
    }
    if (m == "GET") {
      call.op = operation::table_nodes;
      call.policy_command
        = call.target.empty() ? "getTablesAllNodeAttribs" : "getTablesNodesAttribs";
      return;
    }
    call.op = operation::table_set_nodes;
    for (const auto& [k, v] : attrs) {
      auto table = k.substr(0, k.find('.'));
      if (std::find(res.tables.begin(), res.tables.end(), table) == res.tables.end()
          || k.find('.') == std::string::npos) {
        refuse(r, errc::bad_request, "The table " + table + " is NOT in the URI.");
        return;
      }
      call.changes.push_back({k, v});
    }
  } else if (res.tables.empty()) { // GET /tables: the table names (tabdump without a table)
    call.op = operation::table_rows;
    call.policy_command = "tabdump";
    r.out = output::names;
    return;
  } else if (m == "GET") {
    call.op = operation::table_rows;
    call.policy_command = call.target.empty() ? "getTablesAllRowAttribs" : "getAttribs";
    return;
  } else {
    call.op = m == "PUT" ? operation::table_set_rows : operation::table_delete_rows;
    if (res.tables.size() > 1) {
      refuse(r, errc::bad_request, "currently you can only specify keys for a single table.");
      return;
    }
    for (const auto& [k, v] : attrs) {
      call.changes.push_back({k, v});
    }
  }
  if (call.changes.empty() && m == "PUT") {
    refuse(r, errc::missing_data, "Lack of operation data.");
  }
}

/// xcatws.cgi's `options` (command-line options of the request): only `--template`, on the
/// resources whose command takes it (POST /nodes/{nr}: mkdef; /templates: lsdef). `-o`, `-l`
/// and `-t` are dropped, as xcatws.cgi drops them. False (with the refusal set) otherwise.
bool take_options(routed& r, const request_body& body, const resource& res, const std::string& m) {
  if (!body.has_options) {
    return true;
  }
  bool node_create
    = res.kind == resource_kind::object && res.type == object_type::node && m == "POST";
  bool templates
    = res.kind == resource_kind::templates || res.kind == resource_kind::template_names;
  if (!node_create && !templates) {
    refuse(r, errc::bad_request, "'options' is not accepted on this resource.");
    return false;
  }
  for (const auto& [k, v] : body.options) {
    if (k == "-o" || k == "-l" || k == "-t") {
      continue;
    }
    if (k != "--template") {
      refuse(r, errc::bad_request, "The option '" + k + "' is not supported.");
      return false;
    }
    if (node_create && v.empty()) {
      refuse(r, errc::failed, "no object definition template specified for mkdef --template!");
      return false;
    }
    r.call->template_name = v;
  }
  return true;
}

/// The operation, policy command and output of a definition resource and method.
void build_definition(routed& r, const resource& res, const std::string& m, fields attrs) {
  auto& call = *r.call;
  if (m == "GET") {
    switch (res.kind) {
      case resource_kind::collection: call.op = operation::list; break;
      case resource_kind::nodels: call.op = operation::nodels; break;
      case resource_kind::site:
      case resource_kind::site_attrs: call.op = operation::site_show; break;
      default: call.op = operation::show;
    }
    bool names = call.op == operation::list || call.op == operation::nodels;
    r.out = names ? output::names : output::objects;
    return;
  }
  r.out = output::none;
  if (res.kind == resource_kind::site_attrs) {
    call.op = operation::change;
    if (m == "DELETE") {
      // each named key is cleared, which deletes it
      attrs.clear();
      for (const auto& a : res.attrs) {
        attrs.emplace_back(a, "");
      }
    }
  } else if (m == "DELETE") {
    call.op = operation::remove;
    if (call.detail && res.type == object_type::node) {
      r.out = output::per_node;
    }
  } else if (res.kind == resource_kind::collection) { // POST /networks (xcatws.cgi)
    call.op = operation::make_networks;
    return;
  } else if (m == "PUT" || res.type == object_type::policy) {
    call.op = operation::change; // POST on policy is chdef in xCAT too
  } else {
    call.op = operation::make;
  }
  for (auto& [k, v] : attrs) {
    call.changes.push_back({std::move(k), std::move(v)});
  }
}

/// GET /events: the change feed, for whoever may list the objects (policy command `lsdef`).
/// With `noderange=` the stream holds the changes of those nodes only, and policy is asked
/// about them (a user whose rows allow some nodes may watch those).
routed& route_events(routed& r, const query_params& query, const std::string& last_event_id) {
  auto& call = *r.call;
  event_request req;
  if (auto types = query.find("types")) {
    if (auto bad = parse_event_types(*types, req.filter)) {
      return refuse(r, errc::bad_request, *bad);
    }
  }
  const std::string* after = !last_event_id.empty() ? &last_event_id : query.find("after");
  if (after != nullptr) {
    unsigned long long n = 0;
    if (!base::parse_unsigned(*after, n)) {
      return refuse(r, errc::bad_request,
                    "The last event id ('" + *after + "') must be a whole number.");
    }
    req.after = n;
  }
  call.policy_command = "lsdef";
  call.type = object_type::node;
  if (auto range = query.find("noderange"); range != nullptr && !range->empty()) {
    call.op = operation::nodels; // its answer: the nodes the stream is about
    call.target = *range;
    req.filter.nodes_only = true;
    req.filter.types = {object_type::node};
  } else {
    call.op = operation::authorize;
  }
  r.out = output::events;
  r.events = std::move(req);
  return r;
}

/// GET /nodes/{node}/console: a console over WebSocket, for whoever policy allows `rcons` on
/// the node. `replay=N`, `mode=ro` (watch) or `mode=rw`, `force=1` (take over the writer).
routed& route_console(routed& r, const query_params& query) {
  auto& call = *r.call;
  console_request req;
  req.node = call.target;
  if (req.node.empty() || req.node.find_first_of(",/[]*^") != std::string::npos) {
    return refuse(r, errc::bad_request,
                  "A console is one node: '" + req.node + "' is not a node name.");
  }
  if (const auto* replay = query.find("replay"); replay != nullptr && !replay->empty()) {
    unsigned long long n = 0;
    if (!base::parse_unsigned(*replay, n)) {
      return refuse(r, errc::bad_request,
                    "replay ('" + *replay + "') must be a whole number of bytes.");
    }
    req.replay = n;
  }
  if (const auto* mode = query.find("mode"); mode != nullptr && !mode->empty()) {
    if (*mode != "rw" && *mode != "ro") {
      return refuse(r, errc::bad_request, "mode ('" + *mode + "') must be rw or ro.");
    }
    req.mode = *mode;
  }
  if (query.flag("force")) {
    if (req.mode == "ro") {
      return refuse(r, errc::bad_request, "force=1 takes over the writer: not with mode=ro.");
    }
    req.mode = "force";
  }
  call.policy_command = "rcons";
  call.op = operation::authorize;
  r.out = output::console;
  r.console = std::move(req);
  return r;
}

/// The web console's session cookie as the credentials, when the request names none itself
/// (Basic, X-Auth-Token, userName/userPW win): every method but GET and HEAD must carry the
/// session's CSRF token, and a WebSocket must come from the service's own origin (docs/web.md).
/// @returns false, the request refused (403).
bool take_session(routed& r, const http_input& in, const router_limits& limits,
                  const resource& res) {
  auto& creds = r.call->creds;
  if (limits.csrf_key.empty() || !creds.user.empty() || !creds.password.empty()
      || !creds.token.empty()) {
    return true;
  }
  if (res.kind == resource_kind::session && in.method == "POST") {
    return true; // a login is made with a password, not with the session it replaces
  }
  auto id = session_cookie(in.cookie);
  if (id.empty()) {
    return true;
  }
  if (in.method != "GET" && in.method != "HEAD" && !csrf_matches(limits.csrf_key, id, in.csrf)) {
    refuse(r, errc::forbidden,
           "The session's CSRF token is missing or wrong: send it as X-CSRF-Token (GET "
           "/clusterws/session gives it).");
    return false;
  }
  if (in.websocket && !same_origin(in.origin, in.host)) {
    refuse(r, errc::forbidden,
           "A WebSocket opened with the session cookie must come from the service's own "
           "origin (Origin: https://"
             + in.host + ").");
    return false;
  }
  creds.token = id;
  r.session_id = std::move(id);
  return true;
}

/// /session (docs/web.md): POST logs in (a token that lives `ui_session_minutes`, handed out
/// in the cookie), GET shows the session, DELETE revokes it.
routed& route_session(routed& r, const std::string& m, const router_limits& limits) {
  auto& call = *r.call;
  r.out = output::session;
  r.post = m == "POST";
  if (m == "POST") {
    call.op = operation::token_create;
    call.token_life_s = limits.session_seconds;
    return r;
  }
  if (r.session_id.empty()) {
    return refuse(r, errc::unauthorized, "Authentication failure");
  }
  if (m == "GET") {
    call.op = operation::token_list;
    call.target = store::sha256_hex(r.session_id);
  } else {
    call.op = operation::token_revoke;
    call.target = r.session_id;
  }
  return r;
}

/// GET /nodetable (clusterws's own, for the web console): `noderange` (empty: every node),
/// `attrs` (a comma list of node attributes), `sort` (`node` or an attribute), `order`
/// (`asc`, `desc`), `offset`, `limit` (1 to nodetable_max_rows). Policy: `lsdef`, as GET /nodes.
routed& route_node_table(routed& r, const query_params& query, const router_limits& limits) {
  auto& call = *r.call;
  call.op = operation::node_table;
  call.type = object_type::node;
  call.policy_command = "lsdef";
  r.out = output::nodetable;
  if (const auto* range = query.find("noderange")) {
    call.target = *range;
  }
  call.attrs.clear();
  if (const auto* attrs = query.find("attrs")) {
    for (auto& a : base::split_list(*attrs)) {
      if (a != "node" && std::find(call.attrs.begin(), call.attrs.end(), a) == call.attrs.end()) {
        call.attrs.push_back(std::move(a));
      }
    }
  }
  auto& t = call.table;
  if (const auto* sort = query.find("sort"); sort != nullptr && !sort->empty()) {
    t.sort = *sort;
  }
  if (auto bad = api::node_table_error(call.attrs, t.sort); !bad.empty()) {
    return refuse(r, errc::bad_request, bad);
  }
  if (const auto* order = query.find("order"); order != nullptr && !order->empty()) {
    if (*order != "asc" && *order != "desc") {
      return refuse(r, errc::bad_request, "order ('" + *order + "') must be asc or desc.");
    }
    t.descending = *order == "desc";
  }
  constexpr long long max_offset = 100000000;
  auto offset = query.number("offset", max_offset, 0);
  if (!offset) {
    return refuse(r, errc::bad_request,
                  "offset must be a whole number from 0 to " + std::to_string(max_offset) + ".");
  }
  auto max_rows = static_cast<long long>(std::max<size_t>(limits.nodetable_max_rows, 1));
  auto limit = query.number("limit", max_rows, std::min<long long>(100, max_rows));
  if (!limit || *limit == 0) {
    return refuse(r, errc::bad_request,
                  "limit must be a whole number from 1 to " + std::to_string(max_rows)
                    + " (nodetable_max_rows).");
  }
  t.offset = static_cast<size_t>(*offset);
  t.limit = static_cast<size_t>(*limit);
  return r;
}

/// async=1: a fan-out call as a job answered at once (202, Location /clusterws/jobs/{id}).
routed& as_job(routed& r, const query_params& query) {
  auto& call = *r.call;
  if (query.flag("async") && !r.answer) {
    if (!api::is_fan_out(call.op)) {
      return refuse(r, errc::bad_request, "async=1 is for operations that run on nodes.");
    }
    if (r.stream) {
      return refuse(r, errc::bad_request,
                    "async=1 and stream=1 do not go together: stream the job (GET "
                    "/jobs/{id}?stream=1).");
    }
    call.async = true;
  }
  if (query.flag("cancel_on_close") && !r.answer) {
    if (!api::is_fan_out(call.op)) {
      return refuse(r, errc::bad_request, "cancel_on_close=1 is for operations that run on nodes.");
    }
    if (call.async) {
      return refuse(r, errc::bad_request,
                    "async=1 and cancel_on_close=1 do not go together: an async call has no "
                    "connection to close (DELETE /jobs/{id}).");
    }
    r.cancel_on_close = true;
  }
  return r;
}

/// The request as a call; its policy command where the operation's own is not the one.
routed route_request(const http_input& in, const router_limits& limits) {
  routed r;
  auto qpos = in.target.find('?');
  query_params query;
  if (qpos != std::string::npos && !query.parse(std::string_view{in.target}.substr(qpos + 1))) {
    return refuse(r, errc::bad_request, "Malformed query string.");
  }
  r.render.pretty = query.flag("pretty");
  r.render.xcoll = query.flag("xcoll");
  r.render.ver1 = query.equals("ver", "1.0");

  // -- the resource ---------------------------------------------------------------
  const std::string& m = in.method;
  r.post = m == "POST";
  auto rest = resource_path(std::string_view{in.target}.substr(0, qpos));
  if (!rest) {
    return refuse(r, errc::not_found, "Unsupported resource.");
  }
  if (rest->segments.empty()) {
    if (m != "GET") {
      return refuse(r, errc::not_allowed,
                    "request method '" + m + "' is not supported on resource '/'");
    }
    r.answer.emplace().names = collections();
    r.out = output::names;
    r.route = base_route();
    r.cacheable = true;
    return r;
  }
  auto res = match_resource(rest->segments);
  if (!res) {
    return refuse(r, errc::not_found, "Unsupported resource.");
  }
  r.route = res->route;
  r.upgrade = res->handler == handler_kind::upgrade;
  if (!res->allows(m)) {
    return refuse(r, errc::not_allowed,
                  "request method '" + m + "' is not supported on resource '" + rest->text + "'");
  }
  if (res->target == "ALLRESOURCES" && res->type == object_type::node) {
    if (m != "GET") {
      return refuse(r, errc::not_found, "Keyword ALLRESOURCES is only supported for GET Action.");
    }
    res->target = "all";
  }
  if (res->handler == handler_kind::local) {
    res->local(r); // the service's own answer (resources.cpp)
    if (r.answer) {
      return r; // public: no body or credentials read
    }
  }

  // -- body and credentials -------------------------------------------------------
  request_body parsed;
  bool has_body = m == "PUT" || m == "POST" || in.content_type.find("json") != std::string::npos;
  if (has_body && !in.body.empty()) {
    parsed
      = parse_request_body(in.body, limits.max_json_depth, res->kind == resource_kind::table_nodes);
    if (!parsed.error.empty()) {
      return refuse(r, errc::bad_request, parsed.error);
    }
  }
  const fields& body = parsed.fields;
  if (!take_options(r, parsed, *res, m)) {
    return r;
  }
  auto& call = *r.call;
  call.client = in.client;
  if (in.local) {
    // the kernel named the caller: nothing in the request may name anyone, and no token is
    // made there (it would turn a local login into a network credential)
    bool named = query.find("userName") || query.find("userPW") || !in.token.empty()
                 || !in.authorization.empty()
                 || std::any_of(body.begin(), body.end(), [](const auto& f) {
                      return f.first == "userName" || f.first == "userPW";
                    });
    if (named) {
      return refuse(r, errc::bad_request,
                    "The local socket identifies the caller by its Unix user: userName, userPW, "
                    "X-Auth-Token and Authorization are not accepted here.");
    }
    if (res->kind == resource_kind::tokens || res->kind == resource_kind::token) {
      return refuse(r, errc::bad_request,
                    "Tokens are not available on the local socket: use HTTPS with a password.");
    }
    if (res->kind == resource_kind::session) {
      return refuse(r, errc::bad_request,
                    "The web console's session is not available on the local socket: use "
                    "HTTPS.");
    }
    call.creds.peer_user = in.peer_user;
  } else {
    call.creds = collect_credentials(body, query, in.token, in.authorization);
    if (!take_session(r, in, limits, *res)) {
      return r;
    }
  }
  call.type = res->type;
  call.target = res->target;
  call.attrs = res->attrs;
  call.only_attrs = res->kind == resource_kind::attrs || res->kind == resource_kind::site_attrs;

  // -- the call -------------------------------------------------------------------
  if (res->kind == resource_kind::events) {
    return route_events(r, query, in.last_event_id);
  }
  if (res->kind == resource_kind::console) {
    return route_console(r, query);
  }
  if (res->kind == resource_kind::nodetable) {
    return route_node_table(r, query, limits);
  }
  if (res->handler == handler_kind::local) {
    return r; // its handler named the call above: policy decides, the session answers
  }
  if (res->kind == resource_kind::session) {
    return route_session(r, m, limits);
  }
  if (res->kind == resource_kind::tokens || res->kind == resource_kind::token) {
    call.op = m == "POST"  ? operation::token_create
              : m == "GET" ? operation::token_list
                           : operation::token_revoke;
    r.out = m == "POST" ? output::token : m == "GET" ? output::objects : output::none;
    return r;
  }
  if (res->kind == resource_kind::jobs || res->kind == resource_kind::job) {
    // authentication is all policy asks (empty command): the jobs actor shows a user that
    // user's jobs only (root all), another's is "not found"
    call.op = res->kind == resource_kind::jobs ? operation::job_list
              : m == "GET"                     ? operation::job_show
                                               : operation::job_cancel;
    r.out = res->kind == resource_kind::jobs ? output::jobs : output::job;
    r.stream = call.op == operation::job_show && query.flag("stream");
    return r;
  }
  if (res->kind == resource_kind::templates || res->kind == resource_kind::template_names) {
    // xcatws.cgi: lsdef --template [NAMES] (objects), lsdef --template -a (names)
    bool names = res->kind == resource_kind::template_names;
    call.op = names ? operation::template_list : operation::template_show;
    r.out = names ? output::names : output::objects;
    return r;
  }
  if (res->kind == resource_kind::dns || res->kind == resource_kind::dns_service) {
    // xcatws.cgi: makedns {noderange}, makedns -d {noderange}, makedns -n; 201 / 200 empty
    call.op = res->kind == resource_kind::dns_service ? operation::dns_service
              : m == "DELETE"                         ? operation::dns_delete
                                                      : operation::dns_apply;
    call.dry_run = query.flag("dryrun");
    r.out = call.dry_run ? output::names : output::none; // dry run: the diffs and the updates
    r.post = m == "POST" && !call.dry_run;               // a dry run creates nothing: 200
    return r;
  }
  if (res->kind == resource_kind::dhcp) {
    // xcatws.cgi: POST makedhcp {noderange} (201), DELETE makedhcp -d {noderange} (200),
    // POST /services/dhcp makedhcp -n (201); no body. dryrun=1: the diff as lines, 200
    call.op = operation::make_dhcp;
    if (res->type != object_type::node) {
      call.type = object_type::node;
      call.target.clear();
      call.command = "-n";
    } else {
      call.command = m == "DELETE" ? "-d" : "";
    }
    call.dry_run = query.flag("dryrun");
    r.out = call.dry_run ? output::names : output::none;
    r.post = m == "POST" && !call.dry_run;
    return r;
  }
  if (res->kind == resource_kind::console_log) {
    // clusterws's own: the log's last `tail` lines (the console server checks the number)
    call.op = operation::console_log;
    if (const auto* tail = query.find("tail")) {
      call.command = tail->empty() ? std::string{"-"} : *tail;
    }
    r.out = output::text;
    return r;
  }
  if (res->kind == resource_kind::conserver) {
    // makeconservercf {noderange} (POST), makeconservercf -d {noderange} (DELETE),
    // makeconservercf (POST /services/conserver: every node); verbose=1: each console's state
    call.op = operation::conserver;
    if (res->type != object_type::node) {
      call.type = object_type::node;
      call.target.clear();
    }
    call.command = m == "DELETE" ? "-d" : query.flag("verbose") ? "-V" : "";
    r.out = output::names;
    return r;
  }
  if (res->kind == resource_kind::host) {
    // xcatws.cgi: makehosts {noderange} / makehosts (every node); 201 and no body. dryrun=1:
    // the diff as lines, 200, nothing written
    call.op = operation::make_hosts;
    if (res->type != object_type::node) {
      call.type = object_type::node;
      call.target.clear();
    }
    call.dry_run = query.flag("dryrun");
    r.out = call.dry_run ? output::names : output::none;
    r.post = !call.dry_run;
    return r;
  }
  if (res->kind == resource_kind::nodestat) {
    // xcatws.cgi: nodestat {noderange}, rendered as actionout
    call.op = operation::nodestat;
    r.out = output::nodestat;
    r.stream = query.flag("stream");
    // format=detail: its streamed lines in nodeshell's detail shape (the answer is as always)
    call.detail = query.equals("format", "detail");
    return as_job(r, query);
  }
  if (res->kind == resource_kind::rename) {
    // xcatws.cgi: chdef -t node -o {node} -n <body.newNode>; the info lines as an array
    call.op = operation::rename;
    r.out = output::names;
    auto it
      = std::find_if(body.begin(), body.end(), [](const auto& f) { return f.first == "newNode"; });
    if (it == body.end() || it->second.empty()) {
      return refuse(r, errc::missing_data, "Lack of operation data.");
    }
    call.new_name = it->second;
    return r;
  }
  if (const auto* format = query.find("format")) {
    if (*format != "detail") {
      return refuse(r, errc::bad_request, "format must be 'detail'.");
    }
    call.detail = true;
  }
  auto attrs = attributes(body, query, m == "PUT" || m == "POST");
  if (res->kind == resource_kind::table_nodes || res->kind == resource_kind::table_rows) {
    build_table(r, *res, m, attrs);
  } else if (res->kind == resource_kind::nodeshell) {
    build_nodeshell(r, query, attrs);
  } else if (res->kind == resource_kind::nodecopy) {
    build_nodecopy(r, query, attrs, in.local && in.peer_user == "root");
  } else if (res->kind == resource_kind::bootstate) {
    build_bootstate(r, m, query, attrs);
  } else if (res->kind == resource_kind::provision) {
    build_provision(r, query, attrs);
  } else if (res->kind == resource_kind::power || res->kind == resource_kind::nextboot
             || res->kind == resource_kind::eventlog || res->kind == resource_kind::beacon
             || res->kind == resource_kind::vitals || res->kind == resource_kind::inventory) {
    build_hardware(r, *res, m, query, attrs);
  } else {
    build_definition(r, *res, m, std::move(attrs));
  }
  if (call.op == operation::show && !r.render.xcoll) {
    call.page_objects = limits.page_objects; // (xcoll merges across the whole listing)
  }
  return as_job(r, query);
}

} // namespace

routed route(const http_input& in, const router_limits& limits) {
  auto r = route_request(in, limits);
  if (r.call->policy_command.empty()) {
    r.call->policy_command = api::policy_command(r.call->op); // api/operation_traits.cpp
  }
  return r;
}

} // namespace cws::http
