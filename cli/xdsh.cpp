// xdsh: runs a command on a noderange over the same SSH engine as nodeshell, printing
// `node: line` as xCAT's xdsh does (xdsh.1; flags in cli/xdsh_options).

#include <algorithm>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <pthread.h>
#include <pwd.h>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>

#include "api/planner.hpp"
#include "api/settings.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/daemon_route.hpp"
#include "cli/remote.hpp"
#include "cli/xdsh_options.hpp"
#include "ssh/transfer.hpp"

extern char** environ;

namespace cws::cli {

namespace {

/// The most an environment file (-E) may hold: it travels in the command string.
constexpr size_t env_file_max = 64 * 1024;

/// xCAT's nodesyncfiledir default: where xdcp's APPEND keeps its backups on the nodes (-c).
constexpr const char* default_nodesyncfiledir = "/var/xcat/node/syncfiles";

const char* usage_text
  = "Usage: xdsh NODERANGE [options] COMMAND...\n"
    "       xdsh NODERANGE -c | -q | -h | -V\n"
    "Runs COMMAND on every node of NODERANGE over SSH as you (your clusterws key,\n"
    "<home>/ssh/<user>/id_ed25519) and prints each node's output as `node: line`.\n"
    "  -f FANOUT      nodes at once (DSH_FANOUT; default ssh_fanout, 64)\n"
    "  -t SECONDS     end commands still running after SECONDS, on the node too (DSH_TIMEOUT)\n"
    "  -s             print lines as they arrive instead of per node when it ends\n"
    "  -z             print each node's exit status: `node: Remote_command_rc = N`\n"
    "  -Q             print no output of the nodes (exit status and -m messages only)\n"
    "  -m             print `dsh>` progress messages;  -T  print a trace of settings and commands\n"
    "  -v             report nodes that do not answer as not responding (nothing runs there)\n"
    "  -E FILE        run the definitions in FILE before COMMAND (DSH_ENVIRONMENT)\n"
    "  -o OPTIONS     ssh options the engine honours: -v (connection trace), -t (a pty),\n"
    "                 -p PORT, -o Port=, ConnectTimeout=, StrictHostKeyChecking=yes|accept-new,\n"
    "                 LogLevel=, RequestTTY=, BatchMode=yes, -x, -q, -T, -n; others named\n"
    "  -S ksh|csh     the remote shell's syntax for -E/-L/DSH_PATH exports (DSH_SYNTAX)\n"
    "  -L             do not export the local LANG/LC_* to the nodes\n"
    "  -X VARS        ignore the DSH_* variables except the comma-separated VARS\n"
    "  --sudo         run COMMAND under `sudo -n` on the nodes\n"
    "  -c             remove xdcp's backup directory (site.nodesyncfiledir) on the nodes\n"
    "  -q             show the settings xdsh would use;  -V  version\n"
    "  -e             COMMAND is a local script and its arguments: copied to each node's /tmp\n"
    "                 over the same connection (SFTP), run there, and removed\n"
    "Refused with the reason: -K, -r, -i, -B, --devicetype, -l other than you.\n"
    "Ctrl-C ends every remote command and names the nodes still running.\n"
    "Exit status: the number of failed nodes (at most 255).\n";

/// `words` joined by spaces, after `lead` when there are any.
std::string join_words(const std::vector<std::string>& words, const std::string& lead = {}) {
  std::string joined;
  for (const auto& w : words) {
    joined += (joined.empty() ? lead : " ") + w;
  }
  return joined;
}

/// The caller's LANG and LC_* variables, exported to the nodes unless -L.
std::vector<std::pair<std::string, std::string>> local_locale() {
  std::vector<std::pair<std::string, std::string>> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    auto name = kv.substr(0, eq);
    if (eq != std::string::npos && (name == "LANG" || name.rfind("LC_", 0) == 0)) {
      vars.emplace_back(name, kv.substr(eq + 1));
    }
  }
  std::sort(vars.begin(), vars.end());
  return vars;
}

std::string read_env_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in) {
    throw usage_error("Cannot read the environment file " + path + ".");
  }
  std::string text(env_file_max + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > env_file_max) {
    throw usage_error("The environment file " + path + " is larger than 64 KiB.");
  }
  return text;
}

