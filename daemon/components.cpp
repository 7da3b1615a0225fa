#include "daemon/components.hpp"

#include <caf/io/middleman.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/send.hpp>

#include <fstream>
#include <stdexcept>
#include <unistd.h>

#include "actors/type_ids.hpp"
#include "api/audit_table.hpp"
#include "api/console.hpp"
#include "api/planner.hpp"
#include "api/settings.hpp"
#include "api/sn_seal.hpp"
#include "api/sol_consoles.hpp"
#include "api/targets.hpp"
#include "api/xnba_mirror.hpp"
#include "base/published_file.hpp"
#include "base/text.hpp"
#include "daemon/link_bytes.hpp"
#include "http/io_scheduler.hpp"
#include "store/cluster_view.hpp"
#include "store/definitions.hpp"
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
  if (link_) {
    // TLS with this side's certificate and the other side's CA only: with all five openssl
    // settings empty CAF would fall back to anonymous TLS (docs/service-nodes.md)
    cfg_->load<caf::io::middleman>();
    cfg_->load<caf::openssl::manager>();
    cfg_->openssl_certificate = link_->certificate.string();
    cfg_->openssl_key = link_->key.string();
    cfg_->openssl_cafile = link_->cafile.string();
    // BASP's heartbeats, on both sides: a stopped peer is noticed (down_msg) after dead_after
    cfg_->set("middleman.heartbeat-interval", caf::timespan{heartbeat_});
    cfg_->set("middleman.connection-timeout", caf::timespan{dead_after_});
  }
  sys_ = std::make_unique<caf::actor_system>(*cfg_);
}

void runtime_component::link(const link_files& files, std::chrono::milliseconds heartbeat,
                             std::chrono::milliseconds dead_after) {
  for (const auto* f : {&files.certificate, &files.key, &files.cafile}) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(*f, ec)) {
      throw std::runtime_error("no TLS file " + f->string()
                               + " for the service-node link (never anonymous TLS)");
    }
  }
  link_ = files;
  heartbeat_ = heartbeat;
  dead_after_ = dead_after;
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

// -- provisioning re-apply -----------------------------------------------------------

reapply_component::reapply_component(const base::settings& s, const runtime_component& rt,
                                     const database_component& db, const events_component& events,
                                     const store_component& store)
    : rt_(rt), events_(events), store_(store) {
  cfg_.reapply = s.text("provision_reapply") == "on";
  auto mirror
    = api::xnba_mirror_settings(s.text("xnba_mirror"), s.text("tftp_root"), s.text("boot_listen"));
  on_ = cfg_.reapply || mirror.on;
  cfg_.delay = std::chrono::milliseconds(s.number("provision_reapply_delay_ms"));
  if (mirror.on) {
    // the mirror's files are written on a store reader (file I/O never on an actor thread),
    // from that reader's snapshot: one pass per burst
    // (the components outlive the actors: the list stops them all before it is destroyed)
    cfg_.mirror = [store = &store_, mirror](std::vector<std::string> nodes) {
      auto fn = std::make_shared<actors::read_fn>(
        [mirror, nodes = std::move(nodes)](const store::database& db) {
          std::string message;
          try {
            if (api::apply_xnba_mirror(db.read(), nodes, mirror, message)) {
              base::log(base::log_level::warning, "xnba mirror: " + message);
            }
          } catch (const std::exception& e) {
            base::log(base::log_level::warning, std::string{"xnba mirror: "} + e.what());
          }
        });
      caf::anon_send(store->handle(), actors::run_atom::value, actors::read_fn_ptr{fn});
    };
  }
  // DNS is configured once makedns has run: it keeps what it sent in this file
  cfg_.dns_configured = [records = api::dns_settings(s, db.home_dir()).state_file] {
    std::error_code ec;
    return std::filesystem::exists(records, ec);
  };
}

void reapply_component::start() {
  if (on_ && events_.handle()) {
    handle_ = actors::spawn_reapply(rt_.system(), events_.handle(), store_.handle(), cfg_);
  }
}

