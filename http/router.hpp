#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/call.hpp"
#include "api/result.hpp"
#include "http/event_stream.hpp"
#include "http/resources.hpp"

namespace cws::http {

/// What the HTTP layer knows about one request, without Beast types.
struct http_input {
  std::string method;
  /// The request target: path and query, still percent-encoded.
  std::string target;
  std::string body;
  std::string content_type;
  /// The Authorization header (HTTP Basic is accepted).
  std::string authorization;
  /// The X-Auth-Token header.
  std::string token;
  /// The client's address.
  std::string client;
  /// The local Unix socket: the caller is `peer_user`, named by the kernel (SO_PEERCRED);
  /// credentials in the request are refused.
  bool local = false;
  std::string peer_user;
  /// The Last-Event-ID header (an event stream resumed by its client).
  std::string last_event_id;
  /// The web console's session (docs/web.md): the Cookie, X-CSRF-Token, Origin and Host
  /// headers, and whether the request asks to switch to a WebSocket.
  std::string cookie;
  std::string csrf;
  std::string origin;
  std::string host;
  bool websocket = false;
};

/// How a successful result is rendered.
enum class output {
  none,      ///< empty body (PUT, DELETE, create-type POST)
  names,     ///< JSON array of names (lists; nodels, empty body when none)
  objects,   ///< {"name":{attr:value,...},...}
  token,     ///< {"token":{"id":...,"expire":...}}
  nodeshell, ///< {"node":[" line",...],...}, or per node details (format=detail)
  nodecopy,  ///< nodeshell's, but success is a flat array of lines (xCAT's infoout)
  nodestat,  ///< xCAT's actionout: {"node":{"nodestat":"sshd"},...}
  per_node,  ///< format=detail deletes: {"node":{"result":"removed"},...}
  action,    ///< xCAT's actionout: {"node":{"power":"on"},...} (power, nextboot)
  tables,    ///< {"table":[{column:value,...},...],...}
  metrics,   ///< the metrics page, written by the session once policy allows it
  events,    ///< the event stream, written by the session once policy allows it
  console,   ///< a console over WebSocket (http/ws_console.hpp), once policy allows it
  text,      ///< `api_result::text` as it is (text/plain): a console log
  openapi,   ///< docs/openapi.yaml (YAML)
  jobs,      ///< {"jobs":[{job},...]}
  job,       ///< {job, "nodes":{node: detail,...}} (DELETE: the job as it is now)
  session,   ///< /session: {"user","csrf","expire"} and the cookie, written by the session
  nodetable, ///< {"total":N,"offset":O,"rows":[{"node":name,attr:value,...},...]}
};

/// An HTTP answer: status and body.
struct response_text {
  unsigned status = 200;
  std::string body;
  const char* content_type = "application/json";
};

/// Output switches from the query.
struct render_options {
  bool pretty = false;
  bool xcoll = false;
  /// ver=1.0: list attributes as arrays.
  bool ver1 = false;
};

/// A routed request: either answered at once (`answer`, a refusal or the resource list,
/// rendered like any result), or a call for the actors.
/// What `GET /clusterws/nodes/{node}/console` asked for (docs/consoles.md).
struct console_request {
  std::string node;
  /// rw (the default), ro (mode=ro), force (force=1).
  std::string mode = "rw";
  /// replay=N: bytes of the replay buffer first (the console server caps it).
  uint64_t replay = 0;
};

struct routed {
  std::optional<api::api_result> answer;
  /// Built once here and shared, never copied, on its way through the actors.
  std::shared_ptr<api::api_call> call = std::make_shared<api::api_call>();
  output out = output::none;
  render_options render;
  /// POST: success is 201 Created.
  bool post = false;
  /// nodeshell with stream=1: chunked NDJSON, one line per node as it completes.
  bool stream = false;
  /// A fan-out call with cancel_on_close=1: when its client closes the connection the call is
  /// cancelled (its job reads `cancelled`) instead of running on (root's tools: Ctrl-C).
  bool cancel_on_close = false;
  /// The resource table row the path matched (http/resources.hpp), or base_route() or
  /// no_route(): the `route` label of the request metrics.
  size_t route = no_route();
  /// The answer is public and the same for everyone (GET /clusterws, the OpenAPI text):
  /// caches may keep it. Every other answer says `Cache-Control: no-store`.
  bool cacheable = false;
  /// GET /events: what the stream sends once policy allows it.
  std::optional<event_request> events;
  /// GET /nodes/{node}/console: what the console WebSocket attaches with.
  std::optional<console_request> console;
  /// The row may switch protocols (handler_kind::upgrade): a WebSocket upgrade request is
  /// handed to http/ws_session once its call is allowed.
  bool upgrade = false;
  /// The web console's session the request authenticated with (its cookie's value), or empty.
  std::string session_id;
};

/// Limits the router enforces.
struct router_limits {
  size_t max_json_depth = 32;
  /// A listing of more objects is answered in pages (0: whole; xcoll=1 is always whole).
  size_t page_objects = 0;
  /// The key of the web console's CSRF tokens (http/web_session.hpp); empty: the session
  /// cookie is not accepted.
  std::string_view csrf_key;
  /// The life of a web console session, seconds (`ui_session_minutes`).
  int64_t session_seconds = 480 * 60;
  /// GET /nodetable: the most rows one page may ask for (`limit`).
  size_t nodetable_max_rows = 1000;
};

/// Routes a request (xcat-compat.md §1): base path `/clusterws` or `/xcatws`, then the
/// resource table (http/resources.hpp); 404 `Unsupported resource.` and 405 come before
/// authentication; the body is parsed and credentials collected (http/credentials.hpp).
routed route(const http_input& in, const router_limits& limits);

} // namespace cws::http