/// Blocks SIGINT, SIGTERM and SIGQUIT in every thread started after it and takes them on one
/// thread of its own, which calls `on_signal` once (Ctrl-C ends the run in order instead of
/// killing the process with commands still running on the nodes).
class signal_watch {
 public:
  explicit signal_watch(std::function<void(int)> on_signal) : on_signal_(std::move(on_signal)) {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGQUIT, SIGUSR2}) {
      sigaddset(&set_, s);
    }
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    thread_ = std::thread([this] {
      for (;;) {
        int sig = 0;
        if (sigwait(&set_, &sig) != 0 || sig == SIGUSR2) {
          return; // SIGUSR2: the destructor's wakeup
        }
        if (!fired_) {
          fired_ = true;
          on_signal_(sig);
        }
      }
    });
  }

  ~signal_watch() {
    pthread_kill(thread_.native_handle(), SIGUSR2);
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

  signal_watch(const signal_watch&) = delete;
  signal_watch& operator=(const signal_watch&) = delete;

 private:
  std::function<void(int)> on_signal_;
  sigset_t set_{};
  sigset_t old_{};
  bool fired_ = false;
  std::thread thread_;
};

/// Prints what the nodes send, in xCAT's shapes, and counts the failures. Engine thread and
/// main thread: every call takes the lock.
class printer {
 public:
  printer(const xdsh_options& o, io& streams) : o_(o), streams_(streams) {
    // nop
  }

  /// -s: output as it arrives, whole lines only (the rest waits for its newline).
  void output(const std::string& node, int stream, const char* data, size_t size) {
    std::lock_guard<std::mutex> guard{mu_};
    if (o_.silent) {
      return;
    }
    auto& pending = partial_[{node, stream}];
    pending.append(data, size);
    size_t start = 0;
    for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      sink(stream) << node << ": " << std::string_view{pending}.substr(start, nl - start) << '\n';
    }
    pending.erase(0, start);
    sink(stream).flush();
  }

  /// A node has ended.
  void result(base::node_result res) {
    std::lock_guard<std::mutex> guard{mu_};
    bool ran = res.error.empty() || res.error == "signal";
    if (!o_.silent) {
      if (o_.stream) { // what is left without a newline
        for (int stream : {0, 1}) {
          auto it = partial_.find({res.name, stream});
          if (it != partial_.end() && !it->second.empty()) {
            sink(stream) << res.name << ": " << it->second << '\n';
          }
        }
      } else {
        print_lines(streams_.out, res.name, res.out);
        print_lines(streams_.err, res.name, res.err);
      }
      if (o_.exit_status && ran && res.rc >= 0) {
        streams_.out << res.name << ": Remote_command_rc = " << res.rc << '\n';
      }
    }
    if (res.error == "timeout") {
      if (timed_out_.empty()) {
        // DSHCLI's handle_signal_dsh on -t's expiry: the message (and its error code 1) the
        // xdsh tests check; the nodes are named together at the end
        streams_.err << "Error: Caught SIGINT - terminating the child processes.\n";
      }
      timed_out_.push_back(res.name);
    } else if (res.error == "cancelled") {
      cancelled_.push_back(res.name);
    } else if (!ran && o_.verify && not_answering(res.error)) {
      streams_.err << res.name
                   << " is not responding, make sure it is a node object and is defined in "
                      "xCATdb. No command will be issued to this host.\n";
    } else if (!res.error.empty() && !o_.silent) {
      streams_.err << res.name << ": " << res.message << '\n';
    }
    bool failed = res.failed();
    failed_ += failed ? 1 : 0;
    if (o_.monitor) {
      streams_.out << "dsh>  Remote_command_" << (failed ? "failed " : "successful ") << res.name
                   << '\n';
    }
    streams_.out.flush();
  }

  /// The run has ended: the nodes -t or Ctrl-C ended, in xCAT's words.
  void finish(int signal) {
    std::lock_guard<std::mutex> guard{mu_};
    if (signal != 0) {
      streams_.err << "Caught SIG"
                   << (signal == SIGINT    ? "INT"
                       : signal == SIGTERM ? "TERM"
                                           : "QUIT")
                   << " - terminating the child processes.\n";
      print_node_list(streams_.err, "Error:  The command was ended on the following nodes.",
                      cancelled_);
    }
    print_timed_out(streams_.err, timed_out_);
    if (o_.monitor) {
      streams_.out << "dsh>  Remote_command_execution_completed\n";
    }
  }

  size_t failed() {
    std::lock_guard<std::mutex> guard{mu_};
    return failed_;
  }

  /// xdsh's exit status: xCAT's client ORs the error codes it gets, here the failed nodes'
  /// count (FAILED_NODES) and -t's error message (1).
  int exit_status() {
    std::lock_guard<std::mutex> guard{mu_};
    auto rc = static_cast<int>(std::min<size_t>(failed_, 255));
    return timed_out_.empty() ? rc : rc | 1;
  }

 private:
  static bool not_answering(const std::string& error) {
    return error == "refused" || error == "connect-timeout" || error == "unreachable"
           || error == "resolve";
  }

  static void print_lines(std::ostream& os, const std::string& node, const std::string& text) {
    for (const auto& line : base::output_lines(text)) {
      os << node << ": " << line << '\n';
    }
  }

  std::ostream& sink(int stream) {
    return stream == 0 ? streams_.out : streams_.err;
  }

  const xdsh_options& o_;
  io& streams_;
  std::mutex mu_;
  std::map<std::pair<std::string, int>, std::string> partial_;
  std::vector<std::string> timed_out_;
  std::vector<std::string> cancelled_;
  size_t failed_ = 0;
};