void reapply_component::stop() {
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

// -- boot listener -------------------------------------------------------------------

boot_component::boot_component(const base::settings& s, const store::home& home,
                               const runtime_component& rt, const database_component& db,
                               const store_component& store)
    : key_file_(home.dir / api::install_token_key_file), rt_(rt), db_(db), store_(store) {
  const auto& listen = s.text("boot_listen");
  on_ = !listen.empty();
  if (on_) {
    try {
      cfg_.endpoint = http::parse_endpoint(listen);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string{"boot_listen: "} + e.what());
    }
  }
  if (const auto& x = s.text("xcat_status_listen"); !x.empty()) {
    if (!on_) {
      throw std::invalid_argument("xcat_status_listen needs boot_listen");
    }
    try {
      cfg_.xcat_status = http::parse_endpoint(x);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string{"xcat_status_listen: "} + e.what());
    }
  }
  cfg_.max_connections = s.number("boot_max_connections");
  cfg_.max_header_bytes = s.number("boot_max_header_bytes");
  cfg_.idle_timeout = std::chrono::seconds(s.number("boot_idle_timeout"));
  cfg_.max_streams = s.number("boot_max_streams");
  cfg_.batch = std::chrono::milliseconds(s.number("boot_status_batch_ms"));
  cfg_.bad_token_limit = static_cast<unsigned>(s.number("install_bad_token_limit"));
  cfg_.deadlines.kernel = static_cast<long>(s.number("install_deadline_kernel"));
  cfg_.deadlines.installing = static_cast<long>(s.number("install_deadline_installing"));
  cfg_.deadlines.installed = static_cast<long>(s.number("install_deadline_installed"));
  cfg_.deadline_check = std::chrono::seconds(s.number("install_deadline_check_s"));
  cfg_.chain.template_dir = s.text("install_template_dir");
  cfg_.chain.limits = api::template_settings(s);
  cfg_.chain.templates = std::make_shared<api::template_cache>(api::template_cache_settings(s));
  cfg_.chain.tftp_root = s.text("tftp_root");
}

void boot_component::start() {
  if (!on_) {
    return;
  }
  auto key = api::install_token_key::load_or_create(key_file_);
  listener_ = std::make_unique<http::boot_listener>(rt_.contexts(), cfg_, store_.handle(),
                                                    std::move(key), db_.get());
  auto ep = listener_->start();
  auto addr
    = ep.address().is_v6() ? "[" + ep.address().to_string() + "]" : ep.address().to_string();
  base::log(base::log_level::notice,
            "boot listener on http://" + addr + ':' + std::to_string(ep.port()) + "/boot/");
  if (auto x = listener_->xcat_status_endpoint()) {
    base::log(base::log_level::notice,
              "xCAT status listener (port-3002 protocol, by node address) on "
                + x->address().to_string() + ':' + std::to_string(x->port()));
  }
}

void boot_component::stop() {
  if (listener_) {
    listener_->stop();
    listener_.reset();
  }
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
                                       const store_component* store, transports engines,
                                       std::shared_ptr<api::service_metrics> metrics,
                                       const sn_listener_component* sns)
    : rt_(rt), store_(store), engines_(engines), sns_(sns),
      delegation_(api::delegation_settings_from(s)),
      seal_ttl_(std::chrono::milliseconds(s.number("sn_request_ttl_ms"))) {
  cfg_.max_nodes = s.number("max_nodes_in_flight");
  cfg_.max_nodes_per_user = s.number("max_nodes_in_flight_per_user");
  cfg_.metrics = std::move(metrics);
}

void executor_component::start() {
  auto ec = cfg_;
  auto drivers = engines_.drivers();
  // rinstall's nodeset step goes through the store's writer, as PUT /bootstate does (one
  // write, each node on its own; the change feed and the audit see it)
  if (store_ != nullptr) // (a service node has no store and runs no rinstall)
    drivers->boot_states = std::make_shared<const api::boot_state_writer>(
      [store = store_->handle()](std::vector<std::string> nodes, api::nodeset_action action,
                                 api::boot_state_done done) {
        auto call = std::make_shared<api::api_call>();
        call->op = api::operation::nodeset;
        call->type = store::object_type::node;
        call->command = api::nodeset_word(action);
        call->detail = true;     // each node on its own (api/operations.cpp)
        api::authorization auth; // authorized as the rinstall call that runs it
        auth.user = "root";
        auth.nodes = std::make_shared<const std::vector<std::string>>(nodes);
        auto on_result
          = std::make_shared<actors::done_fn>([nodes, done = std::move(done)](api::api_result r) {
              if (r.ok() && r.nodes.size() == nodes.size()) {
                done(std::move(r.nodes));
                return;
              }
              auto why = r.messages.empty() ? std::string{"nodeset failed"} : r.messages.front();
              std::vector<base::node_result> failed;
              for (const auto& n : nodes) {
                failed.push_back(base::node_result::failure(n, base::node_errc::boot_state, why));
              }
              done(std::move(failed));
            });
        caf::anon_send(store, actors::run_atom::value, api::api_call_ptr{std::move(call)},
                       std::move(auth), std::move(on_result));
      });
  // the transports are the executor's: the store's reader binds a plan to them in its read;
  // with service nodes, a call whose nodes name them is delegated (actors/delegation_actor)
  actors::delegation_config dc;
  dc.settings = delegation_;
  dc.seal_ttl = seal_ttl_;
  if (sns_ != nullptr) {
    dc.roster = sns_->roster();
    dc.head = sns_->head_names();
    dc.board = sns_->board();
  }
  ec.bind = actors::delegating_bind(rt_.system(), std::move(drivers), std::move(dc));
  handle_ = actors::spawn_executor(rt_.system(), store_ ? store_->handle() : actors::store_actor{},
                                   std::move(ec));
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
                                     const events_component& events, const audit_component& audit,
                                     const store_component& store)
    : rt_(rt), db_(db), events_(events), audit_(audit), store_(store) {
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
  kvm_.keepalive_interval_s = static_cast<int>(s.number("console_kvm_keepalive_s"));
  kvm_.max_openers = s.number("console_kvm_openers");
  limits_ = api::noderange_limits(s);
}

