// xdsh: runs a command on a noderange over the same SSH engine as nodeshell, printing
// `node: line` as xCAT's xdsh does.

#include <algorithm>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <pwd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api/planner.hpp"
#include "api/settings.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"

namespace cws::cli {

namespace {

void print_lines(std::ostream& os, const std::string& node, const std::string& text) {
  for (const auto& line : base::output_lines(text)) {
    os << node << ": " << line << '\n';
  }
}

} // namespace

int xdsh(const std::vector<std::string>& argv, io& streams) {
  // Options come before the command; everything from the command on is the command, so
  // `xdsh nr id -un` passes -un to id.
  size_t cmd_start = argv.size();
  std::vector<std::string> head;
  int words = 0;
  for (size_t i = 0; i < argv.size(); ++i) {
    const auto& a = argv[i];
    bool takes_value = a == "-f" || a == "-t" || a == "--home";
    if (!a.empty() && a[0] == '-' && a != "-") {
      head.push_back(a);
      if (takes_value && i + 1 < argv.size()) {
        head.push_back(argv[++i]);
      }
      continue;
    }
    if (++words == 2) {
      cmd_start = i;
      break;
    }
    head.push_back(a);
  }
  auto args = parse_args(head, {"ft", "e", {"home"}, {}, {}});
  if (args.has("help")) {
    streams.out << "Usage: xdsh NODERANGE [-f FANOUT] [-t TIMEOUT] COMMAND...\n"
                   "Runs COMMAND on every node of NODERANGE over SSH as you, at most FANOUT\n"
                   "nodes at once (default ssh_fanout, 64), and prints each node's output as\n"
                   "`node: line` when the node finishes. -t ends a command still running after\n"
                   "TIMEOUT seconds (on the node too). Exit status: the number of failed nodes\n"
                   "(at most 255). Keys: <home>/ssh/<user>/id_ed25519.\n"
                   "-e: COMMAND is a local script and its arguments: it is copied to each node's\n"
                   "/tmp over the same connection (SFTP), run there, and removed.\n";
    return 0;
  }
  if (args.positional.size() != 1 || cmd_start >= argv.size()) {
    throw usage_error("A noderange and a command are needed.");
  }
  std::string command;
  std::shared_ptr<api::copy_request> script;
  if (args.has("e")) { // xdsh -e: the first word is a local script, copied then run
    script = std::make_shared<api::copy_request>();
    script->execute = true;
    script->entries.push_back({{argv[cmd_start++]}, "/tmp/"});
  }
  for (size_t i = cmd_start; i < argv.size(); ++i) {
    command += (i > cmd_start ? " " : "") + argv[i];
  }
  auto s = session::open(args);
  long long fanout = args.values.count("f") ? std::stoll(args.value("f")) : 0;
  long long timeout = args.values.count("t") ? std::stoll(args.value("t")) : -1;
  if (fanout < 0 || timeout < -1) {
    throw usage_error("-f and -t take whole numbers.");
  }
  const struct passwd* pw = getpwuid(geteuid());
  api::authorization self;
  self.user = pw != nullptr ? pw->pw_name : "root";
  api::api_call call;
  call.op = api::operation::nodeshell;
  call.target = args.positional.front();
  call.command = command;
  call.copy = script;
  call.fanout = static_cast<size_t>(fanout);
  call.timeout_ms = timeout >= 0 ? timeout * 1000 : -1;
  auto nr = s.noderange;
  nr.allow_files = false;
  api::drivers transports;
  transports.shell = api::shell_settings(s.settings, s.home.dir);
  transports.copy = api::copy_settings(s.settings, s.home.dir);
  transports.ssh = std::make_shared<ssh::engine>(api::engine_settings(s.settings, s.home.dir));
  api::node_operation_ptr op;
  auto r = api::plan(*s.db, call, self, nr, transports, op);
  if (!r.ok()) {
    for (const auto& m : r.messages) {
      streams.err << "Error: " << m << '\n';
    }
    return 1;
  }
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  size_t failed = 0;
  std::vector<std::string> timed_out;
  op->start(
    [&](size_t, base::node_result res) {
      std::lock_guard<std::mutex> guard{mu};
      print_lines(streams.out, res.name, res.out);
      print_lines(streams.err, res.name, res.err);
      if (res.error == "timeout") {
        timed_out.push_back(res.name); // reported together at the end, as xCAT's -t does
      } else if (!res.error.empty()) {
        streams.err << res.name << ": " << res.message << '\n';
      }
      failed += res.failed() ? 1 : 0;
      streams.out.flush();
    },
    [&] {
      std::lock_guard<std::mutex> guard{mu};
      done = true;
      cv.notify_all();
    });
  {
    std::unique_lock<std::mutex> lock{mu};
    cv.wait(lock, [&] { return done; });
  }
  if (!timed_out.empty()) { // xCAT's DSHCLI text (its ' ' after 'Error:' included)
    std::sort(timed_out.begin(), timed_out.end());
    std::string names;
    for (const auto& n : timed_out) {
      names += " " + n;
    }
    streams.err << "Error:  Timed out waiting for response from child processes for the "
                   "following nodes.\nError: "
                << names << '\n';
  }
  return static_cast<int>(std::min<size_t>(failed, 255));
}

} // namespace cws::cli
