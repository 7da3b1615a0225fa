// rinstall: nodeset, then rsetboot net (mgt=ipmi), then rpower boot for a noderange, as
// xCAT's rinstall.pm, over the same api/ operation PUT /nodes/{nr}/provision runs in the
// daemon: per-node results, a node that fails a step goes no further.

#include <chrono>
#include <map>
#include <thread>

#include "api/planner.hpp"
#include "api/rinstall.hpp"
#include "api/settings.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"

namespace cws::cli {

namespace {

/// Waits, at most 5 s, until `p` is the last reference to what it holds.
template<class T>
void last_owner(const std::shared_ptr<T>& p) {
  for (int i = 0; p && p.use_count() > 1 && i < 5000; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

constexpr const char* rinstall_help
  = "Usage: rinstall <noderange> [osimage[=<imagename>] | boot | shell] [-u|--uefimode]\n"
    "                [-V|--verbose] [--home DIR]\n"
    "       rinstall [-h | --help | -v | --version]\n"
    "Begins OS provisioning: nodeset, then rsetboot net (mgt=ipmi), then rpower boot.\n"
    "  osimage[=NAME]  install the osimage (default: each node's nodetype.provmethod)\n"
    "  boot | shell    the nodeset state to boot into instead\n"
    "  -u, --uefimode  the BMC boots the node in UEFI mode (rsetboot net -u)\n"
    "  -V, --verbose   each node's result of each step\n"
    "  --home DIR      state directory (default $CLUSTERWS_HOME or /var/lib/clusterws)\n"
    "A node nodeset refuses keeps its boot device and power; a node whose rsetboot fails is\n"
    "not powered. mgt=kvm nodes skip rsetboot (the domain's boot order is its definition's).\n";

/// The step a failed node stopped at, by its message's prefix (api/rinstall.cpp).
std::string step_of(const base::node_result& r) {
  if (r.error == to_string(base::node_errc::boot_state)) {
    return "nodeset";
  }
  for (const char* s : {"rsetboot", "rpower"}) {
    if (r.message.rfind(std::string{s} + ": ", 0) == 0) {
      return s;
    }
  }
  return "";
}

} // namespace

int rinstall(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"",
                                "hVuc",
                                {"home"},
                                {"help", "noupdateinitrd", "ignorekernelchk"},
                                {{"verbose", 'V'}, {"uefimode", 'u'}, {"console", 'c'}}});
  if (args.has("help") || args.has("h")) {
    streams.out << rinstall_help;
    return 0;
  }
  if (args.positional.empty() || args.positional.size() > 2) {
    streams.err << api::rinstall_usage;
    return 1;
  }
  if (args.has("c")) {
    streams.err << "Error: rinstall -c/--console is not supported by clusterws (use rcons).\n";
    return 1;
  }
  std::string command = args.positional.size() > 1 ? args.positional[1] : "osimage";
  if (args.has("u")) {
    command += " -u";
  }
  std::string error;
  if (!api::parse_rinstall(command, error)) {
    streams.err << "Error: " << error << '\n' << api::rinstall_usage;
    return 1;
  }
  bool verbose = args.has("V");
  auto s = session::open(args);
  api::authorization me; // the CLI runs as its caller: no policy stamp
  me.user = "root";
  api::api_call call;
  call.op = api::operation::provision;
  call.target = args.positional[0];
  call.command = command;
  auto nr = s.noderange;
  nr.allow_files = false;
  api::rinstall_drivers d;
  d.hardware = api::hardware_settings(s.settings);
  d.drivers.ipmi = std::make_shared<ipmi::engine>(api::ipmi_settings(s.settings));
  d.drivers.virt = std::make_shared<virt::hypervisors>(api::virt_settings(s.settings));
  // the nodeset step: this process's own transaction (the daemon's goes through its writer)
  auto* db = s.db.get();
  d.boot_states = std::make_shared<const api::boot_state_writer>(
    [db](std::vector<std::string> nodes, api::nodeset_action action, api::boot_state_done done) {
      std::vector<base::node_result> results;
      try {
        db->write(
          [&](store::write_txn& t) { results = api::write_boot_states_each(t, nodes, action); });
      } catch (const std::exception& e) {
        results.clear();
        for (auto& n : nodes) {
          results.push_back(base::node_result::failure(n, base::node_errc::boot_state, e.what()));
        }
      }
      done(std::move(results));
    });
  api::node_operation_ptr op;
  auto r = api::plan_rinstall(*s.db, call, me, nr, d, op);
  if (!r.ok()) {
    for (const auto& m : r.messages) {
      streams.err << "Error: " << m << '\n';
    }
    return 1;
  }
  raise_open_files_limit();
  std::vector<base::node_result> results(op->nodes().size());
  run_to_end(*op, [&](size_t i, base::node_result res) { results[i] = std::move(res); });
  // The engines must end on this thread: a step's last reference can go with a callback on
  // an engine's own thread just after on_done, and an engine destroyed there joins its thread
  // from itself (seen once under ASan: "Resource deadlock avoided"). So the operation goes
  // first, then this waits (bounded) until `d` holds the engines alone.
  op.reset();
  last_owner(d.drivers.ipmi);
  last_owner(d.drivers.virt);
  // rinstall.pm's words: the nodes it provisions, each node's error, the failed ones by step
  std::vector<std::string> going;
  std::map<std::string, std::vector<std::string>> failed_at;
  for (const auto& res : results) {
    auto step = res.failed() ? step_of(res) : "";
    if (!res.failed() || !step.empty()) {
      going.push_back(res.name);
    }
    if (!step.empty()) {
      failed_at[step].push_back(res.name);
    }
  }
  if (going.empty()) {
    for (const auto& res : results) {
      streams.err << "Error: " << res.message << '\n';
    }
    streams.err << "Error: No available nodes for provision.\n";
    return 1;
  }
  streams.out << "Provision node(s):";
  for (const auto& n : going) {
    streams.out << ' ' << n;
  }
  streams.out << '\n';
  int rc = 0;
  for (const auto& res : results) {
    if (res.failed()) {
      rc = 1;
      // a message that names its node already (rinstall.pm's) is printed as it is
      auto& m = res.message;
      if (m.rfind(res.name + ": ", 0) == 0) {
        streams.err << "Error: " << m << '\n';
      } else {
        streams.err << res.name << ": Error: " << m << '\n';
      }
    } else if (verbose) {
      for (const auto& line : base::output_lines(res.out)) {
        if (!line.empty()) {
          streams.out << res.name << ": " << line << '\n';
        }
      }
    }
  }
  for (const char* step : {"nodeset", "rsetboot", "rpower"}) {
    auto it = failed_at.find(step);
    if (it != failed_at.end()) {
      streams.err << "Error: Failed to run '" << step << "' against the following nodes:";
      for (const auto& n : it->second) {
        streams.err << ' ' << n;
      }
      streams.err << '\n';
    }
  }
  streams.out.flush();
  return rc;
}

} // namespace cws::cli