/// xCAT's -q: the DSH context's variables as the environment holds them (Context/DSH.pm's
/// context_properties, with their older names), then the XCAT context's commands, sorted as
/// show_dsh_config sorts them.
void show_xcat_contexts(std::ostream& out) {
  auto env = [](std::initializer_list<const char*> names) -> std::string {
    for (const char* n : names) {
      if (const char* v = std::getenv(n); v != nullptr && *v != '\0') {
        return v;
      }
    }
    return {};
  };
  const std::vector<std::pair<const char*, std::string>> dsh{
    {"DCP_DEVICE_OPTS", env({"DCP_DEVICE_OPTS"})},
    {"DCP_DEVICE_RCP", env({"DCP_DEVICE_RCP", "DCP_DEVICE_COPY_CMD"})},
    {"DCP_NODE_OPTS", env({"DCP_NODE_OPTS"})},
    {"DCP_NODE_RCP", env({"DCP_NODE_RCP", "DCP_COPY_CMD"})},
    {"DSH_CONTEXT", env({"DSH_CONTEXT"})},
    {"DSH_DEVICE_LIST", env({"DSH_DEVICE_LIST"})},
    {"DSH_DEVICE_OPTS", env({"DSH_DEVICE_OPTS", "DSH_DEVICE_REMOTE_OPTS"})},
    {"DSH_DEVICE_RCP", env({"DSH_DEVICE_RCP"})},
    {"DSH_DEVICE_RSH", env({"DSH_DEVICE_RSH", "DSH_DEVICE_REMOTE_CMD"})},
    {"DSH_ENVIRONMENT", env({"DSH_ENVIRONMENT"})},
    {"DSH_FANOUT", env({"DSH_FANOUT"})},
    {"DSH_LOG", env({"DSH_LOG"})},
    {"DSH_NODEGROUP_PATH", env({"DSH_NODEGROUP_PATH"})},
    {"DSH_NODE_LIST", env({"DSH_NODE_LIST", "DSH_LIST", "WCOLL"})},
    {"DSH_NODE_OPTS", env({"DSH_NODE_OPTS", "DSH_REMOTE_OPTS"})},
    {"DSH_NODE_RCP", env({"DSH_NODE_RCP"})},
    {"DSH_NODE_RSH", env({"DSH_NODE_RSH", "DSH_REMOTE_SHELL", "DSH_REMOTE_CMD"})},
    {"DSH_OUTPUT", env({"DSH_OUTPUT"})},
    {"DSH_PATH", env({"DSH_PATH"})},
    {"DSH_REPORT", env({"DSH_REPORT", "DSH_REPORTS_DIRECTORY"})},
    {"DSH_SYNTAX", env({"DSH_SYNTAX"})},
    {"DSH_TIMEOUT", env({"DSH_TIMEOUT"})},
    {"DSH_VERIFY", env({"DSH_VERIFY"})},
    {"RSYNC_RSH", env({"RSYNC_RSH"})},
  };
  for (const auto& [name, value] : dsh) {
    out << "DSH:" << name << '=' << value << '\n';
  }
  // xCAT names its ssh and scp binaries here; the commands are this program's own engine
  out << "XCAT:RemoteCopyCmd=(clusterws SFTP engine)\n"
      << "XCAT:RemoteShell=(clusterws SSH engine)\n";
}

