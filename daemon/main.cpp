// clusterwsd: the HTTPS REST service (spec/interface.md) on a CAF actor system. The
// composition root: reads the settings and lists the daemon's components (daemon/component.hpp)
// in start order: the log, the database, the engines, the actors, the audit log, the server.

#include <atomic>
#include <csignal>
#include <iostream>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api/service_metrics.hpp"
#include "api/settings.hpp"
#include "base/args.hpp"
#include "base/log.hpp"
#include "base/metric_registry.hpp"
#include "daemon/component.hpp"
#include "daemon/components.hpp"
#include "daemon/service_node.hpp"
#include "daemon/transports.hpp"
#include "store/home.hpp"

namespace {

using namespace cws;

constexpr const char* usage
  = "Usage: clusterwsd [--home DIR] [--listen ADDR:PORT] [--io-threads N] [--port-file FILE]\n"
    "       clusterwsd --service-node --home DIR\n"
    "       clusterwsd {-h | --help | -v | --version}\n"
    "Serves the clusterws REST API over HTTPS at /clusterws (and /xcatws).\n"
    "Settings come from /etc/clusterws/clusterws.conf (<home>/clusterws.conf with --home\n"
    "or $CLUSTERWS_HOME); the options override them.\n"
    "  --home DIR        state directory with everything under it (default /var/lib/clusterws)\n"
    "  --listen ADDR:PORT  address to listen on (setting listen)\n"
    "  --io-threads N    threads running TLS, HTTP and the actors (setting io_threads)\n"
    "  --port-file FILE  write the bound port to FILE once listening\n"
    "  --service-node    run as a service node: the engines and an executor, no HTTP, store\n"
    "                    or policy; dials the head (sn_head) from the home clusterctl sn add\n"
    "                    wrote (docs/service-nodes.md)\n"
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

/// SIGHUP: reads the configuration file again. Each component applies the settings it
/// reloads (docs/configuration.md, "Reloading"); any other change is reported and applies at
/// the next restart (limits, threads and addresses are fixed while requests run on them). A
/// file that is no longer valid changes nothing.
void reload_settings(const base::parsed_args& args, const store::home& home,
                     base::settings& running, daemon::component_list& parts) {
  try {
    auto next = load_settings(args, home);
    auto done = parts.reload(running, next);
    auto list = [](const std::vector<std::string_view>& keys) {
      std::string out;
      for (auto key : keys) {
        out += (out.empty() ? "" : ", ") + std::string{key};
      }
      return out;
    };
    if (!done.applied.empty()) {
      base::log(base::log_level::notice, "settings reloaded: " + list(done.applied));
    }
    if (!done.later.empty()) {
      base::log(base::log_level::notice, "changed in " + home.config().string()
                                           + ", applied at the next restart: " + list(done.later));
    }
  } catch (const std::exception& e) {
    base::log(base::log_level::error,
              "configuration not reloaded (the settings in use stay): " + std::string{e.what()});
  }
}

/// What serve() returns when the home was replaced (clusterctl restore --replace): main runs
/// it again, which opens the new home's database, certificate and settings.
constexpr int serve_again = -1;

int serve(const base::parsed_args& args) {
  auto home = store::home::resolve(args.value("home"));
  home.require_initialized();
  auto settings = load_settings(args, home);
  raise_file_limit();
  // one set of counters for the actors (store, policy, executor), one registry for the page
  auto counters = std::make_shared<api::service_metrics>();
  auto registry = std::make_shared<base::metric_registry>();

  // The daemon, in start order (each built from the settings: a bad one refuses the start
  // before anything runs); stopped in the reverse order.
  daemon::component_list parts;
  parts.add<daemon::log_component>(settings, home.config());
  auto& db = parts.add<daemon::database_component>(settings, home);
  // the engines before the actor system: libssh2's global init is not thread-safe
  auto& ssh = parts.add<daemon::ssh_component>(settings, home.dir);
  auto& ipmi = parts.add<daemon::ipmi_component>(settings);
  auto& virt = parts.add<daemon::libvirt_component>(settings);
  auto& probe = parts.add<daemon::probe_component>(settings);
  auto& rt = parts.add<daemon::runtime_component>(settings);
  auto& events = parts.add<daemon::events_component>(settings, rt, db);
  // (before the actor system starts: a set sn_listen loads CAF's TLS network layer into it)
  auto& sns = parts.add<daemon::sn_listener_component>(settings, home, rt, events);
  auto& store = parts.add<daemon::store_component>(settings, rt, db, events, counters);
  auto& policy = parts.add<daemon::policy_component>(settings, rt, store, counters);
  auto& executor = parts.add<daemon::executor_component>(
    settings, rt, &store, daemon::transports{ssh, ipmi, virt, probe}, counters, &sns);
  auto& jobs = parts.add<daemon::jobs_component>(settings, rt, db, events, executor);
  parts.add<daemon::reapply_component>(settings, rt, db, events, store);
  // the audit log before the console server, which audits attach and detach
  auto& audit = parts.add<daemon::audit_component>(settings, home);
  auto& console = parts.add<daemon::console_component>(settings, home, rt, db, events, audit);
  // (a new actor is a component here, after the ones it sends to: the dispatcher sends to all)
  auto& entry
    = parts.add<daemon::dispatcher_component>(rt, store, policy, executor, events, jobs, &console);
  parts.add<daemon::boot_component>(settings, home, rt, store); // (off without boot_listen)
  auto& https = parts.add<daemon::https_component>(settings, home, args.value("port-file"), rt,
                                                   entry, audit, registry);
  std::atomic<bool> reopen{false};
  parts.add<daemon::systemd_component>(https, reopen);

  parts.register_metrics(*registry);
  https.on_reload([&] {
    if (db.replaced()) {
      // the actors hold the old database: everything stops (requests drain) and starts again
      base::log(base::log_level::notice, "the database in " + home.db().string()
                                           + " was replaced: starting again on the new home");
      reopen = true;
      https.server().stop();
      return;
    }
    reload_settings(args, home, settings, parts);
  });
  parts.start();
  https.run(); // until SIGINT or SIGTERM (or a replaced home)
  parts.stop();
  if (reopen) {
    return serve_again;
  }
  base::log(base::log_level::notice, "stopped");
  return 0;
}

/// clusterwsd --service-node: the engines and an executor, no HTTP listener, store or policy;
/// the link dials the head. Runs until SIGINT or SIGTERM, or a refusal by the head (status 1).
int serve_service_node(const base::parsed_args& args) {
  auto home = store::home::resolve(args.value("home"));
  auto settings = load_settings(args, home);
  raise_file_limit();
  // the signals are waited for here: blocked before any thread starts, so none takes them
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  auto counters = std::make_shared<api::service_metrics>();
  daemon::component_list parts;
  parts.add<daemon::log_component>(settings, home.config());
  auto& ssh = parts.add<daemon::ssh_component>(settings, home.dir);
  auto& ipmi = parts.add<daemon::ipmi_component>(settings);
  auto& virt = parts.add<daemon::libvirt_component>(settings);
  auto& probe = parts.add<daemon::probe_component>(settings);
  auto& rt = parts.add<daemon::runtime_component>(settings);
  // the link first: the executor's start hands it its handle, and the link then registers
  auto& link = parts.add<daemon::sn_agent_component>(settings, home, rt, counters);
  parts.add<daemon::service_node_component>(settings, rt,
                                            daemon::transports{ssh, ipmi, virt, probe}, link);
  std::atomic<bool> refused{false};
  link.on_refused([&refused](const std::string&) {
    refused = true;
    kill(getpid(), SIGTERM);
  });
  parts.start();
  base::log(base::log_level::notice, "service node " + settings.text("sn_name")
                                       + " started; its head is " + settings.text("sn_head"));
  int sig = 0;
  sigwait(&stop_signals, &sig);
  parts.stop();
  if (refused) {
    base::log(base::log_level::error, "stopped: the head refused this service node");
    return 1;
  }
  base::log(base::log_level::notice, "stopped");
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    auto args = base::parse_args(
      std::vector<std::string>(argv + 1, argv + argc),
      {"", "v", {"home", "listen", "io-threads", "port-file"}, {"version", "service-node"}, {}});
    if (args.has("v") || args.has("version")) {
      std::cout << "clusterwsd - clusterws Version " << CLUSTERWS_VERSION << '\n';
      return 0;
    }
    if (args.has("help")) {
      std::cout << usage;
      return 0;
    }
    if (args.has("service-node")) {
      return serve_service_node(args);
    }
    int rc = serve(args);
    while (rc == serve_again) {
      rc = serve(args);
    }
    return rc;
  } catch (const std::exception& e) {
    // bad settings, an unusable certificate or address, a database that does not open
    return refuse_start(e.what());
  }
}