void console_component::start() {
  auto cfg = cfg_;
  ipmi::sol_options sol;
  sol.keepalive = keepalive_;
  cfg.io = std::make_shared<api::sol_consoles>(api::sol_consoles::config{log_, sol, kvm_});
  cfg.read = [db = db_.get(), port = port_] {
    return api::read_consoles(*db, port);
  };
  cfg.read_nodes = [db = db_.get(), port = port_](const std::vector<std::string>& nodes) {
    return api::read_consoles(*db, port, nodes);
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
  cfg.persist = [store = store_.handle()](std::vector<std::string> nodes, bool held,
                                          std::function<void(api::api_result)> done) {
    // in the store's group commit, as every write of the daemon
    auto fn
      = std::make_shared<actors::write_fn>([nodes = std::move(nodes), held](store::write_txn& t) {
          store::change_request req;
          req.type = store::object_type::node;
          for (const auto& n : nodes) {
            if (t.exists(store::object_type::node, n)) { // (chdef would make a node removed since)
              req.names.push_back(n);
            }
          }
          req.attrs = {{"consoleenabled", held ? "1" : api::console_not_held}};
          if (req.names.empty()) {
            return api::api_result{};
          }
          try {
            store::change_objects(t, req);
            return api::api_result{};
          } catch (const store::rejected& e) {
            return api::api_result::failure(api::errc::failed, e.what());
          } catch (const store::error& e) {
            return api::api_result::failure(api::from_store(e.code()), e.what());
          }
        });
    caf::anon_send(store, actors::run_atom::value, actors::write_fn_ptr{fn},
                   std::make_shared<actors::done_fn>(std::move(done)));
  };
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

// -- service nodes --------------------------------------------------------------------

namespace {

/// The service-node link's heartbeat settings, checked together.
std::pair<std::chrono::milliseconds, std::chrono::milliseconds> sn_times(const base::settings& s) {
  auto hb = std::chrono::milliseconds(s.number("sn_heartbeat_ms"));
  auto dead = std::chrono::milliseconds(s.number("sn_dead_after_ms"));
  if (dead <= 2 * hb) {
    throw std::runtime_error("sn_dead_after_ms (" + std::to_string(dead.count())
                             + ") must be more than twice sn_heartbeat_ms ("
                             + std::to_string(hb.count()) + ")");
  }
  return {hb, dead};
}

/// ADDR:PORT (`[v6]:PORT`) split; @throws std::runtime_error naming `key`.
std::pair<std::string, uint16_t> host_port(const std::string& text, const char* key) {
  auto colon = text.rfind(':');
  unsigned long long port = 0;
  if (colon == std::string::npos || !base::parse_unsigned(text.substr(colon + 1), port)
      || port > 65535 || colon == 0) {
    throw std::runtime_error(std::string{key} + " must be ADDR:PORT, not '" + text + "'");
  }
  auto host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return {host, static_cast<uint16_t>(port)};
}

std::string host_name() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

} // namespace

sn_listener_component::sn_listener_component(const base::settings& s, const store::home& home,
                                             runtime_component& rt, const events_component& events)
    : listen_(s.text("sn_listen")), dir_(home.pki() / "sn"), rt_(rt), events_(events) {
  if (listen_.empty()) {
    return;
  }
  host_port(listen_, "sn_listen");
  auto [hb, dead] = sn_times(s);
  cfg_.heartbeat = hb;
  cfg_.dead_after = dead;
  cfg_.secrets = dir_ / "secrets";
  cfg_.head = host_name();
  for (const char* f : {"head-cert.pem", "head-key.pem", "sn-ca.pem"}) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(dir_ / f, ec)) {
      throw std::runtime_error("sn_listen is set but " + (dir_ / f).string()
                               + " is missing: run clusterctl sn init");
    }
  }
  rt.link({dir_ / "head-cert.pem", dir_ / "head-key.pem", dir_ / "sn-ca.pem"}, hb, dead);
  count_links_issued_by(dir_ / "sn-ca.pem"); // (link bytes: the service nodes' certificates)
}

