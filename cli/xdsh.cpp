// xdsh: runs a command on a noderange over the same SSH engine as nodeshell, printing
// `node: line` as xCAT's xdsh does.

#include <condition_variable>
#include <iostream>
#include <mutex>
#include <pwd.h>
#include <sys/resource.h>
#include <unistd.h>

#include "actors/executor_actor.hpp"
#include "actors/store_actor.hpp"
#include "cli/commands.hpp"

namespace cws::cli {

namespace {

void print_lines(std::ostream& os, const std::string& node, const std::string& text) {
  for (const auto& line : ssh::output_lines(text)) {
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
  auto args = parse_args(head, {"ft", "", {"home"}, {}});
  if (args.has("help")) {
    streams.out << "Usage: xdsh NODERANGE [-f FANOUT] [-t TIMEOUT] COMMAND...\n"
                   "Runs COMMAND on every node of NODERANGE over SSH as you, at most FANOUT\n"
                   "nodes at once (default ssh_fanout, 64), and prints each node's output as\n"
                   "`node: line` when the node finishes. -t ends a command still running after\n"
                   "TIMEOUT seconds (on the node too). Exit status: the number of failed nodes\n"
                   "(at most 255). Keys: <home>/ssh/<user>/id_ed25519.\n";
    return 0;
  }
  if (args.positional.size() != 1 || cmd_start >= argv.size()) {
    throw usage_error("A noderange and a command are needed.");
  }
  std::string command;
  for (size_t i = cmd_start; i < argv.size(); ++i) {
    command += (i > cmd_start ? " " : "") + argv[i];
  }
  auto s = session::open(args);
  auto settings = s.home.settings();
  actors::executor_config ec;
  ssh::engine_config sc;
  actors::apply_ssh_settings(settings, s.home.dir, ec, sc);
  long long fanout = args.values.count("f") ? std::stoll(args.value("f")) : 0;
  long long timeout = args.values.count("t") ? std::stoll(args.value("t")) : -1;
  if (fanout < 0 || timeout < -1) {
    throw usage_error("-f and -t take whole numbers.");
  }
  const struct passwd* pw = getpwuid(geteuid());
  std::string user = pw != nullptr ? pw->pw_name : "root";
  auto key = actors::user_key(ec, user);
  if (!std::filesystem::exists(key)) {
    streams.err << "Error: No SSH key is configured for user '" << user << "' (" << key.string()
                << " does not exist); nothing was run.\n";
    return 1;
  }
  auto nr = s.noderange;
  nr.allow_files = false;
  actors::api_call call;
  call.target = args.positional.front();
  auto targets = actors::find_targets(*s.db, call, nr);
  if (!targets.error.empty() || !targets.missing.empty()) {
    streams.err << "Error: "
                << (targets.error.empty() ? store::missing_nodes_message(targets.missing)
                                          : targets.error)
                << '\n';
    return 1;
  }
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  auto pub = key;
  pub += ".pub";
  std::vector<ssh::job> jobs;
  for (const auto& t : targets.nodes) {
    ssh::job j;
    j.node = t.name;
    j.address = t.address;
    j.port = t.port != 0 ? t.port : ec.port;
    j.user = user;
    j.private_key = key;
    j.public_key = std::filesystem::exists(pub) ? pub : std::filesystem::path{};
    j.command = command;
    j.command_timeout = timeout >= 0 ? std::chrono::seconds(timeout) : ec.command_timeout;
    jobs.push_back(std::move(j));
  }
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  size_t failed = 0;
  {
    ssh::engine engine{sc};
    auto names = std::make_shared<std::vector<std::string>>();
    for (const auto& t : targets.nodes) {
      names->push_back(t.name);
    }
    engine.run(
      std::move(jobs),
      std::min<size_t>(fanout > 0 ? static_cast<size_t>(fanout) : ec.fanout, ec.fanout_max),
      [&, names](size_t i, ssh::result r) {
        std::lock_guard<std::mutex> guard{mu};
        const auto& node = (*names)[i];
        print_lines(streams.out, node, r.out);
        print_lines(streams.err, node, r.err);
        if (!r.error.empty()) {
          streams.err << node << ": " << r.message << '\n';
        }
        if (!r.error.empty() || r.rc != 0) {
          ++failed;
        }
        streams.out.flush();
      },
      [&] {
        std::lock_guard<std::mutex> guard{mu};
        done = true;
        cv.notify_all();
      });
    std::unique_lock<std::mutex> lock{mu};
    cv.wait(lock, [&] { return done; });
  }
  return static_cast<int>(std::min<size_t>(failed, 255));
}

} // namespace cws::cli
