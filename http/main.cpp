// clusterwsd: the HTTPS REST service (spec/interface.md) on a CAF actor system.

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/send.hpp>

#include <fstream>
#include <iostream>
#include <sys/resource.h>
#include <thread>

#include "actors/executor_actor.hpp"
#include "actors/policy_actor.hpp"
#include "actors/service.hpp"
#include "actors/store_actor.hpp"
#include "cli/args.hpp"
#include "http/server.hpp"
#include "store/home.hpp"

namespace {

using namespace cws;

constexpr const char* usage
  = "Usage: clusterwsd [--home DIR] [--listen ADDR:PORT] [--io-threads N] [--port-file FILE]\n"
    "Serves the clusterws REST API over HTTPS at /clusterws (and /xcatws).\n"
    "Settings come from <home>/clusterws.conf; the options override them.\n";

/// Thousands of SSH connections and clients need descriptors: take the hard limit.
void raise_file_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

size_t setting(const std::map<std::string, std::string>& s, const char* key, size_t fallback) {
  auto it = s.find(key);
  return it == s.end() ? fallback : std::stoul(it->second);
}

int serve(const cli::parsed_args& args) {
  auto home = store::home::resolve(args.value("home"));
  if (!home.initialized()) {
    std::cerr << "Error: The clusterws home '" << home.dir.string()
              << "' is not initialized; run 'clusterctl init --home " << home.dir.string()
              << "' first.\n";
    return 1;
  }
  auto settings = home.settings();
  http::server_config cfg;
  cfg.apply(settings);
  cfg.listen = args.value("listen", cfg.listen);
  if (args.values.count("io-threads") > 0) {
    cfg.io_threads = static_cast<unsigned>(std::stoul(args.value("io-threads")));
  }
  cfg.cert = home.pki() / "server-cert.pem";
  cfg.key = home.pki() / "server-key.pem";

  auto db = std::make_shared<store::database>(home.db());
  actors::store_config sc;
  sc.noderange.max_nodes = setting(settings, "noderange_max", sc.noderange.max_nodes);
  sc.noderange.max_regex = setting(settings, "noderange_regex_max", sc.noderange.max_regex);
  sc.commit_wait = std::chrono::microseconds(setting(settings, "commit_wait_us", 1000));
  actors::policy_config pc;
  pc.cache_ttl = std::chrono::seconds(setting(settings, "auth_cache_seconds", 60));
  pc.backoff_after = static_cast<unsigned>(setting(settings, "login_backoff_after", 3));
  pc.backoff_max = std::chrono::milliseconds(setting(settings, "login_backoff_max_ms", 8000));
  pc.user_backoff_after
    = static_cast<unsigned>(setting(settings, "login_backoff_user_after", pc.user_backoff_after));
  pc.client_backoff_after = static_cast<unsigned>(
    setting(settings, "login_backoff_client_after", pc.client_backoff_after));

  actors::executor_config ec;
  ssh::engine_config sshc;
  actors::apply_ssh_settings(settings, home.dir, ec, sshc);
  raise_file_limit();
  // before the actor system: libssh2's global init is not thread-safe
  auto engine = std::make_shared<ssh::engine>(sshc);

  caf::actor_system_config acfg;
  // Request handling is a chain of short messages: workers that sleep 50 us between polls
  // ("moderate" phase) add that to every hop. Spin briefly, then block on the condition
  // variable, which enqueuing notifies.
  acfg.set("work-stealing.moderate-poll-attempts",
           static_cast<size_t>(setting(settings, "caf_moderate_polls", 0)));
  acfg.set("work-stealing.aggressive-poll-attempts",
           static_cast<size_t>(setting(settings, "caf_aggressive_polls", 200)));
  // CAF's default is at least 4 workers, which oversubscribes a small management node
  acfg.set("scheduler.max-threads",
           setting(settings, "caf_threads", std::max(1u, std::thread::hardware_concurrency())));
  caf::actor_system sys{acfg};
  auto st = actors::spawn_store(sys, db, sc);
  auto pol = actors::spawn_policy(sys, st, pc);
  auto ex = actors::spawn_executor(sys, st, engine, ec);
  actors::service svc{sys, st, pol, ex};
  auto audit_path = settings.count("audit_log") > 0 ? settings.at("audit_log")
                                                    : (home.dir / "audit.log").string();
  http::audit_limits al;
  al.max_field = setting(settings, "audit_field_max", al.max_field);
  al.summary_period
    = std::chrono::seconds(setting(settings, "audit_summary_seconds", al.summary_period.count()));
  al.max_bytes = setting(settings, "audit_log_max_bytes", al.max_bytes);
  http::audit_log audit{
    audit_path == "off" ? std::filesystem::path{} : std::filesystem::path{audit_path}, al};
  {
    http::server srv{cfg, svc, &audit};
    auto ep = srv.start();
    std::cout << "clusterwsd: listening on https://"
              << (ep.address().is_v6() ? "[" + ep.address().to_string() + "]"
                                       : ep.address().to_string())
              << ':' << ep.port() << "/clusterws (home " << home.dir.string() << ")" << std::endl;
    if (auto pf = args.value("port-file"); !pf.empty()) {
      std::ofstream{pf + ".tmp"} << ep.port() << '\n';
      std::filesystem::rename(pf + ".tmp", pf); // readers never see a partial file
    }
    srv.run(true);
  }
  svc.shutdown();
  caf::anon_send_exit(ex, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(pol, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(st, caf::exit_reason::user_shutdown);
  std::cout << "clusterwsd: stopped" << std::endl;
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    auto args = cli::parse_args(std::vector<std::string>(argv + 1, argv + argc),
                                {"", "", {"home", "listen", "io-threads", "port-file"}, {}});
    if (args.has("help")) {
      std::cout << usage;
      return 0;
    }
    return serve(args);
  } catch (const std::exception& e) {
    std::cerr << "Error: " << e.what() << '\n';
    return 1;
  }
}