void sn_listener_component::start() {
  if (listen_.empty()) {
    return;
  }
  auto cfg = cfg_;
  cfg.on_event = [events = events_.handle()](const std::string& name, const char* what,
                                             const std::string& why) {
    auto a = std::make_shared<actors::activity>();
    a->type = actors::activity::kind::servicenode;
    a->what = what;
    a->node = name;
    a->state = why;
    caf::anon_send(events, actors::publish_atom::value, actors::activity_ptr{std::move(a)});
  };
  handle_ = actors::spawn_sn_registry(rt_.system(), std::move(cfg));
  auto [host, port] = host_port(listen_, "sn_listen");
  // publishing binds and returns at once; the head never dials a service node
  auto bound = caf::openssl::publish(handle_, port, host.c_str(), true);
  if (!bound) {
    auto why = rt_.system().render(bound.error());
    end(handle_);
    throw std::runtime_error("cannot listen for service nodes on " + listen_ + ": " + why);
  }
  // (clusterctl sn add reads the port when sn_listen's is 0)
  base::publish_file(dir_ / "port", std::to_string(*bound) + "\n");
  base::log(base::log_level::notice,
            "listening for service nodes on " + host + ":" + std::to_string(*bound) + " (TLS)");
}

std::vector<std::string> sn_listener_component::head_names() const {
  std::vector<std::string> out{host_name()};
  if (!listen_.empty()) {
    out.push_back(host_port(listen_, "sn_listen").first);
  }
  return out;
}

void sn_listener_component::stop() {
  end(handle_);
}

void sn_listener_component::metrics(metric_writer& out) const {
  if (listen_.empty()) {
    return;
  }
  auto list = cfg_.board->snapshot();
  auto& reg = out.family("clusterws_service_node_registered",
                         "1 while the service node is registered with this head, 0 after it left",
                         metric_type::gauge);
  auto& last
    = out.family("clusterws_service_node_last_heartbeat_seconds",
                 "When the service node's last heartbeat arrived (Unix time)", metric_type::gauge);
  auto& load
    = out.family("clusterws_service_node_load",
                 "Nodes in flight on the service node (its last heartbeat)", metric_type::gauge);
  auto& beats = out.family("clusterws_service_node_heartbeats_total",
                           "Heartbeats received from the service node since it registered",
                           metric_type::counter);
  for (const auto& sn : list) {
    metric_writer::add(reg, sn.registered ? 1 : 0, {{"name", sn.name}});
    metric_writer::add(last, static_cast<double>(sn.last_heartbeat_ms) / 1000.0,
                       {{"name", sn.name}});
    metric_writer::add(load, sn.load, {{"name", sn.name}});
    metric_writer::add(beats, static_cast<double>(sn.heartbeats), {{"name", sn.name}});
  }
  auto traffic = cfg_.board->traffic();
  auto& flight = out.family("clusterws_service_node_nodes_in_flight",
                            "Nodes of the shares sent to the service node that have no result yet",
                            metric_type::gauge);
  auto& shares
    = out.family("clusterws_service_node_shares_total",
                 "Shares of delegated calls sent to the service node", metric_type::counter);
  auto& batches = out.family("clusterws_service_node_batches_total",
                             "Result batches taken from the service node", metric_type::counter);
  for (const auto& t : traffic) {
    metric_writer::add(flight, static_cast<double>(t.in_flight), {{"name", t.name}});
    metric_writer::add(shares, static_cast<double>(t.shares), {{"name", t.name}});
    metric_writer::add(batches, static_cast<double>(t.batches), {{"name", t.name}});
  }
  auto& bytes = out.family("clusterws_service_node_link_bytes_total",
                           "Bytes on the TLS link with the service node (payload, both ways)",
                           metric_type::counter);
  for (const auto& l : link_bytes()) {
    metric_writer::add(bytes, static_cast<double>(l.sent),
                       {{"name", l.name}, {"direction", "sent"}});
    metric_writer::add(bytes, static_cast<double>(l.received),
                       {{"name", l.name}, {"direction", "received"}});
  }
  auto& events
    = out.family("clusterws_service_node_events_total",
                 "Service-node registrations, refusals and departures", metric_type::counter);
  metric_writer::add(events, static_cast<double>(cfg_.board->joins()), {{"event", "joined"}});
  metric_writer::add(events, static_cast<double>(cfg_.board->refusals()), {{"event", "refused"}});
  metric_writer::add(events, static_cast<double>(cfg_.board->departures()), {{"event", "left"}});
}

