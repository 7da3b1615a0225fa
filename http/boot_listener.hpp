#pragma once

// The node-facing boot listener (docs/provisioning.md, "Boot chain and install status"):
// plain HTTP on the provisioning network, no API credentials, read-only to the world except
// for the install status a node reports with its install token. Its reads go to the store's
// readers and its status writes to the store's group commit (batched here first), so an io
// thread never waits on the database.

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "actors/store_actor.hpp"
#include "api/boot_chain.hpp"
#include "api/install_token.hpp"
#include "http/beast.hpp"

namespace cws::http {

/// The listener's settings (`boot_*`, `install_*`).
struct boot_listener_config {
  tcp::endpoint endpoint;
  /// Connections open at once beyond this are closed at once (`boot_max_connections`).
  size_t max_connections = 4096;
  /// Largest request line and headers (`boot_max_header_bytes`).
  size_t max_header_bytes = 8192;
  /// Largest request body, a POSTed status form (fixed: a status needs a few bytes).
  size_t max_body_bytes = 4096;
  /// A connection that makes no progress for this long is closed (`boot_idle_timeout`).
  std::chrono::seconds idle_timeout{30};
  /// Kernel and initrd streams at once; more get 503 (`boot_max_streams`).
  size_t max_streams = 64;
  /// Refused tokens within one install that mark the node failed; 0: never
  /// (`install_bad_token_limit`).
  unsigned bad_token_limit = 5;
  /// Status writes that arrive within this share one store write (`boot_status_batch_ms`).
  std::chrono::milliseconds batch{5};
  /// The stage deadlines (`install_deadline_*`) and how often they are checked
  /// (`install_deadline_check_s`).
  api::install_deadlines deadlines;
  std::chrono::seconds deadline_check{10};
  api::boot_chain_config chain;
  /// xCAT's port-3002 status protocol (`xcat_status_listen`; none: off): `installstatus X`
  /// and `next` from the node whose `ip` is the peer's address, without a token.
  std::optional<tcp::endpoint> xcat_status;
};

/// Serves the boot chain on its own acceptor over the daemon's io threads.
class boot_listener {
 public:
  /// Binds `cfg.endpoint` (throws boost::system::system_error when it cannot). With `db`,
  /// boot scripts are read on the connection's own io thread (a few LMDB gets, no actor
  /// hop); without it every read goes through `store`'s readers.
  boot_listener(std::vector<net::io_context*> iocs, boot_listener_config cfg,
                actors::store_actor store, api::install_token_key key,
                std::shared_ptr<const store::database> db = nullptr);
  ~boot_listener();

  boot_listener(const boot_listener&) = delete;
  boot_listener& operator=(const boot_listener&) = delete;

  /// Starts accepting and the deadline timer; the bound endpoint.
  tcp::endpoint start();

  /// The bound endpoint of the port-3002 listener (none when off).
  std::optional<tcp::endpoint> xcat_status_endpoint() const;

  /// Stops accepting, closes the connections, cancels the timers, and hands the status
  /// writes waiting to the store. The io threads still run.
  void stop();

  struct state;

 private:
  std::shared_ptr<state> st_;
};

} // namespace cws::http
