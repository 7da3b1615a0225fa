#pragma once

// The daemon's components besides the engines (daemon/transports.hpp), in the order
// daemon/main.cpp starts them: the error log, the database, the actor system and its actors,
// the audit log, the HTTPS server, systemd.

#include <atomic>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <sys/stat.h>

#include "actors/console_actor.hpp"
#include "actors/delegation_actor.hpp"
#include "actors/dispatcher.hpp"
#include "actors/events_actor.hpp"
#include "actors/executor_actor.hpp"
#include "actors/jobs_actor.hpp"
#include "actors/policy_actor.hpp"
#include "actors/reapply_actor.hpp"
#include "actors/sn_agent.hpp"
#include "actors/sn_registry.hpp"
#include "actors/store_actor.hpp"
#include "api/console_log.hpp"
#include "api/service_metrics.hpp"
#include "api/sn_seal.hpp"
#include "base/log.hpp"
#include "daemon/component.hpp"
#include "daemon/systemd.hpp"
#include "daemon/transports.hpp"
#include "http/audit_log.hpp"
#include "http/boot_listener.hpp"
#include "http/server.hpp"
#include "store/database.hpp"
#include "store/home.hpp"
#include "virt/console_streams.hpp"

namespace cws::daemon {

/// The error log: its level (`log_level`, reloaded), and the warning for retired settings.
class log_component : public component {
 public:
  log_component(const base::settings& s, const std::filesystem::path& config);
  std::string_view name() const override {
    return "log";
  }
  void start() override;
  void stop() override {
    // nop
  }
  std::vector<std::string_view> reloadable() const override {
    return {"log_level"};
  }
  void reload(const base::settings& next) override;

 private:
  base::log_level level_;
  std::vector<std::string> retired_;
};

/// The LMDB database (`change_log_keep`), measured from its environment.
class database_component : public component {
 public:
  database_component(const base::settings& s, const store::home& home);
  std::string_view name() const override {
    return "database";
  }
  void start() override;
  void stop() override;
  void metrics(base::metric_writer& out) const override;

  /// The open database (null before start and after stop).
  const std::shared_ptr<store::database>& get() const noexcept {
    return db_;
  }

  /// True when the home's database file is no longer the one this component opened (a
  /// `clusterctl restore --replace` swapped the home): the daemon then starts again on it.
  bool replaced() const;

  /// The home directory the database lives in (`<home>/db`).
  std::filesystem::path home_dir() const {
    return dir_.parent_path();
  }

 private:
  std::filesystem::path dir_;
  std::string keep_;
  /// The opened data.mdb's device and inode.
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  std::shared_ptr<store::database> db_;
};

/// The actor system, whose workers are the io threads (`io_threads`; http/io_scheduler).
class runtime_component : public component {
 public:
  explicit runtime_component(const base::settings& s);
  std::string_view name() const override {
    return "runtime";
  }
  void start() override;
  /// Waits for every actor to end: the actor components before it sent them their exits.
  void stop() override;

  caf::actor_system& system() const noexcept {
    return *sys_;
  }

  /// The files of a TLS link between actor systems (caf::openssl): this side's certificate
  /// and key, and the CA the other side's certificate must be signed by.
  struct link_files {
    std::filesystem::path certificate;
    std::filesystem::path key;
    std::filesystem::path cafile;
  };

  /// Loads CAF's network layer with TLS and BASP heartbeats (a link silent for `dead_after`
  /// is closed): the service-node link. Before start.
  /// @throws std::runtime_error naming a file that is missing (never anonymous TLS).
  void link(const link_files& files, std::chrono::milliseconds heartbeat,
            std::chrono::milliseconds dead_after);

  /// The io threads' contexts (the HTTPS server serves on them).
  const std::vector<http::net::io_context*>& contexts() const;

 private:
  size_t threads_;
  std::optional<link_files> link_;
  std::chrono::milliseconds heartbeat_{0};
  std::chrono::milliseconds dead_after_{0};
  /// (The system keeps a reference to its configuration: it lives as long.)
  std::unique_ptr<caf::actor_system_config> cfg_;
  std::unique_ptr<caf::actor_system> sys_;
};

/// The change feed (`events_poll_ms`).
class events_component : public component {
 public:
  events_component(const base::settings& s, const runtime_component& rt,
                   const database_component& db);
  std::string_view name() const override {
    return "events";
  }
  void start() override;
  void stop() override;

  const actors::events_actor& handle() const noexcept {
    return handle_;
  }

  /// What the store's writer shares with the feed.
  const std::shared_ptr<actors::durable_mark>& durable() const noexcept {
    return cfg_.durable;
  }

