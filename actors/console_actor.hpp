#pragma once

// The console server (docs/consoles.md): holds the serial console of every node whose `cons`
// is set, logs every byte (through its console_io, before anything else sees it), keeps a
// replay buffer per console, and hands consoles to watchers (the WebSocket console, rcons).

#include <caf/actor_system.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "actors/atoms.hpp"
#include "actors/events_actor.hpp"
#include "api/console.hpp"
#include "base/metric.hpp"

namespace cws::actors {

/// How a watcher asks to attach.
enum class console_mode : uint8_t {
  rw,    ///< to write: the writer when nobody writes, else read-only (told who writes)
  ro,    ///< to watch only
  force, ///< to write, taking the console over from its writer (who is told and reads on)
};

/// "rw", "ro", "force".
std::optional<console_mode> parse_console_mode(std::string_view word);
std::string_view console_mode_name(console_mode m);

/// A message for a watcher beside the console's bytes. `kind` is one word a client can act
/// on; `text` is for people.
///  - `readonly`: attached read-only because `holder` writes (rw asked), or a keystroke from
///    a read-only watcher was refused;
///  - `writer`: this watcher now writes;
///  - `takenover`: `holder` took the console over (force): this watcher reads on;
///  - `lost`, `up`: the console went away (reconnecting), came back;
///  - `dropped`: keystrokes were not delivered (the console was not up, or the BMC did not
///    take them);
///  - `break`: the host's side sent a break.
struct console_notice {
  std::string kind;
  std::string text;
  std::string holder;
};

/// A watcher of consoles (a WebSocket session's bridge, rcons's): any actor with this
/// interface. For each console it attached to it receives, in this order: the replay bytes
/// asked for (one console_atom message, when there are any), then every byte of the console
/// as it comes (console_atom), notices between them, and detached_atom when the console
/// server lets go of it (`why`: "too slow", "console no longer held", "stopped").
///
/// Flow control: the watcher acknowledges the bytes it has written out (ack_atom below). A
/// watcher with more than `watcher_queue_bytes` received and not acknowledged is dropped
/// (detached_atom, "too slow"): a slow watcher never slows the log or the other watchers.
using console_watcher
  = caf::typed_actor<caf::reacts_to<console_atom, std::string /*node*/, std::string /*bytes*/>,
                     caf::reacts_to<notice_atom, std::string /*node*/, console_notice>,
                     caf::reacts_to<detached_atom, std::string /*node*/, std::string /*why*/>>;

/// What a watcher asks for.
struct console_attach {
  std::string node;
  console_mode mode = console_mode::rw;
  /// Bytes of the replay buffer sent first (at most what it holds).
  uint64_t replay = 0;
  /// Who (audit, events, and the notices naming the writer) and from where (audit).
  std::string user;
  std::string client;
};

/// The answer to an attach.
struct console_attach_reply {
  /// none: attached; failed: not attached, `message` says why (a node without `cons`, a
  /// console that cannot be held, past console_max, stopped by makeconservercf -d).
  api::errc error = api::errc::none;
  std::string message;
  /// Granted the writer (else read-only).
  bool writer = false;
  /// Who writes, when an rw attach got read-only.
  std::string holder;
  /// force: the writer it took the console from ("" when nobody wrote).
  std::string bumped;
  /// The console's state now (console_status::state).
  std::string state;
};

/// One console's state (status_atom; makeconservercf -V).
struct console_status {
  std::string node;
  /// up, connecting, backoff (reconnecting after a loss or an error), idle (on-demand,
  /// nobody watches), waiting (past console_max), failed (the definitions cannot be held:
  /// `error`), stopped (makeconservercf -d).
  std::string state;
  /// The last error (a wrong password, no answer, ...), kept while not up.
  std::string error;
  size_t watchers = 0;
  std::string writer;
  uint64_t bytes = 0;
  uint64_t reconnects = 0;
};

/// Counters the daemon's metrics read (any thread).
struct console_stats {
  base::gauge held;     ///< consoles holding a slot (connecting, up, backoff)
  base::gauge up;       ///< consoles up
  base::gauge failing;  ///< consoles whose last attempt failed and not up since
  base::gauge watchers; ///< watchers attached
  base::counter bytes;  ///< console bytes received
  base::counter reconnects;
  base::counter dropped_watchers; ///< watchers dropped for not keeping up
};

/// The console server.
///
/// Which consoles: every node with `cons` set (api::read_consoles), read at start and again
/// whenever the change feed shows a change that may matter (api::consoles_affected: a change
/// to nodes only reads those nodes again), or on makeconservercf (-d stops holding a node and
/// writes `consoleenabled=0`, which the definitions then say across restarts, as xCAT's
/// goconserver clears it). `hold = on`: each is held open, reconnecting with exponential
/// backoff (`backoff_min` doubling to `backoff_max`, back to the minimum once up) after a loss
/// or an error; `on-demand`: a console is open only while someone watches. At most `max`
/// consoles are open at once (name order decides who waits); the others are `waiting`, and an
/// attach to one fails naming console_max. Every gap is noted in the node's log and to its
/// watchers:
/// `[-- clusterws: console lost: <reason> -- <time>]`, `[-- clusterws: console back -- <time>]`.
///
/// Watchers: any number read; one writes. An rw attach gets the writer when nobody writes,
/// else read-only with a `readonly` notice naming the writer; force takes it over (the old
/// writer gets `takenover` and reads on). Keystrokes from anyone but the writer are refused
/// (a `readonly` notice). A watcher that ends is detached (monitored). Attach and detach are
/// told to `on_attach` (audit, events).
using console_actor = caf::typed_actor<
  // Attaches watcher `w` (again: its earlier attachment to that node ends first).
  caf::replies_to<attach_atom, console_attach, console_watcher>::with<console_attach_reply>,
  // Detaches `w` from `node`.
  caf::reacts_to<detach_atom, std::string, console_watcher>,
  // Keystrokes for `node` from `w` (its writer only).
  caf::reacts_to<input_atom, std::string, console_watcher, std::string>,
  // A break to `node`'s host from `w` (its writer only).
  caf::reacts_to<break_atom, std::string, console_watcher>,
  // `w` wrote out `bytes` more of what it received from `node`.
  caf::reacts_to<ack_atom, std::string, console_watcher, uint64_t>,
  // Every console's state, in name order.
  caf::replies_to<status_atom>::with<std::vector<console_status>>,
  // An authorized call (the store's protocol): console_log (the log's tail, in
  // `api_result::text`) and conserver (makeconservercf).
  caf::reacts_to<run_atom, api::api_call_ptr, api::authorization, done_ptr>,
  // The change feed (change_subscriber).
  caf::reacts_to<change_set_ptr>, caf::reacts_to<reset_atom, uint64_t>,
  caf::reacts_to<activity_ptr>,
  // Internal: from the console I/O; a reconnect is due; read the definitions again.
  caf::reacts_to<output_atom, uint64_t, std::string>,
  caf::reacts_to<sol_atom, uint64_t, api::console_io_event>,
  caf::reacts_to<retry_atom, std::string, uint64_t>, caf::reacts_to<refresh_atom>,
  // Internal: makeconservercf's `consoleenabled` write is durable: answer the call.
  caf::reacts_to<refresh_atom, api::api_call_ptr, api::authorization, done_ptr>>;

/// An attach or detach, for the audit log and the event stream.
struct console_attach_event {
  std::string what; ///< attached, detached
  std::string node;
  std::string user;
  std::string client;
  std::string mode; ///< rw (the writer) or ro
  std::string why;  ///< detached: "left", "too slow", "console no longer held", "watcher ended"
};

/// How the console server runs (settings console_*).
struct console_config {
  /// The consoles' I/O (required).
  std::shared_ptr<api::console_io> io;
  /// Reads every console's definition (api::read_consoles in the daemon).
  std::function<std::vector<api::console_spec>()> read;
  /// Reads the definitions of the consoles of the nodes named only (api::read_consoles with
  /// nodes in the daemon): a change to a few nodes is followed at a cost that does not grow
  /// with the cluster. None: every change reads every console.
  std::function<std::vector<api::console_spec>(const std::vector<std::string>&)> read_nodes;
  /// Expands makeconservercf's noderange (api::verified_nodes in the daemon; none: a comma
  /// list of names).
  std::function<api::api_result(const api::api_call&, const api::authorization&,
                                std::vector<std::string>&)>
    expand;
  /// The change feed (null: no subscription; makeconservercf and refresh_atom only).
  events_actor events;
  /// Writes makeconservercf's choice into the definitions, so a restart keeps it: node
  /// attribute `consoleenabled` = "0" on `nodes` (held false: -d) or "1" (held again), then
  /// `done` once durable (any thread). None: the choice lives in memory only (tests).
  std::function<void(std::vector<std::string> nodes, bool held,
                     std::function<void(api::api_result)> done)>
    persist;
  /// `console_hold`: true on, false on-demand.
  bool hold = true;
  /// `console_max`: consoles open at once.
  size_t max = 4096;
  std::chrono::milliseconds backoff_min{1000};
  std::chrono::milliseconds backoff_max{60000};
  /// `console_replay_bytes`: the replay buffer of each console.
  size_t replay_bytes = 65536;
  /// `console_watcher_queue_bytes`: bytes a watcher may hold unacknowledged.
  size_t watcher_queue_bytes = 1 << 20;
  /// Where the logs are (GET /nodes/{node}/console/log) and how much of one is read.
  std::string log_dir;
  size_t log_read_max = 16 << 20;
  /// Told of each attach and detach (on the actor's thread; quick). None: nobody.
  std::function<void(const console_attach_event&)> on_attach;
  /// Counters for the metrics (none: not counted).
  std::shared_ptr<console_stats> stats;
  /// The wall clock of the notes (tests set their own).
  std::function<std::chrono::system_clock::time_point()> now;
};

/// Spawns the console server: reads the definitions and opens what it holds.
console_actor spawn_console(caf::actor_system& sys, console_config cfg);

} // namespace cws::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::console_notice)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::console_attach)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::actors::console_attach_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<cws::actors::console_status>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(cws::api::console_io_event)