void show_config(const xdsh_options& o, const api::shell_config& shell,
                 const ssh::engine_config& engine, io& streams) {
  auto& out = streams.out;
  show_xcat_contexts(out);
  out << "clusterws:DSH_FANOUT=" << (o.fanout > 0 ? o.fanout : static_cast<long>(shell.fanout))
      << '\n'
      << "clusterws:DSH_TIMEOUT=" << (o.timeout >= 0 ? std::to_string(o.timeout) : "none") << '\n'
      << "clusterws:DSH_ENVIRONMENT=" << o.env_file << '\n'
      << "clusterws:DSH_NODE_OPTS=" << o.node_options << '\n'
      << "clusterws:DSH_PATH=" << o.path << '\n'
      << "clusterws:DSH_SYNTAX=" << o.syntax << '\n'
      << "clusterws:DSH_NODE_RSH=(built-in SSH engine)\n"
      << "clusterws:ssh_port=" << shell.port << '\n'
      << "clusterws:ssh_connect_timeout=" << engine.connect_timeout.count() / 1000 << '\n'
      << "clusterws:ssh_host_keys="
      << (engine.host_keys == ssh::host_key_policy::strict       ? "strict"
          : engine.host_keys == ssh::host_key_policy::accept_new ? "accept-new"
                                                                 : "off")
      << '\n'
      << "clusterws:ssh_fanout_max=" << shell.fanout_max << '\n'
      << "clusterws:key=" << api::user_key(shell, "<user>").string() << '\n';
}

/// xdsh for a caller who cannot open the store: nodeshell over clusterwsd's local socket
/// (docs/cli.md, "Users other than root"), printed as the direct path prints it. The daemon
/// plans with its own settings, so -o and -q are refused here; -s prints each node's lines
/// when the node ends (the daemon streams whole nodes); Ctrl-C ends xdsh, and the daemon,
/// seeing the connection go, ends the commands on the nodes.
/// Root's xdsh on a head with service nodes goes this way too, with `command` built as the
/// direct path builds it (docs/service-nodes.md, "Root's tools").
int xdsh_remote(const std::filesystem::path& socket, const xdsh_options& o,
                const std::string& command, io& streams) {
  auto stream_off = o;
  stream_off.stream = false;
  printer print{stream_off, streams};
  // Ctrl-C (SIGINT, SIGTERM, SIGQUIT) ends xdsh at once, in xCAT's words: the connection
  // closes with the process, and the daemon, seeing it go, ends the commands on the nodes.
  // (Which nodes were still running only the daemon knows: none are named here.)
  signal_watch signals{[&](int sig) {
    print.finish(sig);
    streams.out.flush();
    streams.err.flush();
    std::_Exit(1);
  }};
  remote{socket}.nodeshell(o.noderange, command, o.fanout, o.timeout,
                           [&](base::node_result res) { print.result(std::move(res)); });
  print.finish(0);
  return print.exit_status();
}

} // namespace