 private:
  const runtime_component& rt_;
  const database_component& db_;
  actors::events_config cfg_;
  actors::events_actor handle_;
};

/// The store actor: readers and the group-committing writer (`commit_wait_us`,
/// `noderange_*`); fan-out calls are planned on its readers (bound to the executor's engines).
class store_component : public component {
 public:
  store_component(const base::settings& s, const runtime_component& rt,
                  const database_component& db, const events_component& events,
                  std::shared_ptr<api::service_metrics> metrics);
  std::string_view name() const override {
    return "store";
  }
  void start() override;
  void stop() override;
  /// Commits, their failures, batch sizes, commit times.
  void metrics(base::metric_writer& out) const override;

  const actors::store_actor& handle() const noexcept {
    return handle_;
  }

 private:
  const runtime_component& rt_;
  const database_component& db_;
  const events_component& events_;
  actors::store_config cfg_;
  actors::store_actor handle_;
};

/// The provisioning re-apply (`provision_reapply`, `provision_reapply_delay_ms`): follows the
/// change feed and re-runs makehosts, makedhcp (and makedns once DNS is configured) for the
/// nodes whose name, MAC or addresses changed (actors/reapply_actor.hpp). Off: nothing runs.
class reapply_component : public component {
 public:
  reapply_component(const base::settings& s, const runtime_component& rt,
                    const database_component& db, const events_component& events,
                    const store_component& store);
  std::string_view name() const override {
    return "reapply";
  }
  void start() override;
  void stop() override;

 private:
  const runtime_component& rt_;
  const events_component& events_;
  const store_component& store_;
  bool on_ = false;
  actors::reapply_config cfg_;
  actors::reapply_actor handle_;
};

/// The node-facing boot listener (`boot_*`, `install_*`; docs/provisioning.md): off when
/// `boot_listen` is empty.
class boot_component : public component {
 public:
  boot_component(const base::settings& s, const store::home& home, const runtime_component& rt,
                 const database_component& db, const store_component& store);
  std::string_view name() const override {
    return "boot";
  }
  void start() override;
  void stop() override;

 private:
  std::filesystem::path key_file_;
  const runtime_component& rt_;
  const database_component& db_;
  const store_component& store_;
  bool on_ = false;
  http::boot_listener_config cfg_;
  std::unique_ptr<http::boot_listener> listener_;
};

/// Authentication and policy (`auth_cache_seconds`, `login_backoff_*`).
class policy_component : public component {
 public:
  policy_component(const base::settings& s, const runtime_component& rt,
                   const store_component& store, std::shared_ptr<api::service_metrics> metrics);
  std::string_view name() const override {
    return "policy";
  }
  void start() override;
  void stop() override;
  /// Credentials refused, throttled, hashed, cached; policy expansions.
  void metrics(base::metric_writer& out) const override;

  const actors::policy_actor& handle() const noexcept {
    return handle_;
  }

 private:
  const runtime_component& rt_;
  const store_component& store_;
  actors::policy_config cfg_;
  actors::policy_actor handle_;
};

class sn_listener_component;

/// The fan-out executor (`max_nodes_in_flight`, `max_nodes_in_flight_per_user`): the
/// engines in `engines` are its transports.
class executor_component : public component {
 public:
  /// `sns`: the head's service nodes, to which calls are delegated (none: every node runs
  /// here; also when its `sn_listen` is empty).
  executor_component(const base::settings& s, const runtime_component& rt,
                     const store_component* store, transports engines,
                     std::shared_ptr<api::service_metrics> metrics,
                     const sn_listener_component* sns = nullptr);
  std::string_view name() const override {
    return "executor";
  }
  void start() override;
  void stop() override;
  /// Nodes in flight, finished nodes by result.
  void metrics(base::metric_writer& out) const override;

  const actors::executor_actor& handle() const noexcept {
    return handle_;
  }

 private:
  const runtime_component& rt_;
  const store_component* store_;
  transports engines_;
  const sn_listener_component* sns_;
  api::delegation_settings delegation_;
  std::chrono::milliseconds seal_ttl_{60000};
  actors::executor_config cfg_;
  actors::executor_actor handle_;
};

/// The jobs (`job_output_max_bytes`, `jobs_keep_s`, `jobs_keep_max`): every fan-out call runs
/// as one, on the executor; job and power events go to the change feed.
class jobs_component : public component {
 public:
  jobs_component(const base::settings& s, const runtime_component& rt, const database_component& db,
                 const events_component& events, const executor_component& executor);
  std::string_view name() const override {
    return "jobs";
  }
  void start() override;
  /// Before the executor (the list's reverse order): a job still running keeps its record
  /// `running` (read `interrupted` at the next start), not the executor's "stopping" failure.
  void stop() override;

