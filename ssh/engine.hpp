#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/node_result.hpp"
#include "base/run_meter.hpp"

namespace cws::ssh {

struct copy_spec;

/// How host keys are checked against the known_hosts file.
enum class host_key_policy {
  strict,     ///< unknown or changed keys are refused
  accept_new, ///< unknown keys are added, changed keys refused (OpenSSH's accept-new)
  off,        ///< no checking (labs only)
};

/// Parses `strict`, `accept-new` or `off`.
/// @throws std::invalid_argument otherwise.
host_key_policy parse_host_key_policy(const std::string& text);

/// Engine settings. Every limit is explicit.
struct engine_config {
  std::filesystem::path known_hosts;
  host_key_policy host_keys = host_key_policy::accept_new;
  /// TCP connect, SSH handshake and authentication together.
  std::chrono::milliseconds connect_timeout{10000};
  /// How long an authenticated connection stays pooled without use.
  std::chrono::milliseconds pool_idle{60000};
  /// Most pooled connections; the oldest are closed beyond it.
  size_t max_pooled = 4096;
  /// Most bytes of stdout plus stderr kept per node; the rest is read and dropped.
  size_t output_max = 1024 * 1024;
  /// `ssh -v`: each node's connection steps (address, versions, key exchange, host key,
  /// authentication, command, exit status) as `debug1:` lines on its stderr, before its own.
  bool trace = false;
  /// `ssh -t`: every command gets a pty, as with a command timeout (stdout and stderr merged).
  bool force_pty = false;
};

/// One node's command.
struct job {
  /// The node's name: known_hosts entry and messages.
  std::string node;
  /// IP address to connect to; empty means: resolve `node` with the system resolver.
  std::string address;
  uint16_t port = 22;
  /// Remote user, and the key that authenticates them.
  std::string user;
  std::filesystem::path private_key;
  std::filesystem::path public_key;
  std::string command;
  /// 0 = none. With a timeout the command gets a pty, so closing the channel hangs it up
  /// (SIGHUP) on the node; stdout and stderr then arrive merged.
  std::chrono::milliseconds command_timeout{0};
  /// Files copied over SFTP first (ssh/transfer.hpp); the command then runs after them (with
  /// a push, the renames that make the files appear; xdsh -e, the script). Null: none.
  std::shared_ptr<const copy_spec> copy;
};

/// Counters.
struct engine_stats {
  uint64_t connects = 0;
  uint64_t reuses = 0;
  uint64_t pooled = 0;
};

/// Runs commands on many nodes at once over libssh2 in non-blocking mode: every session is
/// multiplexed on one event-loop thread (epoll), none has a thread or a process of its own.
/// Authenticated connections are pooled per (user, node, address, port, key) and reused.
class engine {
 public:
  explicit engine(engine_config cfg);

  /// Stops the loop; running jobs end with error "disconnected".
  ~engine();

  engine(const engine&) = delete;
  engine& operator=(const engine&) = delete;

  using result_fn = std::function<void(size_t index, base::node_result r)>;

  /// Output of job `index` as it arrives (stream 0 stdout, 1 stderr), in the order the node
  /// sent it; the same bytes are in the job's result. Engine thread: it must be quick.
  using output_fn = std::function<void(size_t index, int stream, const char* data, size_t size)>;

  /// Runs `jobs`, at most `fanout` at once. Calls `on_result` for each job as it ends, then
  /// `on_done`; both on the engine's thread, so they must be quick (post elsewhere).
  /// @returns the run's id for `cancel` (0 for no jobs: `on_done` was called already).
  uint64_t run(std::vector<job> jobs, size_t fanout, result_fn on_result,
               std::function<void()> on_done, output_fn on_output = nullptr);

  /// Ends run `id`: running commands are hung up on the node (SIGHUP to their process group;
  /// with a pty by closing it), waiting ones never start; each still gets its result, with
  /// error `cancelled`, and `on_done` comes after the last. Any thread; a run that has ended
  /// is left alone.
  void cancel(uint64_t id);

  /// The counters so far.
  engine_stats stats() const;

  /// Closes every pooled connection (on the engine's thread, before the next job starts).
  void clear_pool();

  /// Its runs counted (`clusterws_ssh_runs_total` and the rest, docs/observability.md).
  const base::run_meter& meter() const noexcept {
    return *meter_;
  }

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
  std::shared_ptr<base::run_meter> meter_ = std::make_shared<base::run_meter>();
};

} // namespace cws::ssh
