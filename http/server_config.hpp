#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>

#include "base/settings.hpp"

namespace cws::http {

/// The daemon's settings: every limit explicit (docs/api.md, "Limits").
struct server_config {
  /// ADDR:PORT to listen on; `[::1]:8443` for IPv6. Port 0 picks a free port.
  std::string listen = "127.0.0.1:8443";
  /// HTTPS connections beyond this are closed at once, and those of one client address
  /// beyond `max_connections_per_client`.
  size_t max_connections = 10000;
  size_t max_connections_per_client = 1000;
  /// The local socket's own budget (its connections do not count in `max_connections`), and
  /// the share of one uid.
  size_t local_max_connections = 1000;
  size_t local_max_connections_per_user = 128;
  /// Largest request head (request line and headers).
  size_t header_limit = 16 * 1024;
  /// Largest request body.
  size_t body_limit = 1024 * 1024;
  /// Deepest JSON nesting in a body.
  size_t max_json_depth = 32;
  /// Time to complete the TLS handshake.
  std::chrono::seconds handshake_timeout{10};
  /// Time to receive a whole request, counted from when the service starts waiting for it
  /// (covers idle keep-alive connections and slow senders alike).
  std::chrono::seconds request_timeout{30};
  /// Time a call may take in the actor system before it is answered 503.
  std::chrono::seconds call_timeout{120};
  /// A listing (GET of objects) with more objects is read and sent in pages of this many,
  /// chunked, from one snapshot (0: always whole).
  size_t page_objects = 5000;
  /// GET /nodetable: the most rows one page may ask for.
  size_t nodetable_max_rows = 1000;
  /// An event stream's heartbeat when nothing else is sent.
  std::chrono::seconds events_heartbeat{15};
  /// An event stream's bytes not yet taken by its client: past this it is cut off, with a
  /// last event saying so (a slow consumer never slows a writer).
  size_t events_buffer = 1024 * 1024;
  /// The longest an event waits for the events that follow it, so that a burst goes to a
  /// client in one write (http/event_hub.hpp; 0: once those handed over together are in).
  std::chrono::milliseconds events_flush{10};
  /// An events WebSocket (http/ws_session.hpp): the longest message a client may send (it
  /// sends none; control frames are smaller), the time for the 101 and the closing
  /// handshake, and the time the client may send nothing at all (not even a heartbeat's pong).
  size_t ws_max_message = 1024;
  std::chrono::seconds ws_handshake_timeout{10};
  std::chrono::seconds ws_idle_timeout{60};
  /// A console WebSocket's kernel send buffer (SO_SNDBUF; 0: the kernel's autotuning, up to
  /// tcp_wmem's 4 MiB): what a watcher that stops reading holds in the kernel before its
  /// unacknowledged bytes count towards console_watcher_queue_bytes.
  size_t console_watcher_sndbuf = 65536;
  /// How long a web console login lasts (docs/web.md): its token and its cookie's Max-Age.
  std::chrono::seconds ui_session{28800};
  /// Bursts of failures (TLS handshakes, 503s, commits) are logged as one summary line per
  /// period at most.
  std::chrono::seconds log_summary{60};
  /// The Unix socket local tools use (plain HTTP, the caller named by SO_PEERCRED); empty:
  /// none. `local_socket_required`: failing to create it stops the start (a configured
  /// path) instead of a warning (the default path, e.g. a daemon that is not root).
  std::filesystem::path local_socket;
  bool local_socket_required = false;
  /// Certificate and key (PEM).
  std::filesystem::path cert;
  std::filesystem::path key;

  /// Takes the HTTPS settings of clusterws.conf (api/settings.hpp); validated there.
  void apply(const base::settings& settings);
};

} // namespace cws::http
