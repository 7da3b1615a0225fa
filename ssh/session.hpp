#pragma once

#include <libssh2.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/event_loop.hpp"
#include "base/node_errc.hpp"
#include "base/node_result.hpp"
#include "ssh/connection.hpp"
#include "ssh/engine.hpp"
#include "ssh/known_hosts.hpp"
#include "ssh/transfer.hpp"

namespace cws::ssh {

/// What the sessions of one engine share. The engine owns it; it outlives every session.
struct session_context {
  const engine_config& cfg;
  /// The engine's loop: a session watches its own socket there and keeps its connect or
  /// command deadline, both under its id.
  base::event_loop& loop;
  known_hosts& hosts;
  /// Logins so far (engine_stats::connects).
  std::atomic<uint64_t>& connects;
};

/// One node's job, as a state machine that never blocks: connect, handshake, host key check,
/// authentication, channel, pty (with a command timeout), exec, read, close. Each call goes
/// as far as it can without waiting and leaves the socket watched in the direction libssh2
/// waits for; the engine calls `step` when it is ready. Once `done`, the engine takes the
/// result and, if the command ended cleanly, the connection for the pool. Engine thread only.
class session {
 public:
  /// The session of `j` (which must outlive it), known to the loop as `id` (not 0).
  session(uint64_t id, const job& j, session_context& ctx);
  ~session();

  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// Starts: on `pooled`, an authenticated connection, from the channel on; else connects.
  void start(std::unique_ptr<connection> pooled);

  /// Goes on after an event on the socket.
  void step();

  /// Ends the job with error `code`. The connection is closed, which hangs up a running
  /// command.
  void fail(base::node_errc code, std::string_view message);

  /// Its deadline passed: `connect-timeout` until authenticated, `timeout` after.
  void time_out();

  /// Ends the job with error `cancelled`. A command already running without a pty is ended on
  /// the node first: a second channel on the same connection sends SIGHUP to its process
  /// group (libssh2 1.10 cannot send a signal over the channel, and closing a channel without
  /// a pty leaves the command running). Bounded by the connect timeout.
  void cancel();

  /// Where output goes as it arrives (stream 0 stdout, 1 stderr), besides the result.
  using output_fn = std::function<void(int stream, const char* data, size_t size)>;

  /// Sets the output callback; before `start`.
  void on_output(output_fn f) {
    on_output_ = std::move(f);
  }

  /// The job has ended (result ready).
  bool done() const noexcept {
    return done_;
  }

  /// The result; once `done`.
  base::node_result take_result() {
    return std::move(res_);
  }

  /// The connection, if it can serve another job (the command ended cleanly); else null.
  /// Once `done`.
  std::unique_ptr<connection> take_connection() {
    return std::move(conn_);
  }

 private:
  enum class phase {
    connect,
    handshake,
    auth,
    copy,
    open,
    pty,
    exec,
    read,
    close,
    wait_closed,
    kill_open, // cancel: a second channel that hangs the command up
    kill_exec,
    kill_wait,
  };

  void connect_fresh();
  void connect_failed(int err);
  bool start_session();
  bool retry_fresh();
  void append(int stream, const char* buf, size_t n);
  void trace(const std::string& line);
  void trace_handshake(LIBSSH2_SESSION* s);
  bool wants_pty() const noexcept;
  void take_pid_marker(const char* buf, size_t n);
  bool step_kill(LIBSSH2_SESSION* s);
  void start_kill();
  void watch(uint32_t events);
  void wait_for_session();
  void set_command_deadline();
  void finish(bool keep_connection);

  uint64_t id_;
  const job& j_;
  session_context& ctx_;
  std::unique_ptr<connection> conn_;
  LIBSSH2_CHANNEL* channel_ = nullptr;
  LIBSSH2_CHANNEL* kill_channel_ = nullptr;
  /// The job's SFTP part (xdcp, xdsh -e), before its command.
  std::unique_ptr<transfer> copy_;
  /// The command run: the job's, or what the copy leaves to run (renames, the script).
  /// Without a pty it is sent after a marker printing the shell's pid (taken out of stdout),
  /// so that cancel can end its process group.
  std::string command_;
  /// Stdout's start while the marker line is not complete yet.
  std::string head_;
  bool marker_done_ = false;
  long remote_pid_ = 0;
  /// Cancelled before the pid marker was read: the kill waits for it.
  bool cancel_pending_ = false;
  output_fn on_output_;
  phase ph_ = phase::connect;
  bool retried_ = false;
  bool reused_ = false;
  bool done_ = false;
  base::node_result res_;
};

} // namespace cws::ssh
