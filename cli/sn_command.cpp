// clusterctl sn: the head's service nodes (docs/service-nodes.md). init makes the link's two
// CAs, add writes a service node's home (its certificate, key and secret, the head's CA and
// address), list asks the running daemon, remove forgets one.

#include <algorithm>
#include <ctime>
#include <future>
#include <iomanip>
#include <iostream>
#include <map>
#include <pwd.h>
#include <set>
#include <sstream>

#include "api/settings.hpp"
#include "api/sn_seal.hpp"
#include "api/sn_sync.hpp"
#include "api/targets.hpp"
#include "base/published_file.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/local_client.hpp"
#include "cli/pki.hpp"
#include "ssh/engine.hpp"
#include "store/cluster_view.hpp"

namespace cws::cli {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view sn_usage
  = "Usage: clusterctl sn init\n"
    "       clusterctl sn add NAME --out DIR [--head ADDR:PORT]\n"
    "       clusterctl sn list\n"
    "       clusterctl sn sync NAME [--address ADDR] [--port PORT] [--remote-home DIR]\n"
    "                              [--dry-run]\n"
    "       clusterctl sn remove NAME\n"
    "The head's service nodes: clusterwsd --service-node processes that dial the head over\n"
    "TLS (setting sn_listen) and run its fan-out work near the nodes.\n"
    "  init    make the link's two CAs (head CA, service-node CA) and the head's certificate\n"
    "          in pki/sn/ (never the cluster CA)\n"
    "  add     write service node NAME's home to DIR: its certificate and key (service-node\n"
    "          CA), the head CA, its secret (0600) and the head's ADDR:PORT (sn_listen, or\n"
    "          --head); the head keeps the secret's record. Again: a new certificate and\n"
    "          secret (the old home stops working). Copy DIR to the service node, then run\n"
    "          clusterwsd --service-node --home DIR there\n"
    "  list    the running daemon's service nodes: registered, last heartbeat, load\n"
    "  sync    copy each user's SSH key (ssh_key_dir/USER/id_ed25519, for users with an API\n"
    "          credential or a Unix account here) to NAME's home over SSH as root, into\n"
    "          DIR/ssh/USER/ (0700; files 0600, each renamed into place). ADDR and PORT: the\n"
    "          node NAME's ip and sshport, else NAME and ssh_port; DIR: /var/lib/clusterws-sn.\n"
    "          --dry-run lists what would go\n"
    "  remove  forget NAME (the running head drops it within a heartbeat)\n";

void write_private(const fs::path& p, const std::string& text) {
  if (auto ec = base::publish_file(p, text, 0600)) {
    throw std::runtime_error("cannot write " + p.string() + ": " + ec.message());
  }
}

void copy_file(const fs::path& from, const fs::path& to, mode_t mode) {
  std::string text;
  bool exists = false;
  if (base::read_file(from, 1 << 20, text, &exists) || !exists) {
    throw std::runtime_error("cannot read " + from.string());
  }
  if (auto ec = base::publish_file(to, text, mode)) {
    throw std::runtime_error("cannot write " + to.string() + ": " + ec.message());
  }
}

/// The head's address for a new service node: --head, else sn_listen (its port 0: the port
/// the running daemon bound, pki/sn/port).
std::string head_address(const store::home& home, const std::string& flag) {
  auto text = flag;
  if (text.empty()) {
    text = api::load_settings(home.config()).text("sn_listen");
    if (text.empty()) {
      throw usage_error("sn_listen is not set: set it in " + home.config().string()
                        + " (ADDR:PORT on the management network) or give --head ADDR:PORT.");
    }
  }
  auto colon = text.rfind(':');
  unsigned long long port = 0;
  if (colon == std::string::npos || colon == 0
      || !base::parse_unsigned(text.substr(colon + 1), port) || port > 65535) {
    throw usage_error("'" + text + "' is not ADDR:PORT.");
  }
  auto host = text.substr(0, colon);
  if (host == "0.0.0.0" || host == "[::]") {
    throw usage_error("sn_listen listens on every address: give --head ADDR:PORT, the one the "
                      "service node dials.");
  }
  if (port == 0) {
    std::string bound;
    bool exists = false;
    base::read_file(home.pki() / "sn" / "port", 64, bound, &exists);
    while (!bound.empty() && (bound.back() == '\n' || bound.back() == ' ')) {
      bound.pop_back();
    }
    if (!exists || !base::parse_unsigned(bound, port) || port == 0 || port > 65535) {
      throw usage_error("sn_listen's port is 0 and the daemon has not bound one yet: start it, "
                        "or give --head ADDR:PORT.");
    }
    text = host + ":" + std::to_string(port);
  }
  return text;
}

std::string utc(double t) {
  if (t <= 0) {
    return "-";
  }
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

struct listed {
  double registered = -1;
  double last = 0;
  double load = 0;
};

/// `family{name="x"} value` lines of the metrics page, by name.
void read_family(const std::string& page, const std::string& family,
                 std::map<std::string, listed>& out, double listed::*field) {
  std::istringstream in{page};
  std::string line;
  auto prefix = family + "{name=\"";
  while (std::getline(in, line)) {
    if (line.compare(0, prefix.size(), prefix) != 0) {
      continue;
    }
    auto end = line.find("\"}", prefix.size());
    if (end == std::string::npos) {
      continue;
    }
    auto name = line.substr(prefix.size(), end - prefix.size());
    try {
      out[name].*field = std::stod(line.substr(end + 2));
    } catch (const std::exception&) {
      // a line of another shape: not ours
    }
  }
}

int list(const store::home& home, io& streams) {
  local_client client{local_socket_path(home), size_t{64} << 20};
  auto reply = client.request("GET", "/clusterws/metrics");
  if (reply.status != 200) {
    throw std::runtime_error("the daemon answered " + std::to_string(reply.status) + ": "
                             + reply.body);
  }
  if (reply.body.find("clusterws_service_node_events_total") == std::string::npos) {
    streams.out << "The daemon does not listen for service nodes (sn_listen is empty).\n";
    return 0;
  }
  std::map<std::string, listed> nodes;
  read_family(reply.body, "clusterws_service_node_registered", nodes, &listed::registered);
  read_family(reply.body, "clusterws_service_node_last_heartbeat_seconds", nodes, &listed::last);
  read_family(reply.body, "clusterws_service_node_load", nodes, &listed::load);
  // the head's records (root): known but never registered since the daemon started
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(home.pki() / "sn" / "secrets", ec)) {
    nodes.try_emplace(e.path().filename().string());
  }
  streams.out << std::left << std::setw(20) << "NAME" << std::setw(12) << "STATE" << std::setw(22)
              << "LAST HEARTBEAT"
              << "LOAD\n";
  for (const auto& [name, n] : nodes) {
    auto state = n.registered > 0 ? "registered" : n.registered == 0 ? "down" : "never";
    streams.out << std::setw(20) << name << std::setw(12) << state << std::setw(22) << utc(n.last)
                << static_cast<long long>(n.load) << '\n';
  }
  return 0;
}

/// Runs `j` alone on `engine` and waits for its result.
base::node_result run_one(ssh::engine& engine, ssh::job j) {
  std::promise<base::node_result> got;
  auto result = got.get_future();
  std::vector<ssh::job> jobs;
  jobs.push_back(std::move(j));
  engine.run(
    std::move(jobs), 1, [&got](size_t, base::node_result r) { got.set_value(std::move(r)); },
    [] {});
  return result.get();
}

/// The words of a failed step on the service node.
std::string why_failed(const base::node_result& r) {
  auto text = !r.message.empty() ? r.message : !r.err.empty() ? r.err : r.out;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  if (text.empty()) {
    text = "exit status " + std::to_string(r.rc);
  }
  return text;
}

/// clusterctl sn sync NAME: the users' SSH keys to the service node, over SSH as root.
int sync(const parsed_args& args, const std::string& name, io& streams) {
  auto s = session::open(args);
  if (!fs::exists(s.home.pki() / "sn" / "secrets" / name)) {
    throw std::runtime_error("no service node '" + name + "' (clusterctl sn add " + name
                             + " first).");
  }
  // where: --address/--port, else the node object NAME's ip and sshport, else NAME itself
  auto address = args.value("address");
  uint16_t port = 0;
  if (!args.value("port").empty()) {
    auto p = api::parse_port(args.value("port"));
    if (!p) {
      throw usage_error("--port '" + args.value("port") + "' is no port (1 to 65535).");
    }
    port = *p;
  }
  std::set<std::string> api_users;
  {
    auto txn = s.db->read();
    store::cluster_view view{txn};
    if (view.is_node(name)) {
      if (address.empty()) {
        address = view.attribute(name, "ip");
      }
      if (port == 0) {
        auto r = api::node_port(view, name, "sshport", port);
        if (!r.ok()) {
          throw std::runtime_error(r.messages.empty() ? "bad sshport" : r.messages.front());
        }
      }
    }
    for (auto& u : txn.names(store::object_type::passwd)) {
      api_users.insert(u);
    }
  }
  auto shell = api::shell_settings(s.settings, s.home.dir);
  if (port == 0) {
    port = shell.port;
  }
  auto remote_home = args.value("remote-home", api::sn_default_home);
  api::sn_sync_plan plan;
  auto exists = [&](const std::string& user) {
    return user == "root" || api_users.count(user) > 0 || ::getpwnam(user.c_str()) != nullptr;
  };
  if (auto why = api::plan_sn_sync(shell.key_dir, remote_home, exists, plan); !why.empty()) {
    throw std::runtime_error(why + ".");
  }
  auto where
    = name + " (" + (address.empty() ? name : address) + " port " + std::to_string(port) + ")";
  for (const auto& [user, why] : plan.skipped) {
    streams.err << "Skipped " << user << ": " << why << ".\n";
  }
  if (args.has("dry-run")) {
    streams.out << "Would copy to " << where << " as root, below " << remote_home << ":\n";
    for (const auto& f : plan.files) {
      streams.out << "  " << f << " (0600)\n";
    }
    if (plan.files.empty()) {
      streams.out << "  nothing (no user has a key in " << shell.key_dir.string() << ")\n";
    }
    return 0;
  }
  if (plan.users.empty()) {
    streams.out << "No user has a key in " << shell.key_dir.string() << ": nothing copied.\n";
    return 0;
  }
  auto root_key = api::user_key(shell, "root");
  if (!fs::exists(root_key)) {
    throw std::runtime_error("root has no SSH key (" + root_key.string()
                             + "): the keys go to the service node over SSH as root.");
  }
  ssh::engine engine{api::engine_settings(s.settings, s.home.dir)};
  ssh::job j;
  j.node = name;
  j.address = address;
  j.port = port;
  j.user = "root";
  j.private_key = root_key;
  auto pub = root_key;
  pub += ".pub";
  if (fs::exists(pub)) {
    j.public_key = pub;
  }
  j.command = plan.prepare;
  auto made = run_one(engine, j);
  if (made.rc != 0 || !made.error.empty()) {
    streams.err << "Error: " << name << ": " << why_failed(made) << "\n";
    return 1;
  }
  j.command.clear();
  j.copy = plan.copy;
  auto copied = run_one(engine, j);
  if (copied.rc != 0 || !copied.error.empty()) {
    streams.err << "Error: " << name << ": " << why_failed(copied) << "\n";
    return 1;
  }
  streams.out << "Copied the SSH keys of " << plan.users.size() << " user(s) ("
              << base::join_list(plan.users) << ") to " << where << ": " << remote_home
              << "/ssh/.\n";
  return 0;
}

} // namespace