  const actors::jobs_actor& handle() const noexcept {
    return handle_;
  }

 private:
  const runtime_component& rt_;
  const database_component& db_;
  const events_component& events_;
  const executor_component& executor_;
  actors::jobs_config cfg_;
  actors::jobs_actor handle_;
};

/// The entry the HTTP sessions hand calls to: authorize, then store or executor.
class console_component;

class dispatcher_component : public component {
 public:
  /// `console`: where console calls go (none: refused as unavailable).
  dispatcher_component(const runtime_component& rt, const store_component& store,
                       const policy_component& policy, const executor_component& executor,
                       const events_component& events, const jobs_component& jobs,
                       const console_component* console = nullptr);
  std::string_view name() const override {
    return "dispatcher";
  }
  void start() override;
  void stop() override;

  const actors::dispatcher& get() const noexcept {
    return *entry_;
  }

 private:
  const runtime_component& rt_;
  const store_component& store_;
  const policy_component& policy_;
  const executor_component& executor_;
  const events_component& events_;
  const jobs_component& jobs_;
  const console_component* console_;
  std::unique_ptr<actors::dispatcher> entry_;
};

/// The audit log (`audit_log`; `audit_required`, `audit_field_max`, `audit_summary_seconds`
/// and `audit_log_max_bytes` reloaded).
class audit_component : public component {
 public:
  /// @throws std::runtime_error for `audit_required = true` with `audit_log = off`.
  audit_component(const base::settings& s, const store::home& home);
  std::string_view name() const override {
    return "audit";
  }
  void start() override;
  void stop() override;
  std::vector<std::string_view> reloadable() const override {
    return {"audit_field_max", "audit_summary_seconds", "audit_log_max_bytes", "audit_required"};
  }
  void reload(const base::settings& next) override;

  /// The log (one that writes nothing when off; null before start and after stop).
  http::audit_log* get() const noexcept {
    return log_.get();
  }

 private:
  std::filesystem::path path_;
  /// The default directory, made at start (/var/log/clusterws on a fresh install).
  std::filesystem::path make_dir_;
  http::audit_limits limits_;
  std::unique_ptr<http::audit_log> log_;
};

/// The console server (`console_*`; docs/consoles.md): SOL consoles on one event loop
/// (api::sol_consoles), logged under `console_log_dir`, held by the console actor, which
/// follows the change feed. Attach and detach go to the audit log and the event stream.
class console_component : public component {
 public:
  console_component(const base::settings& s, const store::home& home, const runtime_component& rt,
                    const database_component& db, const events_component& events,
                    const audit_component& audit, const store_component& store);
  std::string_view name() const override {
    return "console";
  }
  void start() override;
  void stop() override;
  /// Consoles by state, bytes, reconnects, watchers.
  void metrics(base::metric_writer& out) const override;

  const actors::console_actor& handle() const noexcept {
    return handle_;
  }

  /// Where the logs are.
  const std::filesystem::path& log_dir() const noexcept {
    return log_dir_;
  }

 private:
  const runtime_component& rt_;
  const database_component& db_;
  const events_component& events_;
  const audit_component& audit_;
  const store_component& store_; ///< makeconservercf's consoleenabled writes
  std::filesystem::path log_dir_;
  api::console_log_config log_;
  std::chrono::milliseconds keepalive_{15000};
  virt::console_stream_config kvm_; // cons=kvm: console_kvm_keepalive_s, console_kvm_openers
  actors::console_config cfg_;
  uint16_t port_ = 623;
  store::noderange_options limits_;
  std::shared_ptr<actors::console_stats> stats_ = std::make_shared<actors::console_stats>();
  actors::console_actor handle_;
};

/// The HTTPS server and the local socket (`listen`, `max_*`, timeouts, `local_socket`, ...):
/// its start binds and announces the address; `run` serves until a signal stops it.
class https_component : public component {
 public:
  /// `port_file`: where the bound port is written once listening (empty: nowhere).
  https_component(const base::settings& s, const store::home& home, std::string port_file,
                  const runtime_component& rt, const dispatcher_component& entry,
                  const audit_component& audit,
                  std::shared_ptr<const base::metric_registry> registry);
  std::string_view name() const override {
    return "https";
  }
  void start() override;
  void stop() override;

  /// Serves until SIGINT, SIGTERM or a stop.
  void run();

  /// `fn` runs on the first io thread at each SIGHUP (after the audit log and the certificate
  /// were loaded again). Set before start.
  void on_reload(std::function<void()> fn) {
    on_reload_ = std::move(fn);
  }

  /// The running server (after start).
  http::server& server() const noexcept {
    return *srv_;
  }