sn_agent_component::sn_agent_component(const base::settings& s, const store::home& home,
                                       runtime_component& rt,
                                       std::shared_ptr<api::service_metrics> load)
    : rt_(rt) {
  cfg_.name = s.text("sn_name");
  if (!api::valid_sn_name(cfg_.name)) {
    throw std::runtime_error("sn_name must name this service node (1 to 64 of A-Z a-z 0-9 . _ "
                             "-), not '"
                             + cfg_.name + "'");
  }
  auto [host, port] = host_port(s.text("sn_head"), "sn_head");
  if (port == 0) {
    throw std::runtime_error("sn_head needs the head's port, not 0");
  }
  cfg_.host = host;
  cfg_.port = port;
  auto [hb, dead] = sn_times(s);
  cfg_.heartbeat = hb;
  cfg_.dead_after = dead;
  cfg_.redial_min = std::chrono::milliseconds(s.number("sn_redial_min_ms"));
  cfg_.redial_max = std::chrono::milliseconds(s.number("sn_redial_max_ms"));
  cfg_.connect_timeout = std::chrono::milliseconds(s.number("sn_connect_timeout_ms"));
  if (cfg_.redial_max < cfg_.redial_min) {
    throw std::runtime_error("sn_redial_max_ms is less than sn_redial_min_ms");
  }
  cfg_.version = api::sn_protocol_version;
  seen_ = std::make_shared<api::sn_replay_cache>(s.number("sn_replay_cache"));
  auto dir = home.pki();
  std::string secret;
  bool exists = false;
  if (base::read_file(dir / "sn-secret", 1024, secret, &exists) || !exists) {
    throw std::runtime_error("no secret in " + (dir / "sn-secret").string()
                             + " (clusterctl sn add on the head writes this home)");
  }
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) {
    secret.pop_back();
  }
  if (auto why = api::check_sn_secret(secret); !why.empty()) {
    throw std::runtime_error((dir / "sn-secret").string() + ": " + why);
  }
  cfg_.secret = std::move(secret);
  cfg_.load = [load] {
    return static_cast<uint32_t>(load->nodes_in_flight.value());
  };
  rt.link({dir / "sn-cert.pem", dir / "sn-key.pem", dir / "head-ca.pem"}, hb, dead);
  count_links_issued_by(dir / "head-ca.pem"); // (link bytes: the head's certificate)
}

void sn_agent_component::start() {
  // nop: serve() dials, once the executor it registers runs
}

void sn_agent_component::serve(actors::sn_executor_actor executor, std::function<uint32_t()> load) {
  auto cfg = cfg_;
  cfg.executor = std::move(executor);
  if (load) {
    cfg.load = std::move(load);
  }
  handle_ = actors::spawn_sn_agent(rt_.system(), std::move(cfg));
}

void sn_agent_component::stop() {
  end(handle_);
}

void sn_agent_component::metrics(metric_writer& out) const {
  const auto& b = *cfg_.board;
  out.gauge("clusterws_head_registered", "1 while this service node is registered with its head",
            b.registered ? 1 : 0);
  auto& n = out.family("clusterws_head_link_total", "Dials of the head, registrations, heartbeats",
                       metric_type::counter);
  metric_writer::add(n, static_cast<double>(b.dials.load()), {{"event", "dial"}});
  metric_writer::add(n, static_cast<double>(b.registrations.load()), {{"event", "registered"}});
  metric_writer::add(n, static_cast<double>(b.heartbeats_sent.load()),
                     {{"event", "heartbeat_sent"}});
  metric_writer::add(n, static_cast<double>(b.heartbeats_received.load()),
                     {{"event", "heartbeat_received"}});
  auto& bytes
    = out.family("clusterws_head_link_bytes_total",
                 "Bytes on the TLS link with the head (payload, both ways)", metric_type::counter);
  for (const auto& l : link_bytes()) {
    metric_writer::add(bytes, static_cast<double>(l.sent), {{"direction", "sent"}});
    metric_writer::add(bytes, static_cast<double>(l.received), {{"direction", "received"}});
  }
}

} // namespace cws::daemon
