// xdcp: copies files to (or with -P from) a noderange over the same SSH engine as xdsh, with
// SFTP on each node's connection, as the calling user with that user's key.

#include <algorithm>
#include <fstream>
#include <iostream>
#include <pwd.h>
#include <sstream>
#include <unistd.h>

#include "api/planner.hpp"
#include "api/settings.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/daemon_route.hpp"
#include "cli/remote.hpp"

namespace cws::cli {

namespace {

constexpr std::string_view xdcp_help
  = "Usage: xdcp NODERANGE [-f FANOUT] [-t TIMEOUT] [-p] [-R] SOURCE... TARGET\n"
    "       xdcp NODERANGE [-f FANOUT] [-t TIMEOUT] [-p] [-R] -P REMOTEFILE LOCALDIR\n"
    "       xdcp NODERANGE [-f FANOUT] [-t TIMEOUT] [-p] [-R] -F SYNCLIST\n"
    "Copies files to every node of NODERANGE over SFTP as you, at most FANOUT nodes at\n"
    "once (default ssh_fanout, 64). With one SOURCE, TARGET is the file (or, if it is a\n"
    "directory on the node, where it goes); with several, TARGET is a directory. Each file\n"
    "appears on the node whole (written under a temporary name, then renamed).\n"
    "  -R  copy directories recursively\n"
    "  -p  keep the sources' modes and times\n"
    "  -P  pull REMOTEFILE from each node into LOCALDIR as REMOTEFILE._<node>\n"
    "      (with -R a directory, whole, as LOCALDIR/<name>._<node>/)\n"
    "  -F  copy what the synclist file says (`source... -> destination` lines)\n"
    "  -t  end a node's copy still running after TIMEOUT seconds\n"
    "Exit status: the number of failed nodes (at most 255).\n";

void print_lines(std::ostream& os, const std::string& node, const std::string& text) {
  for (const auto& line : base::output_lines(text)) {
    os << node << ": " << line << '\n';
  }
}

} // namespace

int xdcp(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"ftF", "pPR", {"home"}, {}, {}});
  if (args.has("help")) {
    streams.out << xdcp_help;
    return 0;
  }
  if (args.positional.empty()) {
    throw usage_error("A noderange is needed.");
  }
  auto req = std::make_shared<api::copy_request>();
  req->recursive = args.has("R");
  req->preserve = args.has("p");
  req->pull = args.has("P");
  std::vector<std::string> files(args.positional.begin() + 1, args.positional.end());
  if (args.values.count("F")) {
    if (!files.empty() || req->pull) {
      throw usage_error("-F takes its files from the synclist only (and cannot be used with -P).");
    }
    std::ifstream in{args.value("F")};
    if (!in) {
      throw usage_error("Cannot read the synclist " + args.value("F") + ".");
    }
    std::string text(api::synclist_max + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    if (text.size() > api::synclist_max) {
      throw usage_error("The synclist " + args.value("F") + " is larger than 16 MiB.");
    }
    if (auto bad = api::parse_synclist(text, req->entries); !bad.empty()) {
      throw usage_error(args.value("F") + ": " + bad);
    }
  } else {
    if (files.size() < 2) {
      throw usage_error("A source file and a target path are needed.");
    }
    api::copy_entry e;
    e.target = files.back();
    files.pop_back();
    e.sources = std::move(files);
    req->entries.push_back(std::move(e));
  }
  auto s = session::open(args);
  long long fanout = args.values.count("f") ? std::stoll(args.value("f")) : 0;
  long long timeout = args.values.count("t") ? std::stoll(args.value("t")) : -1;
  if (fanout < 0 || timeout < -1) {
    throw usage_error("-f and -t take whole numbers.");
  }
  size_t failed = 0;
  std::vector<std::string> timed_out;
  auto print = [&](base::node_result res) {
    print_lines(streams.out, res.name, res.out);
    print_lines(streams.err, res.name, res.err);
    if (res.error == "timeout") {
      timed_out.push_back(res.name);
    } else if (!res.error.empty()) {
      streams.err << res.name << ": " << res.message << '\n';
    }
    failed += res.failed() ? 1 : 0;
    streams.out.flush();
  };
  // a head with service nodes: through clusterwsd, which delegates (docs/service-nodes.md)
  if (req->pull || args.values.count("F")) {
    warn_in_process(s, "xdcp", req->pull ? "-P" : "-F", streams);
  } else if (auto socket = daemon_route(s, "xdcp", streams)) {
    const auto& e = req->entries.front();
    std::vector<std::string> sources;
    for (const auto& src : e.sources) {
      sources.push_back(std::filesystem::absolute(src).string()); // the daemon's cwd is not ours
    }
    remote{*socket}.nodecopy(args.positional.front(), sources, e.target, req->recursive,
                             req->preserve, fanout, timeout, print);
    print_timed_out(streams.err, std::move(timed_out));
    return static_cast<int>(std::min<size_t>(failed, 255));
  }
  const struct passwd* pw = getpwuid(geteuid());
  api::authorization self;
  self.user = pw != nullptr ? pw->pw_name : "root";
  api::api_call call;
  call.op = api::operation::nodecopy;
  call.target = args.positional.front();
  call.copy = req;
  call.fanout = static_cast<size_t>(fanout);
  call.timeout_ms = timeout >= 0 ? timeout * 1000 : -1;
  auto nr = s.noderange;
  nr.allow_files = false;
  api::drivers transports;
  transports.shell = api::shell_settings(s.settings, s.home.dir);
  transports.copy = api::copy_settings(s.settings, s.home.dir);
  transports.ssh = std::make_shared<ssh::engine>(api::engine_settings(s.settings, s.home.dir));
  api::node_operation_ptr op;
  raise_open_files_limit(); // before planning: every streamed source is held open from then
  auto r = api::plan(*s.db, call, self, nr, transports, op);
  if (!r.ok()) {
    for (const auto& m : r.messages) {
      streams.err << "Error: " << m << '\n';
    }
    return 1;
  }
  run_to_end(*op, [&](size_t, base::node_result res) { print(std::move(res)); });
  print_timed_out(streams.err, std::move(timed_out)); // DSHCLI's execute_dcp words
  return static_cast<int>(std::min<size_t>(failed, 255));
}

} // namespace cws::cli