int sn(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(
    argv, {"", "", {"home", "out", "head", "address", "port", "remote-home"}, {"dry-run"}, {}});
  if (args.has("help")) {
    streams.out << sn_usage;
    return 0;
  }
  auto home = store::home::resolve(args.value("home"));
  auto action = args.positional.empty() ? std::string{} : args.positional.front();
  std::vector<std::string> rest(args.positional.begin() + (args.positional.empty() ? 0 : 1),
                                args.positional.end());
  if (action == "list" && rest.empty()) {
    return list(home, streams);
  }
  if (daemon_socket(home)) {
    throw needs_root{};
  }
  home.require_initialized();
  auto dir = home.pki() / "sn";
  if (action == "init" && rest.empty()) {
    if (fs::exists(dir / "head-ca.pem") || fs::exists(dir / "sn-ca.pem")) {
      throw std::runtime_error("the service-node CAs exist already in " + dir.string() + ".");
    }
    fs::create_directories(dir / "secrets");
    fs::permissions(dir, fs::perms::owner_all);
    fs::permissions(dir / "secrets", fs::perms::owner_all);
    make_link_ca(dir / "head-ca.pem", dir / "head-ca-key.pem",
                 "clusterws service-node link: head CA");
    make_link_ca(dir / "sn-ca.pem", dir / "sn-ca-key.pem",
                 "clusterws service-node link: service-node CA");
    issue_link_cert(dir / "head-ca.pem", dir / "head-ca-key.pem", dir / "head-cert.pem",
                    dir / "head-key.pem", "head");
    streams.out << "Made the service-node link's CAs in " << dir.string()
                << " (head-ca.pem, sn-ca.pem) and the head's certificate.\n"
                   "Set sn_listen (ADDR:PORT) in "
                << home.config().string()
                << " and restart clusterwsd; then clusterctl sn add NAME --out DIR.\n";
    return 0;
  }
  if (action == "sync") {
    if (rest.size() != 1) {
      throw usage_error("sync takes one service node NAME.");
    }
    if (!api::valid_sn_name(rest.front())) {
      throw usage_error("'" + rest.front()
                        + "' is no service node name (1 to 64 of A-Z a-z 0-9 . _ -).");
    }
    return sync(args, rest.front(), streams);
  }
  if ((action == "add" || action == "remove") && rest.size() != 1) {
    throw usage_error(action + " takes one service node NAME.");
  }
  if (action == "add" || action == "remove") {
    const auto& name = rest.front();
    if (!api::valid_sn_name(name)) {
      throw usage_error("'" + name + "' is no service node name (1 to 64 of A-Z a-z 0-9 . _ -).");
    }
    if (action == "remove") {
      if (!fs::remove(dir / "secrets" / name)) {
        throw std::runtime_error("no service node '" + name + "'.");
      }
      streams.out << "Removed service node " << name
                  << ": the running head drops it within a heartbeat.\n";
      return 0;
    }
    if (args.value("out").empty()) {
      throw usage_error("add needs --out DIR (the service node's home to write).");
    }
    if (!fs::exists(dir / "sn-ca-key.pem")) {
      throw std::runtime_error("no service-node CA in " + dir.string()
                               + ": run clusterctl sn init first.");
    }
    auto head = head_address(home, args.value("head"));
    auto settings = api::load_settings(home.config());
    fs::path out{args.value("out")};
    fs::create_directories(out / "pki");
    fs::permissions(out, fs::perms::owner_all);
    fs::permissions(out / "pki", fs::perms::owner_all);
    issue_link_cert(dir / "sn-ca.pem", dir / "sn-ca-key.pem", out / "pki" / "sn-cert.pem",
                    out / "pki" / "sn-key.pem", name);
    copy_file(dir / "head-ca.pem", out / "pki" / "head-ca.pem", 0644);
    auto secret = api::make_sn_secret();
    write_private(out / "pki" / "sn-secret", secret + "\n");
    write_private(out / "clusterws.conf",
                  "# clusterwsd --service-node --home " + out.string()
                    + " (written by clusterctl sn add)\n"
                      "sn_name = "
                    + name + "\nsn_head = " + head + "\nsn_heartbeat_ms = "
                    + std::to_string(settings.number("sn_heartbeat_ms")) + "\nsn_dead_after_ms = "
                    + std::to_string(settings.number("sn_dead_after_ms")) + "\n");
    // the head's record last: a home half written never matches a record
    write_private(dir / "secrets" / name, secret + "\n");
    streams.out << "Wrote service node " << name << "'s home to " << out.string() << " (head "
                << head << ").\nCopy it to the service node and run there: "
                << "clusterwsd --service-node --home DIR\n";
    return 0;
  }
  throw usage_error(action.empty()
                      ? "Give an action: init, add, list, sync or remove."
                      : "Unknown sn action '" + action + "': init, add, list, sync or remove.");
}

} // namespace cws::cli
