// nodestat: probes the nodes of a noderange on the ports xCAT's nodestat probes (sshd first)
// and prints `node: state` as xCAT's does; -u writes nodelist.status and appstatus.

#include <algorithm>
#include <ctime>
#include <map>

#include "api/nodestat.hpp"
#include "api/settings.hpp"
#include "cli/commands.hpp"
#include "cli/daemon_route.hpp"
#include "cli/remote.hpp"
#include "store/cluster_view.hpp"

namespace cws::cli {

namespace {

constexpr const char* usage_text
  = "Usage:\n"
    "  nodestat [noderange] [-m|--usemon] [-p|--powerstat] [-u|--updatedb]\n"
    "  nodestat [-h|--help|-v|--version]\n";

/// xCAT's statustime: local time as MM-DD-YYYY hh:mm:ss.
std::string status_time() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%m-%d-%Y %H:%M:%S", &tm);
  return buf;
}

/// nodestat -u: nodelist.status (with statustime) where it changed, and appstatus merged
/// with what was found (with appstatustime), as xCAT's nodestat writes them; one
/// transaction.
int update_status(const session& s, const api::nodestat_operation& op, io& streams) {
  const auto& names = op.nodes();
  const auto& states = op.states();
  std::vector<store::object_change> changes;
  auto now = status_time();
  {
    auto txn = s.db->read();
    store::cluster_view view{txn};
    for (size_t i = 0; i < names.size(); ++i) {
      const auto& st = states[i];
      if (st.status.empty()) {
        continue; // not probed (an error): nothing is known
      }
      store::object_change c;
      c.name = names[i];
      if (view.attribute(names[i], "status") != st.status) {
        c.attrs.push_back({"status", st.status});
        c.attrs.push_back({"statustime", now});
      }
      if (!st.appstatus.empty()) {
        c.attrs.push_back(
          {"appstatus", api::merge_appstatus(view.attribute(names[i], "appstatus"), st.appstatus)});
        c.attrs.push_back({"appstatustime", now});
      }
      if (!c.attrs.empty()) {
        changes.push_back(std::move(c));
      }
    }
  }
  if (changes.empty()) {
    return 0;
  }
  auto out = store::apply(*s.db, [&](store::write_txn& t) {
    return store::change_objects(t, changes, store::list_mode::set);
  });
  out.info.clear(); // (xCAT's nodestat -u says nothing of the write)
  return report(out, streams);
}

} // namespace

int nodestat(const std::vector<std::string>& argv, io& streams) {
  auto args
    = parse_args(argv, {"",
                        "fmpqu",
                        {"home"},
                        {},
                        {{"usemon", 'm'}, {"powerstat", 'p'}, {"updatedb", 'u'}, {"quite", 'q'}}});
  if (args.has("help")) {
    streams.out
      << usage_text
      << "Probes every node of the noderange on the sshd port (sshport, else ssh_port) and the\n"
         "ports of nodestat_ports, all at once, each node for at most nodestat_timeout_ms, and\n"
         "prints `node: state`: the applications that answered (sshd, https,sshd, ...), else\n"
         "the installer's or the boot state when the node answers at all, else noping.\n"
         "-u writes nodelist.status and appstatus. -m is accepted (clusterws has no\n"
         "monsetting table; xCAT then probes the same ports); -p is refused (no rpower).\n";
    return 0;
  }
  if (args.positional.size() != 1) {
    streams.err << usage_text;
    return 1;
  }
  if (args.has("p")) {
    // xCAT asks rpower for the state of noping nodes; clusterws has no rpower yet (issue #15)
    throw usage_error("nodestat -p needs rpower (power state of noping nodes), which "
                      "clusterws does not provide yet; nothing was probed.");
  }
  auto s = session::open(args);
  // as xCAT's: every node at the end, in name order (the noderange's)
  auto print = [&](const std::vector<base::node_result>& results) {
    int rc = 0;
    for (const auto& res : results) {
      if (!res.error.empty()) {
        streams.err << "Error: " << res.name << ": " << res.message << '\n';
        rc = 1;
      } else if (!args.has("q")) {
        streams.out << res.name << ": " << res.out << '\n';
      }
    }
    streams.out.flush();
    return rc;
  };
  // a head with service nodes: through clusterwsd, which delegates (docs/service-nodes.md)
  if (args.has("u")) {
    warn_in_process(s, "nodestat", "-u", streams);
  } else if (auto socket = daemon_route(s, "nodestat", streams)) {
    remote daemon{*socket};
    std::vector<base::node_result> arrived;
    daemon.run("GET",
               "/clusterws/nodes/" + url_encode(args.positional.front()) + "/nodestat?stream=1", {},
               [&](base::node_result res) {
                 if (!res.out.empty() && res.out.back() == '\n') {
                   res.out.pop_back(); // (a state is one word; the detail lines end each)
                 }
                 arrived.push_back(std::move(res));
               });
    // the noderange's order, as the daemon expands it
    std::map<std::string, size_t> rank;
    for (const auto& n : daemon.nodels(args.positional.front())) {
      rank.emplace(n, rank.size());
    }
    std::stable_sort(arrived.begin(), arrived.end(), [&](const auto& a, const auto& b) {
      auto ra = rank.count(a.name) ? rank[a.name] : rank.size();
      auto rb = rank.count(b.name) ? rank[b.name] : rank.size();
      return ra < rb;
    });
    return print(arrived);
  }
  auto cfg = api::nodestat_settings(s.settings);
  api::api_call call;
  call.op = api::operation::nodestat;
  call.target = args.positional.front();
  api::authorization self; // the CLI runs as its caller, unstamped
  auto nr = s.noderange;
  nr.allow_files = false;
  auto prober = std::make_shared<probe::prober>();
  std::shared_ptr<api::nodestat_operation> op;
  auto r = api::plan_nodestat(*s.db, call, self, nr, cfg, prober, op);
  if (!r.ok()) {
    for (const auto& m : r.messages) {
      streams.err << "Error: " << m << '\n';
    }
    return 1;
  }
  raise_open_files_limit();
  std::vector<base::node_result> results(op->nodes().size());
  run_to_end(*op, [&](size_t index, base::node_result res) { results[index] = std::move(res); });
  int rc = print(results);
  if (args.has("u") && update_status(s, *op, streams) != 0) {
    rc = 1;
  }
  return rc;
}

} // namespace cws::cli
