#include "http/server_config.hpp"

namespace cws::http {

void server_config::apply(const base::settings& s) {
  listen = s.text("listen");
  max_connections = s.number("max_connections");
  max_connections_per_client = s.number("max_connections_per_client");
  local_max_connections = s.number("local_max_connections");
  local_max_connections_per_user = s.number("local_max_connections_per_user");
  header_limit = s.number("max_header_bytes");
  body_limit = s.number("max_body_bytes");
  max_json_depth = s.number("max_json_depth");
  handshake_timeout = std::chrono::seconds(s.number("handshake_timeout"));
  request_timeout = std::chrono::seconds(s.number("request_timeout"));
  call_timeout = std::chrono::seconds(s.number("call_timeout"));
  page_objects = s.number("page_objects");
  nodetable_max_rows = s.number("nodetable_max_rows");
  events_heartbeat = std::chrono::seconds(s.number("events_heartbeat_s"));
  events_buffer = s.number("events_buffer_bytes");
  events_flush = std::chrono::milliseconds(s.number("events_flush_ms"));
  ws_max_message = s.number("ws_max_message_bytes");
  ws_handshake_timeout = std::chrono::seconds(s.number("ws_handshake_timeout_s"));
  ws_idle_timeout = std::chrono::seconds(s.number("ws_idle_timeout_s"));
  console_watcher_sndbuf = s.number("console_watcher_socket_bytes");
  ui_session = std::chrono::seconds(s.number("ui_session_seconds"));
  log_summary = std::chrono::seconds(s.number("log_summary_seconds"));
}

} // namespace cws::http
