#include "daemon/components.hpp"

#include <caf/send.hpp>

#include <fstream>
#include <stdexcept>

#include "actors/type_ids.hpp"
#include "api/audit_table.hpp"
#include "api/console.hpp"
#include "api/planner.hpp"
#include "api/settings.hpp"
#include "api/sol_consoles.hpp"
#include "api/targets.hpp"
#include "http/io_scheduler.hpp"
#include "store/cluster_view.hpp"
#include "store/error.hpp"

namespace cws::daemon {

namespace {

using base::metric_type;
using base::metric_writer;

http::audit_limits audit_settings(const base::settings& s) {
  http::audit_limits al;
  al.max_field = s.number("audit_field_max");
  al.summary_period = std::chrono::seconds(s.number("audit_summary_seconds"));
  al.max_bytes = s.number("audit_log_max_bytes");
  al.required = s.text("audit_required") == "true";
  return al;
}

/// Refuses `audit_required = true` without an audit log.
void check_audit(const base::settings& s) {
  if (s.text("audit_log") == "off" && s.text("audit_required") == "true") {
    throw std::runtime_error("audit_required = true needs an audit log; audit_log is off");
  }
}

template<class Handle>
void end(Handle& h) {
  if (h) {
    caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
    h = nullptr; // (a handle kept would keep the actor, and the system's end, waiting)
  }
}

} // namespace

// -- log -----------------------------------------------------------------------------

log_component::log_component(const base::settings& s, const std::filesystem::path& config)
    : level_(*base::parse_log_level(s.text("log_level"))) {
  for (const auto* r : s.retired_given()) {
    retired_.push_back(config.string() + ": setting '" + std::string{r->key}
                       + "' is no longer used and is ignored: " + std::string{r->doc});
  }
}

void log_component::start() {
  base::set_log_level(level_);
  for (const auto& line : retired_) {
    base::log(base::log_level::warning, line);
  }
}

void log_component::reload(const base::settings& next) {
  // said under the old level or, if that one hides notices, under the new one
  auto said = base::log_enabled(base::log_level::notice);
  auto note = "log_level is now " + next.text("log_level");
  base::log(base::log_level::notice, note);
  level_ = *base::parse_log_level(next.text("log_level"));
  base::set_log_level(level_);
  if (!said) {
    base::log(base::log_level::notice, note);
  }
}

// -- database ------------------------------------------------------------------------

database_component::database_component(const base::settings& s, const store::home& home)
    : dir_(home.db()), keep_(std::to_string(s.number("change_log_keep"))) {
  // nop
}

void database_component::start() {
  store::lmdb_options dbo;
  dbo.defer_meta_sync = true; // the writer answers after its own sync (actors/store_actor.cpp)
  db_ = std::make_shared<store::database>(dir_, dbo);
  struct stat st {};
  if (::stat((dir_ / "data.mdb").c_str(), &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }
  // in the database, so the tools' commits drop old change sets by the same bound
  if (db_->read().meta(store::write_txn::changes_kept_key) != keep_) {
    db_->write([&](store::write_txn& t) { t.set_meta(store::write_txn::changes_kept_key, keep_); });
  }
}

bool database_component::replaced() const {
  struct stat st {};
  if (::stat((dir_ / "data.mdb").c_str(), &st) != 0) {
    return false; // (no database there: the one open stays in use)
  }
  return st.st_dev != dev_ || st.st_ino != ino_;
}

void database_component::stop() {
  db_.reset();
}

void database_component::metrics(metric_writer& out) const {
  if (!db_) {
    return;
  }
  store::database_stats st;
  try {
    st = db_->stats();
  } catch (const store::error&) {
    return; // (LMDB could not tell: the page goes without these)
  }
  out.gauge("clusterws_lmdb_map_size_bytes", "Size of the LMDB map (grows by doubling)",
            static_cast<double>(st.map_size_bytes));
  out.gauge("clusterws_lmdb_map_used_bytes", "Bytes of the LMDB map in use (pages up to the last)",
            static_cast<double>(st.map_used_bytes));
  out.gauge("clusterws_lmdb_readers_active",
            "LMDB read snapshots open now, of every process on the database",
            static_cast<double>(st.readers_active));
  out.gauge("clusterws_lmdb_reader_slots_used", "LMDB reader slots ever taken (of max_readers)",
            static_cast<double>(st.reader_slots_used));
}

// -- runtime -------------------------------------------------------------------------

runtime_component::runtime_component(const base::settings& s)
    : threads_(static_cast<size_t>(s.number("io_threads"))) {
  // nop
}

void runtime_component::start() {
  cfg_ = std::make_unique<caf::actor_system_config>();
  // the io threads are the actors' workers too: a request stays on one thread
  http::io_scheduler::install(*cfg_, threads_);
  actors::add_wire_types(*cfg_); // the messages that may leave the process (api/wire.hpp)
  sys_ = std::make_unique<caf::actor_system>(*cfg_);
}

void runtime_component::stop() {
  sys_.reset();
  cfg_.reset();
}

const std::vector<http::net::io_context*>& runtime_component::contexts() const {
  return http::io_scheduler::of(*sys_)->contexts();
}

// -- events --------------------------------------------------------------------------

events_component::events_component(const base::settings& s, const runtime_component& rt,
                                   const database_component& db)
    : rt_(rt), db_(db) {
  cfg_.poll = std::chrono::milliseconds(s.number("events_poll_ms"));
}

void events_component::start() {
  handle_ = actors::spawn_events(rt_.system(), db_.get(), cfg_);
}

void events_component::stop() {
  end(handle_);
}

// -- store ---------------------------------------------------------------------------

store_component::store_component(const base::settings& s, const runtime_component& rt,
                                 const database_component& db, const events_component& events,
                                 std::shared_ptr<api::service_metrics> metrics)
    : rt_(rt), db_(db), events_(events) {
  cfg_.noderange = api::noderange_limits(s);
  cfg_.dns = api::dns_settings(s, db.home_dir());
  cfg_.commit_wait = std::chrono::microseconds(s.number("commit_wait_us"));
  cfg_.dhcp = api::dhcp_settings(s);
  cfg_.system_changes = std::make_shared<base::task_thread>();
  cfg_.hosts_file = s.text("hosts_file");
  cfg_.hosts_file_max = s.number("hosts_file_max_bytes");
  cfg_.metrics = std::move(metrics);
}

void store_component::start() {
  auto sc = cfg_;
  sc.durable = events_.durable();
  sc.events = events_.handle();
  // moved: a handle left in a copy kept here would keep the feed alive past the system's end
  handle_ = actors::spawn_store(rt_.system(), db_.get(), std::move(sc));
}

void store_component::stop() {
  end(handle_);
  cfg_.system_changes->stop(); // a makedhcp under way ends its writes and reload first
}

void store_component::metrics(metric_writer& out) const {
  const auto& s = *cfg_.metrics;
  out.counter("clusterws_store_commits_total", "Write transactions committed (one per batch)",
              static_cast<double>(s.commits.value()));
  out.counter("clusterws_store_commit_failures_total",
              "Write transactions that failed to commit (none of their writes was written)",
              static_cast<double>(s.commit_failures.value()));
  out.histogram("clusterws_store_batch_writes", "Writes per committed transaction", s.batch_writes);
  out.histogram("clusterws_store_commit_duration_seconds",
                "Time of a committed transaction, its fsync included", s.commit_seconds);
}

// -- policy --------------------------------------------------------------------------

policy_component::policy_component(const base::settings& s, const runtime_component& rt,
                                   const store_component& store,
                                   std::shared_ptr<api::service_metrics> metrics)
    : rt_(rt), store_(store) {
  cfg_.cache_ttl = std::chrono::seconds(s.number("auth_cache_seconds"));
  cfg_.backoff_after = static_cast<unsigned>(s.number("login_backoff_after"));
  cfg_.backoff_max = std::chrono::milliseconds(s.number("login_backoff_max_ms"));
  cfg_.user_backoff_after = static_cast<unsigned>(s.number("login_backoff_user_after"));
  cfg_.client_backoff_after = static_cast<unsigned>(s.number("login_backoff_client_after"));
  cfg_.metrics = std::move(metrics);
}

void policy_component::start() {
  handle_ = actors::spawn_policy(rt_.system(), store_.handle(), cfg_);
}

void policy_component::stop() {
  end(handle_);
}

void policy_component::metrics(metric_writer& out) const {
  const auto& s = *cfg_.metrics;
  out.counter("clusterws_auth_failures_total",
              "Requests whose credentials were refused (throttled guesses included)",
              static_cast<double>(s.auth_failures.value()));
  out.counter("clusterws_auth_throttled_total",
              "Password guesses refused without a check (login backoff)",
              static_cast<double>(s.auth_throttled.value()));
  out.counter("clusterws_auth_hash_checks_total", "Password hashes computed",
              static_cast<double>(s.hash_checks.value()));
  out.counter("clusterws_auth_cache_hits_total", "Passwords accepted from the cache without a hash",
              static_cast<double>(s.auth_cache_hits.value()));
  out.counter("clusterws_policy_expansions_total",
              "Noderanges expanded for policy rows with a noderange",
              static_cast<double>(s.policy_expansions.value()));
}

// -- executor ------------------------------------------------------------------------

executor_component::executor_component(const base::settings& s, const runtime_component& rt,
                                       const store_component& store, transports engines,
                                       std::shared_ptr<api::service_metrics> metrics)
    : rt_(rt), store_(store), engines_(engines) {
  cfg_.max_nodes = s.number("max_nodes_in_flight");
  cfg_.max_nodes_per_user = s.number("max_nodes_in_flight_per_user");
  cfg_.metrics = std::move(metrics);
}

void executor_component::start() {
  auto ec = cfg_;
  // the transports are the executor's: the store's reader binds a plan to them in its read
  ec.bind = std::make_shared<actors::bind_fn>(
    [drivers = engines_.drivers()](
      const store::database& d, const api::api_call& call, const api::authorization& auth,
      const store::noderange_options& opts,
      api::node_operation_ptr& out) { return api::plan(d, call, auth, opts, *drivers, out); });
  handle_ = actors::spawn_executor(rt_.system(), store_.handle(), std::move(ec));
}

void executor_component::stop() {
  end(handle_);
}

void executor_component::metrics(metric_writer& out) const {
  const auto& s = *cfg_.metrics;
  out.gauge("clusterws_fanout_nodes_in_flight", "Nodes of running fan-out calls not finished yet",
            static_cast<double>(s.nodes_in_flight.value()));
  auto& nodes
    = out.family("clusterws_fanout_nodes_total",
                 "Nodes finished by fan-out calls (nodeshell), by result", metric_type::counter);
  metric_writer::add(nodes, static_cast<double>(s.nodes_ok.value()), {{"result", "ok"}});
  metric_writer::add(nodes, static_cast<double>(s.nodes_nonzero.value()), {{"result", "nonzero"}});
  metric_writer::add(nodes, static_cast<double>(s.nodes_error.value()), {{"result", "error"}});
}

// -- jobs ----------------------------------------------------------------------------

jobs_component::jobs_component(const base::settings& s, const runtime_component& rt,
                               const database_component& db, const events_component& events,
                               const executor_component& executor)
    : rt_(rt), db_(db), events_(events), executor_(executor) {
  cfg_.output_max_bytes = s.number("job_output_max_bytes");
  cfg_.keep = std::chrono::seconds(s.number("jobs_keep_s"));
  cfg_.keep_max = s.number("jobs_keep_max");
}

void jobs_component::start() {
  auto jc = cfg_;
  jc.db = db_.get();
  // job and power events on the event stream (live only: no number, not replayed)
  jc.on_event = [events = events_.handle()](const api::job_info& job, const char* what) {
    auto a = std::make_shared<actors::activity>();
    a->type = actors::activity::kind::job;
    a->what = what;
    a->job = job;
    caf::anon_send(events, actors::publish_atom::value, actors::activity_ptr{std::move(a)});
  };
  jc.on_power = [events = events_.handle()](const std::string& node, const std::string& state) {
    auto a = std::make_shared<actors::activity>();
    a->type = actors::activity::kind::power;
    a->node = node;
    a->state = state;
    caf::anon_send(events, actors::publish_atom::value, actors::activity_ptr{std::move(a)});
  };
  handle_ = actors::spawn_jobs(rt_.system(), executor_.handle(), std::move(jc));
}

void jobs_component::stop() {
  end(handle_);
}

// -- console ------------------------------------------------------------------------

console_component::console_component(const base::settings& s, const store::home& home,
                                     const runtime_component& rt, const database_component& db,
                                     const events_component& events, const audit_component& audit)
    : rt_(rt), db_(db), events_(events), audit_(audit) {
  const auto& dir = s.text("console_log_dir");
  log_dir_ = !dir.empty()     ? std::filesystem::path{dir}
             : home.installed ? std::filesystem::path{"/var/log/consoles"}
                              : home.dir / "consoles";
  log_.dir = log_dir_;
  log_.max_bytes = s.number("console_log_max_bytes");
  log_.keep = static_cast<unsigned>(s.number("console_log_keep"));
  log_.timestamps = s.text("console_log_timestamps") == "true";
  cfg_.hold = s.text("console_hold") == "on";
  cfg_.max = s.number("console_max");
  cfg_.backoff_min = std::chrono::milliseconds(s.number("console_backoff_min_ms"));
  cfg_.backoff_max = std::chrono::milliseconds(
    std::max(s.number("console_backoff_max_ms"), s.number("console_backoff_min_ms")));
  cfg_.replay_bytes = s.number("console_replay_bytes");
  cfg_.watcher_queue_bytes = s.number("console_watcher_queue_bytes");
  cfg_.log_dir = log_dir_.string();
  cfg_.log_read_max = log_.max_bytes;
  port_ = static_cast<uint16_t>(s.number("ipmi_port"));
  keepalive_ = std::chrono::milliseconds(s.number("console_keepalive_ms"));
  limits_ = api::noderange_limits(s);
}

void console_component::start() {
  auto cfg = cfg_;
  ipmi::sol_options sol;
  sol.keepalive = keepalive_;
  cfg.io = std::make_shared<api::sol_consoles>(api::sol_consoles::config{log_, sol});
  cfg.read = [db = db_.get(), port = port_] {
    return api::read_consoles(*db, port);
  };
  cfg.expand
    = [db = db_.get(), limits = limits_](const api::api_call& call, const api::authorization& auth,
                                         std::vector<std::string>& names) {
        try {
          auto txn = db->read();
          store::cluster_view view{txn};
          return api::verified_nodes(view, call, auth, api::caller_options(limits, auth), names);
        } catch (const store::error& e) {
          return api::api_result::failure(api::from_store(e.code()), e.what());
        }
      };
  cfg.events = events_.handle();
  cfg.stats = stats_;
  cfg.on_attach
    = [events = events_.handle(), audit = &audit_](const actors::console_attach_event& e) {
        // the audit log (as every change) and the event stream (live, as jobs and power)
        if (auto* log = audit->get()) {
          http::audit_entry a;
          a.client = e.client;
          a.user = e.user;
          a.method = e.what == "attached" ? "ATTACH" : "DETACH";
          a.path = "/clusterws/nodes/" + e.node + "/console";
          a.noderange = e.node;
          a.command = "rcons mode=" + e.mode + (e.why.empty() ? "" : " (" + e.why + ")");
          a.status = 200;
          log->write(a);
        }
        auto act = std::make_shared<actors::activity>();
        act->type = actors::activity::kind::console;
        act->what = e.what;
        act->node = e.node;
        act->state = e.mode;
        act->user = e.user;
        caf::anon_send(events, actors::publish_atom::value, actors::activity_ptr{std::move(act)});
      };
  handle_ = actors::spawn_console(rt_.system(), std::move(cfg));
}

void console_component::stop() {
  end(handle_); // the actor's state (and with it the I/O: payloads deactivated) goes with it
}

void console_component::metrics(metric_writer& out) const {
  const auto& s = *stats_;
  out.gauge("clusterws_consoles_held", "Consoles open or reconnecting (console_max bounds them)",
            static_cast<double>(s.held.value()));
  out.gauge("clusterws_consoles_up", "Consoles up (characters flow)",
            static_cast<double>(s.up.value()));
  out.gauge("clusterws_consoles_failing",
            "Consoles whose last attempt failed (a wrong password, no answer) and not up since",
            static_cast<double>(s.failing.value()));
  out.gauge("clusterws_console_watchers", "Watchers attached to consoles",
            static_cast<double>(s.watchers.value()));
  out.counter("clusterws_console_bytes_total", "Console bytes received from the BMCs",
              static_cast<double>(s.bytes.value()));
  out.counter("clusterws_console_reconnects_total",
              "Consoles lost or refused, each opened again after its backoff",
              static_cast<double>(s.reconnects.value()));
  out.counter("clusterws_console_watchers_dropped_total",
              "Watchers dropped for leaving more than console_watcher_queue_bytes unacknowledged",
              static_cast<double>(s.dropped_watchers.value()));
}

// -- dispatcher ----------------------------------------------------------------------

dispatcher_component::dispatcher_component(
  const runtime_component& rt, const store_component& store, const policy_component& policy,
  const executor_component& executor, const events_component& events, const jobs_component& jobs,
  const console_component* console)
    : rt_(rt), store_(store), policy_(policy), executor_(executor), events_(events), jobs_(jobs),
      console_(console) {
  // nop
}

void dispatcher_component::start() {
  entry_ = std::make_unique<actors::dispatcher>(
    rt_.system(), store_.handle(), policy_.handle(), executor_.handle(), 2, events_.handle(),
    jobs_.handle(), console_ ? console_->handle() : actors::console_actor{});
}

void dispatcher_component::stop() {
  entry_->shutdown();
  entry_.reset();
}

// -- audit ---------------------------------------------------------------------------

audit_component::audit_component(const base::settings& s, const store::home& home)
    : limits_(audit_settings(s)) {
  check_audit(s);
  const auto& path = s.text("audit_log");
  if (path.empty()) {
    path_ = home.audit_log();
    make_dir_ = home.log_dir;
  } else if (path != "off") {
    path_ = path;
  }
}

void audit_component::start() {
  if (!make_dir_.empty()) {
    std::filesystem::create_directories(make_dir_); // /var/log/clusterws on a fresh install
  }
  log_ = std::make_unique<http::audit_log>(path_, limits_);
  api::set_audit_log_path(path_); // GET /tables/auditlog/rows reads it
}

void audit_component::stop() {
  api::set_audit_log_path({});
  log_.reset(); // (writes the summary of refusals not written yet)
}

void audit_component::reload(const base::settings& next) {
  if (path_.empty() && next.text("audit_required") == "true") {
    // (the log in use, not the file's: audit_log applies at the next restart)
    throw std::runtime_error("audit_required = true needs an audit log; audit_log is off");
  }
  limits_ = audit_settings(next);
  if (log_) {
    log_->set_limits(limits_);
  }
}

// -- https ---------------------------------------------------------------------------

https_component::https_component(const base::settings& s, const store::home& home,
                                 std::string port_file, const runtime_component& rt,
                                 const dispatcher_component& entry, const audit_component& audit,
                                 std::shared_ptr<const base::metric_registry> registry)
    : home_(home.dir.string()), port_file_(std::move(port_file)), rt_(rt), entry_(entry),
      audit_(audit), registry_(std::move(registry)) {
  cfg_.apply(s);
  cfg_.cert = home.pki() / "server-cert.pem";
  cfg_.key = home.pki() / "server-key.pem";
  // the local socket for non-root tools: the default path may be out of reach (a daemon
  // that is not root), a configured one must work
  const auto& local = s.text("local_socket");
  cfg_.local_socket = local == "off"  ? std::filesystem::path{}
                      : local.empty() ? home.local_socket()
                                      : std::filesystem::path{local};
  cfg_.local_socket_required = !local.empty() && local != "off";
}

void https_component::start() {
  srv_ = std::make_unique<http::server>(cfg_, rt_.contexts(), entry_.get(), audit_.get(),
                                        http::metrics_sources{registry_});
  srv_->on_reload(on_reload_);
  http::tcp::endpoint ep;
  try {
    ep = srv_->start();
  } catch (...) {
    // a start that failed is not stopped by the list: the server goes now, while the io
    // threads it stops on still run (later, its destructor would wait for them forever)
    srv_.reset();
    throw;
  }
  srv_->handle_signals();
  url_ = "https://"
         + (ep.address().is_v6() ? "[" + ep.address().to_string() + "]" : ep.address().to_string())
         + ':' + std::to_string(ep.port()) + "/clusterws";
  base::log(base::log_level::notice, "listening on " + url_ + " (home " + home_ + ")");
  if (!port_file_.empty()) {
    std::ofstream{port_file_ + ".tmp"} << ep.port() << '\n';
    std::filesystem::rename(port_file_ + ".tmp", port_file_); // readers never see a partial file
  }
}

void https_component::run() {
  srv_->run();
}

void https_component::stop() {
  srv_.reset(); // (stops it first if no signal did: a start that failed later on)
}

// -- systemd -------------------------------------------------------------------------

systemd_component::systemd_component(https_component& https, const std::atomic<bool>& reopening)
    : https_(https), reopening_(reopening) {
  // nop
}

void systemd_component::start() {
  notifier_ = std::make_shared<systemd_notifier>();
  https_.server().on_stop([n = notifier_, &again = reopening_] {
    if (again) {
      n->reloading();
    } else {
      n->stopping();
    }
  });
  notifier_->start_watchdog(https_.server().main_context());
  notifier_->ready("listening on " + https_.url());
}

void systemd_component::stop() {
  notifier_.reset();
}

} // namespace cws::daemon