  /// `https://ADDR:PORT/clusterws` (after start).
  const std::string& url() const noexcept {
    return url_;
  }

 private:
  http::server_config cfg_;
  std::string home_;
  std::string port_file_;
  const runtime_component& rt_;
  const dispatcher_component& entry_;
  const audit_component& audit_;
  std::shared_ptr<const base::metric_registry> registry_;
  std::function<void()> on_reload_;
  std::unique_ptr<http::server> srv_;
  std::string url_;
};

/// The head's service-node listener (`sn_listen`, `sn_heartbeat_ms`, `sn_dead_after_ms`;
/// docs/service-nodes.md): the registry published over caf::openssl with the head's
/// certificate, trusting only the service-node CA (<home>/pki/sn/). Off when `sn_listen` is
/// empty; set, it refuses to start without those files.
class sn_listener_component : public component {
 public:
  sn_listener_component(const base::settings& s, const store::home& home, runtime_component& rt,
                        const events_component& events);
  std::string_view name() const override {
    return "service-nodes";
  }
  void start() override;
  void stop() override;
  /// Service nodes registered, their heartbeats and load; joins, refusals, departures.
  void metrics(base::metric_writer& out) const override;

  /// The registered service nodes for the executor's planner (null when `sn_listen` is
  /// empty: nothing is delegated).
  std::shared_ptr<const actors::sn_roster> roster() const {
    return listen_.empty() ? nullptr : cfg_.roster;
  }

  /// The registry's board: the delegations count their shares, batches and nodes in flight
  /// there (null when `sn_listen` is empty).
  std::shared_ptr<actors::sn_board> board() const {
    return listen_.empty() ? nullptr : cfg_.board;
  }

  /// The head's own names and addresses (a `servicenode` entry naming one means the head).
  std::vector<std::string> head_names() const;

 private:
  std::string listen_;
  std::filesystem::path dir_;
  runtime_component& rt_;
  const events_component& events_;
  actors::sn_registry_config cfg_;
  actors::sn_registry_actor handle_;
};

/// A service node's link to its head (`clusterwsd --service-node`: `sn_name`, `sn_head`,
/// `sn_*`; its home from clusterctl sn add): refuses to start without its certificate, key,
/// the head's CA and its secret.
class sn_agent_component : public component {
 public:
  sn_agent_component(const base::settings& s, const store::home& home, runtime_component& rt,
                     std::shared_ptr<api::service_metrics> load);
  std::string_view name() const override {
    return "head-link";
  }
  /// (Nothing: the agent dials once it has an executor to register, from `serve`.)
  void start() override;
  void stop() override;
  /// Spawns the agent, which registers `executor` with the head (the service-node executor's
  /// component calls it at its start); `load` (nodes in flight here) goes in its heartbeats.
  void serve(actors::sn_executor_actor executor, std::function<uint32_t()> load);
  /// Registered, dials, heartbeats both ways.
  void metrics(base::metric_writer& out) const override;

  /// The ids of the head's sealed requests seen here (`sn_replay_cache`): the delegated
  /// executor verifies each request with api::verify_sn_request against it and the secret.
  const std::shared_ptr<api::sn_replay_cache>& replay_cache() const noexcept {
    return seen_;
  }

  /// This service node's name and secret (the seal's key).
  const actors::sn_agent_config& link() const noexcept {
    return cfg_;
  }

  /// Called (on an actor thread) when the link to the registered head is lost: the head's
  /// work here ends (the delegated executor cancels its jobs). Set before start.
  void on_head_lost(std::function<void(const std::string&)> fn) {
    cfg_.on_head_lost = std::move(fn);
  }

  /// Called (on an actor thread) when the head refuses this service node for good.
  void on_refused(std::function<void(const std::string&)> fn) {
    cfg_.on_refused = std::move(fn);
  }

 private:
  runtime_component& rt_;
  actors::sn_agent_config cfg_;
  std::shared_ptr<api::sn_replay_cache> seen_;
  caf::actor handle_;
};

/// systemd's notifications (READY, STOPPING, the watchdog; daemon/systemd.hpp).
class systemd_component : public component {
 public:
  /// `reopening` is set when the server stops only to start again (RELOADING=1 is sent
  /// instead of STOPPING=1).
  systemd_component(https_component& https, const std::atomic<bool>& reopening);
  std::string_view name() const override {
    return "systemd";
  }
  void start() override;
  void stop() override;

 private:
  https_component& https_;
  const std::atomic<bool>& reopening_;
  /// Shared with the server's stop hook, which may run after this component stopped.
  std::shared_ptr<systemd_notifier> notifier_;
};

} // namespace cws::daemon
