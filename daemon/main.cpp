// clusterwsd: the HTTPS REST service (spec/interface.md) on a CAF actor system. The
// composition root: reads the settings, builds every configuration struct from them, and
// wires the store, policy, executor and dispatchers to the HTTP server.

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/send.hpp>

#include <fstream>
#include <iostream>
#include <sys/resource.h>
#include <thread>

#include "actors/dispatcher.hpp"
#include "actors/events_actor.hpp"
#include "actors/executor_actor.hpp"
#include "actors/policy_actor.hpp"
#include "actors/store_actor.hpp"
#include "actors/type_ids.hpp"
#include "api/settings.hpp"
#include "base/args.hpp"
#include "base/log.hpp"
#include "daemon/systemd.hpp"
#include "http/io_scheduler.hpp"
#include "http/server.hpp"
#include "ipmi/engine.hpp"
#include "store/home.hpp"
#include "virt/hypervisors.hpp"

namespace {

using namespace cws;

constexpr const char* usage
  = "Usage: clusterwsd [--home DIR] [--listen ADDR:PORT] [--io-threads N] [--port-file FILE]\n"
    "       clusterwsd {-h | --help | -v | --version}\n"
    "Serves the clusterws REST API over HTTPS at /clusterws (and /xcatws).\n"
    "Settings come from /etc/clusterws/clusterws.conf (<home>/clusterws.conf with --home\n"
    "or $CLUSTERWS_HOME); the options override them.\n"
    "  --home DIR        state directory with everything under it (default /var/lib/clusterws)\n"
    "  --listen ADDR:PORT  address to listen on (setting listen)\n"
    "  --io-threads N    threads running TLS, HTTP and the actors (setting io_threads)\n"
    "  --port-file FILE  write the bound port to FILE once listening\n"
    "  -v, --version     print the version\n"
    "  -h, --help        this text\n";

/// Thousands of SSH connections and clients need descriptors: take the hard limit.
void raise_file_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

actors::policy_config policy_settings(const base::settings& s) {
  actors::policy_config pc;
  pc.cache_ttl = std::chrono::seconds(s.number("auth_cache_seconds"));
  pc.backoff_after = static_cast<unsigned>(s.number("login_backoff_after"));
  pc.backoff_max = std::chrono::milliseconds(s.number("login_backoff_max_ms"));
  pc.user_backoff_after = static_cast<unsigned>(s.number("login_backoff_user_after"));
  pc.client_backoff_after = static_cast<unsigned>(s.number("login_backoff_client_after"));
  return pc;
}

http::audit_limits audit_settings(const base::settings& s) {
  http::audit_limits al;
  al.max_field = s.number("audit_field_max");
  al.summary_period = std::chrono::seconds(s.number("audit_summary_seconds"));
  al.max_bytes = s.number("audit_log_max_bytes");
  al.required = s.text("audit_required") == "true";
  return al;
}

/// A refused start: one error line (the journal's, under systemd) and exit status 1.
int refuse_start(const std::string& why) {
  base::log(base::log_level::error, "not started: " + why);
  return 1;
}

/// The settings of the home's configuration file with the command line's overrides.
/// @throws std::invalid_argument naming the file, line and key of a bad setting.
base::settings load_settings(const base::parsed_args& args, const store::home& home) {
  auto settings = api::load_settings(home.config());
  if (args.values.count("listen") > 0) {
    settings.set("listen", args.value("listen"), "--listen");
  }
  if (args.values.count("io-threads") > 0) {
    settings.set("io_threads", args.value("io-threads"), "--io-threads");
  }
  return settings;
}

/// SIGHUP: reads the configuration file again. `log_level` applies at once; any other change
/// is reported and applies at the next restart (limits, threads and addresses are fixed
/// while requests run on them). A file that is no longer valid changes nothing.
void reload_settings(const base::parsed_args& args, const store::home& home,
                     base::settings& running) {
  try {
    auto next = load_settings(args, home);
    std::string later;
    for (auto key : running.changed(next)) {
      if (key == "log_level") {
        // said under the old level or, if that one hides notices, under the new one
        auto said = base::log_enabled(base::log_level::notice);
        auto note = "log_level is now " + next.text("log_level");
        base::log(base::log_level::notice, note);
        base::set_log_level(*base::parse_log_level(next.text("log_level")));
        running.set("log_level", next.text("log_level"));
        if (!said) {
          base::log(base::log_level::notice, note);
        }
      } else {
        later += (later.empty() ? "" : ", ") + std::string{key};
      }
    }
    if (!later.empty()) {
      base::log(base::log_level::notice,
                "changed in " + home.config().string() + ", applied at the next restart: " + later);
    }
  } catch (const std::exception& e) {
    base::log(base::log_level::error,
              "configuration not reloaded (the settings in use stay): " + std::string{e.what()});
  }
}

int serve(const base::parsed_args& args) {
  auto home = store::home::resolve(args.value("home"));
  home.require_initialized();
  auto settings = load_settings(args, home);
  base::set_log_level(*base::parse_log_level(settings.text("log_level")));
  for (const auto* s : settings.retired_given()) {
    base::log(base::log_level::warning,
              home.config().string() + ": setting '" + std::string{s->key}
                + "' is no longer used and is ignored: " + std::string{s->doc});
  }
  http::server_config cfg;
  cfg.apply(settings);
  cfg.cert = home.pki() / "server-cert.pem";
  cfg.key = home.pki() / "server-key.pem";
  // the local socket for non-root tools: the default path may be out of reach (a daemon
  // that is not root), a configured one must work
  const auto& local = settings.text("local_socket");
  cfg.local_socket = local == "off"  ? std::filesystem::path{}
                     : local.empty() ? home.local_socket()
                                     : std::filesystem::path{local};
  cfg.local_socket_required = !local.empty() && local != "off";

  store::lmdb_options dbo;
  dbo.defer_meta_sync = true; // the writer answers after its own sync (actors/store_actor.cpp)
  auto db = std::make_shared<store::database>(home.db(), dbo);
  // in the database, so the tools' commits drop old change sets by the same bound
  auto keep = std::to_string(settings.number("change_log_keep"));
  if (db->read().meta(store::write_txn::changes_kept_key) != keep) {
    db->write([&](store::write_txn& t) { t.set_meta(store::write_txn::changes_kept_key, keep); });
  }
  raise_file_limit();
  auto drivers = std::make_shared<api::drivers>();
  drivers->shell = api::shell_settings(settings, home.dir);
  drivers->copy = api::copy_settings(settings, home.dir);
  // before the actor system: libssh2's global init is not thread-safe
  drivers->ssh = std::make_shared<ssh::engine>(api::engine_settings(settings, home.dir));
  drivers->hardware = api::hardware_settings(settings);
  drivers->ipmi = std::make_shared<ipmi::engine>(api::ipmi_settings(settings));
  drivers->virt = std::make_shared<virt::hypervisors>(api::virt_settings(settings));
  drivers->nodestat = api::nodestat_settings(settings);
  drivers->probe = std::make_shared<probe::prober>();
  actors::store_config sc;
  sc.noderange = api::noderange_limits(settings);
  sc.commit_wait = std::chrono::microseconds(settings.number("commit_wait_us"));
  sc.drivers = drivers;
  // one set of counters for every actor, read by the metrics page
  auto metrics = std::make_shared<api::service_metrics>();
  sc.metrics = metrics;
  auto pc = policy_settings(settings);
  pc.metrics = metrics;
  actors::executor_config ec;
  ec.metrics = metrics;
  ec.max_nodes = settings.number("max_nodes_in_flight");
  ec.max_nodes_per_user = settings.number("max_nodes_in_flight_per_user");

  caf::actor_system_config acfg;
  // the io threads are the actors' workers too: a request stays on one thread
  http::io_scheduler::install(acfg, static_cast<size_t>(settings.number("io_threads")));
  actors::add_wire_types(acfg); // the messages that may leave the process (api/wire.hpp)
  caf::actor_system sys{acfg};
  actors::events_config evc;
  evc.poll = std::chrono::milliseconds(settings.number("events_poll_ms"));
  auto events = actors::spawn_events(sys, db, evc);
  sc.durable = evc.durable;
  sc.events = events;
  // moved: a handle left in `sc` (older than the actor system) would keep the feed alive
  // past the system's end if the start fails below, and the end would wait for it forever
  auto st = actors::spawn_store(sys, db, std::move(sc));
  auto pol = actors::spawn_policy(sys, st, pc);
  auto ex = actors::spawn_executor(sys, st, ec);
  actors::dispatcher entry{sys, st, pol, ex, 2, events};
  const auto& audit_path = settings.text("audit_log");
  if (audit_path == "off" && settings.text("audit_required") == "true") {
    throw std::runtime_error("audit_required = true needs an audit log; audit_log is off");
  }
  if (audit_path.empty()) {
    std::filesystem::create_directories(home.log_dir); // /var/log/clusterws on a fresh install
  }
  http::audit_log audit{audit_path == "off"  ? std::filesystem::path{}
                        : audit_path.empty() ? home.audit_log()
                                             : std::filesystem::path{audit_path},
                        audit_settings(settings)};
  {
    http::server srv{
      cfg, http::io_scheduler::of(sys)->contexts(), entry, &audit, {metrics, db, drivers->ssh}};
    auto ep = srv.start();
    srv.handle_signals();
    auto url
      = "https://"
        + (ep.address().is_v6() ? "[" + ep.address().to_string() + "]" : ep.address().to_string())
        + ':' + std::to_string(ep.port()) + "/clusterws";
    base::log(base::log_level::notice, "listening on " + url + " (home " + home.dir.string() + ")");
    if (auto pf = args.value("port-file"); !pf.empty()) {
      std::ofstream{pf + ".tmp"} << ep.port() << '\n';
      std::filesystem::rename(pf + ".tmp", pf); // readers never see a partial file
    }
    cws::daemon::systemd_notifier systemd; // after srv: its timer goes before srv's io_context
    srv.on_stop([&systemd] { systemd.stopping(); });
    srv.on_reload([&] { reload_settings(args, home, settings); });
    systemd.start_watchdog(srv.main_context());
    systemd.ready("listening on " + url);
    srv.run();
  }
  entry.shutdown();
  caf::anon_send_exit(ex, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(pol, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(st, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(events, caf::exit_reason::user_shutdown);
  base::log(base::log_level::notice, "stopped");
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    auto args
      = base::parse_args(std::vector<std::string>(argv + 1, argv + argc),
                         {"", "v", {"home", "listen", "io-threads", "port-file"}, {"version"}, {}});
    if (args.has("v") || args.has("version")) {
      std::cout << "clusterwsd - clusterws Version " << CLUSTERWS_VERSION << '\n';
      return 0;
    }
    if (args.has("help")) {
      std::cout << usage;
      return 0;
    }
    return serve(args);
  } catch (const std::exception& e) {
    // bad settings, an unusable certificate or address, a database that does not open
    return refuse_start(e.what());
  }
}