int xdsh(const std::vector<std::string>& argv, io& streams) {
  const struct passwd* pw = getpwuid(geteuid());
  std::string self = pw != nullptr ? pw->pw_name : "root";
  auto o = parse_xdsh(argv, self, [](const char* name) { return std::getenv(name); });
  if (o.help) {
    streams.out << usage_text;
    return 0;
  }
  if (o.version) {
    print_version("xdsh", streams.out);
    return 0;
  }
  if (auto socket = daemon_socket(store::home::resolve(o.home))) {
    // not root: through clusterwsd
    if (!o.node_options.empty() || o.show_config || o.execute) {
      throw usage_error("xdsh -o, -q and -e are not available to users other than root: "
                        "clusterwsd runs the command with its own SSH settings, and copies "
                        "only from copy_root (xdcp, nodecopy).");
    }
    auto command = remote_command(
      o, o.cleanup ? std::string{"rm -rf "} + default_nodesyncfiledir : join_words(o.words),
      local_locale(), o.env_file.empty() ? std::string{} : read_env_file(o.env_file));
    return xdsh_remote(*socket, o, command, streams);
  }
  base::parsed_args home_args;
  if (!o.home.empty()) {
    home_args.values["home"].push_back(o.home);
  }
  auto s = session::open(home_args);
  auto shell = api::shell_settings(s.settings, s.home.dir);
  auto engine_cfg = api::engine_settings(s.settings, s.home.dir);
  auto overrides = parse_node_options(o.node_options, engine_cfg.host_keys);
  if (overrides.port != 0) {
    shell.port = overrides.port;
  }
  engine_cfg.connect_timeout = overrides.connect_timeout.value_or(engine_cfg.connect_timeout);
  engine_cfg.host_keys = overrides.host_keys.value_or(engine_cfg.host_keys);
  engine_cfg.trace = overrides.trace;
  engine_cfg.force_pty = overrides.pty;
  if (o.show_config) {
    show_config(o, shell, engine_cfg, streams);
    return 0;
  }
  std::string command = join_words(o.words);
  std::shared_ptr<api::copy_request> script;
  if (o.execute) { // the first word is a local script: copied over SFTP, run, removed
    script = std::make_shared<api::copy_request>();
    script->execute = true;
    script->entries.push_back({{o.words.front()}, "/tmp/"});
    auto plain = o;
    plain.sudo = false; // the script runs under sudo itself, its path outside any quotes
    command = remote_command(plain, "", local_locale(),
                             o.env_file.empty() ? std::string{} : read_env_file(o.env_file))
              + (o.sudo ? "sudo -n " : "") + ssh::script_token
              + join_words({o.words.begin() + 1, o.words.end()}, " ");
  } else if (o.cleanup) {
    std::string dir = default_nodesyncfiledir;
    auto txn = s.db->read();
    if (auto site = txn.get(store::object_type::site, "clustersite")) {
      dir = std::string{site->find("nodesyncfiledir").value_or(dir)};
    }
    command = "rm -rf " + shell_quote(dir);
  }
  if (!o.execute) {
    command = remote_command(o, command, local_locale(),
                             o.env_file.empty() ? std::string{} : read_env_file(o.env_file));
  }
  // a head with service nodes: through clusterwsd, which delegates (docs/service-nodes.md)
  const char* local_only = o.execute                 ? "-e"
                           : !o.node_options.empty() ? "-o"
                           : o.trace                 ? "-T"
                           : o.monitor               ? "-m"
                                                     : nullptr;
  if (local_only != nullptr) {
    warn_in_process(s, "xdsh", local_only, streams);
  } else if (auto socket = daemon_route(s, "xdsh", streams)) {
    return xdsh_remote(*socket, o, command, streams);
  }

  api::authorization me;
  me.user = self;
  api::api_call call;
  call.op = api::operation::nodeshell;
  call.target = o.noderange;
  call.command = command;
  call.copy = script;
  call.fanout = static_cast<size_t>(o.fanout);
  call.timeout_ms = o.timeout >= 0 ? o.timeout * 1000 : -1;
  auto nr = s.noderange;
  nr.allow_files = false;
  if (o.monitor) {
    streams.out << "dsh>  Dsh_process_id " << getpid() << "\ndsh>  Dsh_initialization_completed\n";
  }
  // Signals are taken before the engine's threads start: they inherit the mask.
  api::node_operation_ptr op;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int caught = 0;
  signal_watch signals{[&](int sig) {
    api::node_operation_ptr running;
    {
      std::lock_guard<std::mutex> guard{mu};
      caught = sig;
      running = op;
    }
    if (running) {
      running->cancel();
    }
  }};
  api::drivers transports;
  transports.shell = shell;
  transports.copy = api::copy_settings(s.settings, s.home.dir);
  transports.ssh = std::make_shared<ssh::engine>(engine_cfg);
  api::node_operation_ptr planned;
  auto r = api::plan(*s.db, call, me, nr, transports, planned);
  {
    std::lock_guard<std::mutex> guard{mu};
    op = planned;
  }
  if (!r.ok()) {
    for (const auto& m : r.messages) {
      streams.err << "Error: " << m << '\n';
    }
    return 1;
  }
  raise_open_files_limit();
  printer print{o, streams};
  const auto& names = op->nodes();
  if (o.trace) {
    // DSHCLI's trace lines (execute_dsh), then clusterws's own
    const auto* rsh = std::getenv("DSH_NODE_RSH");
    streams.out << "TRACE:Default context is XCAT\n"
                << "TRACE:Node RSH is " << (rsh != nullptr ? rsh : "") << '\n'
                << "TRACE: Fanout value is "
                << (o.fanout > 0 ? static_cast<long>(o.fanout) : static_cast<long>(shell.fanout))
                << ".\n"
                << "TRACE: Timeout value is " << (o.timeout >= 0 ? std::to_string(o.timeout) : "")
                << " \n"
                << "TRACE: Verify value is " << (o.verify ? "1" : "") << " \n";
    if (!o.env_file.empty()) {
      streams.out << "TRACE: Environment option specified\n";
    }
    if (o.execute) {
      streams.out << "TRACE: Execute option specified.\n";
    }
    streams.out << "TRACE: user=" << self << " fanout="
                << std::min(o.fanout > 0 ? static_cast<size_t>(o.fanout) : shell.fanout,
                            shell.fanout_max)
                << " timeout=" << (o.timeout >= 0 ? std::to_string(o.timeout) : "none")
                << " ssh_port=" << shell.port
                << " connect_timeout=" << engine_cfg.connect_timeout.count() / 1000 << '\n';
    for (const auto& n : names) {
      streams.out << "Command name: " << self << "@" << n << " " << command << '\n';
    }
  }
  if (o.monitor) {
    if (o.verify) {
      streams.out << "dsh>  Dsh_verifying_hosts\n";
    }
    streams.out << "dsh>  Dsh_remote_execution_started\n";
    for (const auto& n : names) {
      streams.out << "dsh>  Remote_command_started " << n << '\n';
    }
  }
  if (o.stream) {
    op->stream_output([&print, &names](size_t i, int stream, const char* data, size_t size) {
      print.output(names[i], stream, data, size);
    });
  }
  op->start([&](size_t, base::node_result res) { print.result(std::move(res)); },
            [&] {
              std::lock_guard<std::mutex> guard{mu};
              done = true;
              cv.notify_all();
            });
  {
    std::unique_lock<std::mutex> lock{mu};
    if (caught != 0) { // a signal came before the run had started: cancel did nothing then
      lock.unlock();
      op->cancel();
      lock.lock();
    }
    cv.wait(lock, [&] { return done; });
  }
  print.finish(caught);
  return print.exit_status();
}

} // namespace cws::cli
