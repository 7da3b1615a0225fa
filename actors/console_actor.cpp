#include "actors/console_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "api/console_log.hpp"
#include "api/targets.hpp"
#include "base/log.hpp"
#include "base/text.hpp"

namespace cws::actors {

namespace {

using api::api_result;
using api::console_io_event;
using api::console_spec;
using api::errc;
using clock = std::chrono::system_clock;

enum class state : uint8_t { idle, waiting, connecting, up, backoff, failed, stopped };

const char* state_name(state s) {
  switch (s) {
    case state::idle: return "idle";
    case state::waiting: return "waiting";
    case state::connecting: return "connecting";
    case state::up: return "up";
    case state::backoff: return "backoff";
    case state::failed: return "failed";
    case state::stopped: return "stopped";
  }
  return "?";
}

/// A slot of console_max is taken while the console is open or about to be again.
bool holds_slot(state s) {
  return s == state::connecting || s == state::up || s == state::backoff;
}

struct watch {
  console_watcher who;
  std::string user;
  std::string client;
  bool writer = false;
  uint64_t unacked = 0;
};

struct console {
  console_spec spec;
  state at = state::idle;
  uint64_t id = 0; ///< the open session (0: none)
  bool force_next = false;
  bool ever_up = false;
  bool down_noted = false; ///< a loss is in the log; the next up is "back"
  std::string error;       ///< the last failure while not up
  std::chrono::milliseconds backoff{0};
  uint64_t retry_gen = 0;
  uint64_t bytes = 0;
  uint64_t reconnects = 0;
  api::replay_ring ring{0};
  std::vector<watch> watchers;
};

struct console_state {
  static inline const char* name = "console";
  console_config cfg;
  std::map<std::string, console> consoles; ///< by node, name order
  std::unordered_map<uint64_t, std::string> ids;
  std::set<std::string> unheld; ///< makeconservercf -d
  uint64_t next_id = 1;
  size_t slots = 0;
  /// The consoles `waiting` for a slot, by node (fill_slots looks at these only: a change
  /// costs the same with 10 consoles as with 100,000).
  std::set<std::string> waiting;
  bool refresh_queued = false;
  /// What the queued refresh reads: every console, or only those of `refresh_nodes`.
  bool refresh_all = false;
  std::set<std::string> refresh_nodes;
  /// Watchers monitored, with their attachments.
  std::map<caf::actor_addr, size_t> monitored;
};

using self_ptr = console_actor::stateful_pointer<console_state>;

clock::time_point now(self_ptr self) {
  return self->state.cfg.now ? self->state.cfg.now() : clock::now();
}

void count_state(self_ptr self, state from, state to) {
  auto& st = self->state;
  if (holds_slot(from) != holds_slot(to)) {
    st.slots += holds_slot(to) ? 1 : static_cast<size_t>(-1);
    if (st.cfg.stats) {
      st.cfg.stats->held.add(holds_slot(to) ? 1 : -1);
    }
  }
  if (st.cfg.stats && (from == state::up) != (to == state::up)) {
    st.cfg.stats->up.add(to == state::up ? 1 : -1);
  }
}

void set_state(self_ptr self, console& c, state to) {
  count_state(self, c.at, to);
  if (to == state::waiting && c.at != state::waiting) {
    self->state.waiting.insert(c.spec.node);
  } else if (to != state::waiting && c.at == state::waiting) {
    self->state.waiting.erase(c.spec.node);
  }
  c.at = to;
}

void set_error(self_ptr self, console& c, std::string e) {
  auto& stats = self->state.cfg.stats;
  if (stats && c.error.empty() != e.empty()) {
    stats->failing.add(e.empty() ? -1 : 1);
  }
  c.error = std::move(e);
}

/// Console bytes (or a note) to the ring and every watcher; a watcher past its queue bound
/// is dropped.
void fan_out(self_ptr self, console& c, const std::string& bytes);

void notify(console& c, const console_notice& n) {
  for (auto& w : c.watchers) {
    caf::anon_send(w.who, notice_atom::value, c.spec.node, n);
  }
}

/// A line of clusterws's own: in the log (through the I/O), in the replay, to the watchers.
void note(self_ptr self, console& c, const std::string& what) {
  auto text = "[-- clusterws: " + what + " -- " + api::console_time(now(self)) + "]";
  self->state.cfg.io->note(c.spec.node, text);
  fan_out(self, c, "\r\n" + text + "\r\n");
}

void tell_attach(self_ptr self, const console& c, const watch& w, const char* what,
                 std::string why = {}) {
  if (self->state.cfg.on_attach) {
    self->state.cfg.on_attach(
      {what, c.spec.node, w.user, w.client, w.writer ? "rw" : "ro", std::move(why)});
  }
}

void unmonitor(self_ptr self, const console_watcher& w) {
  auto it = self->state.monitored.find(w.address());
  if (it != self->state.monitored.end() && --it->second == 0) {
    self->demonitor(w.address());
    self->state.monitored.erase(it);
  }
}

void close_console(self_ptr self, console& c);

/// Removes watcher `i` of `c` (told `why` unless it left itself).
void drop_watcher(self_ptr self, console& c, size_t i, const std::string& why, bool tell) {
  auto w = c.watchers[i];
  c.watchers.erase(c.watchers.begin() + static_cast<long>(i));
  if (tell) {
    caf::anon_send(w.who, detached_atom::value, c.spec.node, why);
  }
  if (self->state.cfg.stats) {
    self->state.cfg.stats->watchers.add(-1);
  }
  unmonitor(self, w.who);
  tell_attach(self, c, w, "detached", why);
  if (!self->state.cfg.hold && c.watchers.empty() && holds_slot(c.at)) {
    close_console(self, c); // on-demand: open only while watched
    set_state(self, c, state::idle);
  }
}

void fan_out(self_ptr self, console& c, const std::string& bytes) {
  c.ring.push(bytes);
  auto limit = self->state.cfg.watcher_queue_bytes;
  for (size_t i = 0; i < c.watchers.size();) {
    auto& w = c.watchers[i];
    if (w.unacked + bytes.size() > limit) {
      if (self->state.cfg.stats) {
        self->state.cfg.stats->dropped_watchers.add();
      }
      drop_watcher(self, c, i, "too slow", true);
      continue;
    }
    w.unacked += bytes.size();
    caf::anon_send(w.who, console_atom::value, c.spec.node, bytes);
    ++i;
  }
}

void open_console(self_ptr self, console& c) {
  auto& st = self->state;
  c.id = st.next_id++;
  st.ids[c.id] = c.spec.node;
  set_state(self, c, state::connecting);
  st.cfg.io->open(c.id, c.spec, c.force_next);
}

void close_console(self_ptr self, console& c) {
  if (c.id != 0) {
    self->state.cfg.io->close(c.id);
    self->state.ids.erase(c.id);
    c.id = 0;
  }
  ++c.retry_gen; // a pending reconnect is void
}

/// Opens what should be open and has a slot, in name order.
void fill_slots(self_ptr self) {
  auto& st = self->state;
  for (auto it = st.waiting.begin(); it != st.waiting.end();) {
    if (st.cfg.hold && st.slots >= st.cfg.max) {
      break; // held consoles are all wanted: each waits on
    }
    auto& c = st.consoles.at(*it++); // (set_state below erases the name: step past it first)
    bool wanted = st.cfg.hold || !c.watchers.empty();
    if (!wanted) {
      set_state(self, c, state::idle);
    } else if (st.slots < st.cfg.max) {
      set_error(self, c, {});
      open_console(self, c);
    }
  }
}

/// Lets go of console `c` entirely (removed, cons unset, stopped).
void release(self_ptr self, console& c, const std::string& why) {
  close_console(self, c);
  while (!c.watchers.empty()) {
    drop_watcher(self, c, 0, why, true);
  }
  set_error(self, c, {});
  set_state(self, c, state::idle);
}

/// Where a console that is not open should be: failed, stopped, idle or waiting.
void place(self_ptr self, console& c) {
  auto& st = self->state;
  if (!c.spec.error.empty()) {
    set_state(self, c, state::failed);
  } else if (st.unheld.count(c.spec.node) != 0 || !c.spec.held) {
    set_state(self, c, state::stopped);
  } else if (st.cfg.hold || !c.watchers.empty()) {
    set_state(self, c, state::waiting);
  } else {
    set_state(self, c, state::idle);
  }
}

/// Makes node `spec.node`'s console follow its definition `spec` (a new console, or one
/// whose definition or hold changed).
void follow(self_ptr self, console_spec& spec) {
  auto& st = self->state;
  auto it = st.consoles.find(spec.node);
  if (it == st.consoles.end()) {
    console c;
    c.spec = std::move(spec);
    c.ring = api::replay_ring{st.cfg.replay_bytes};
    c.backoff = st.cfg.backoff_min;
    it = st.consoles.emplace(c.spec.node, std::move(c)).first;
    place(self, it->second);
    return;
  }
  auto& c = it->second;
  if (!c.spec.held && spec.held) {
    st.unheld.erase(spec.node); // the definitions hold it again (chdef consoleenabled=1)
  }
  bool stopped = st.unheld.count(spec.node) != 0 || !spec.held;
  if (c.spec != spec || (stopped && c.at != state::stopped)
      || (!stopped && c.at == state::stopped)) {
    bool was_open = c.id != 0;
    c.spec = std::move(spec);
    if (!c.spec.error.empty() || stopped) {
      release(self, c, stopped ? "stopped" : "console no longer held");
    } else {
      close_console(self, c);
      c.force_next = was_open; // the old session may still hold the payload
    }
    set_state(self, c, state::idle);
    place(self, c);
  }
}

/// The console at `it` is held no longer (its node is gone or has no cons).
std::map<std::string, console>::iterator drop(self_ptr self,
                                              std::map<std::string, console>::iterator it) {
  release(self, it->second, "console no longer held");
  self->state.cfg.io->forget(it->first);
  return self->state.consoles.erase(it);
}

/// Reads the definitions again and makes the consoles follow them: every console's, or
/// (`only`, with cfg.read_nodes) those of the nodes named only.
void refresh(self_ptr self, const std::set<std::string>* only = nullptr) {
  auto& st = self->state;
  bool partial = only != nullptr && st.cfg.read_nodes;
  std::vector<console_spec> specs;
  try {
    specs = partial ? st.cfg.read_nodes(std::vector<std::string>(only->begin(), only->end()))
                    : st.cfg.read();
  } catch (const std::exception& e) {
    base::log(base::log_level::error,
              std::string{"consoles: cannot read the definitions: "} + e.what());
    return;
  }
  std::set<std::string> seen;
  for (auto& spec : specs) {
    if (partial && only->count(spec.node) == 0) {
      continue; // (not asked for: the next full read has it)
    }
    seen.insert(spec.node);
    follow(self, spec);
  }
  if (partial) {
    for (const auto& n : *only) {
      auto it = st.consoles.find(n);
      if (it != st.consoles.end() && seen.count(n) == 0) {
        drop(self, it);
      }
    }
  } else {
    for (auto it = st.consoles.begin(); it != st.consoles.end();) {
      it = seen.count(it->first) == 0 ? drop(self, it) : std::next(it);
    }
  }
  fill_slots(self);
}

/// A refresh soon (one for a burst of changes): of every console, or (`scope.nodes`) of those
/// nodes' only.
void queue_refresh(self_ptr self, const api::console_scope& scope = {true, {}}) {
  auto& st = self->state;
  if (scope.all) {
    st.refresh_all = true;
    st.refresh_nodes.clear();
  } else if (!st.refresh_all) {
    st.refresh_nodes.insert(scope.nodes.begin(), scope.nodes.end());
  }
  if (!self->state.refresh_queued) {
    self->state.refresh_queued = true;
    self->send(self, refresh_atom::value);
  }
}

void schedule_retry(self_ptr self, console& c) {
  auto& st = self->state;
  st.ids.erase(c.id);
  c.id = 0;
  set_state(self, c, state::backoff);
  auto delay = c.backoff;
  c.backoff = std::min(st.cfg.backoff_max, c.backoff * 2);
  self->delayed_send(self, delay, retry_atom::value, c.spec.node, ++c.retry_gen);
}

void on_event(self_ptr self, console& c, const console_io_event& e) {
  using k = console_io_event::kind;
  switch (e.what) {
    case k::up:
      set_state(self, c, state::up);
      set_error(self, c, {});
      c.force_next = false;
      c.backoff = self->state.cfg.backoff_min;
      note(self, c, !c.ever_up ? "console up" : c.down_noted ? "console back" : "console up");
      c.ever_up = true;
      c.down_noted = false;
      notify(c, {"up", "console up", {}});
      break;
    case k::already_active:
    case k::error:
    case k::lost: {
      auto why = e.what == k::already_active
                   ? std::string{"the console is active on another session (taking it over)"}
                 : e.message.empty() ? std::string{"no answer"}
                                     : e.message;
      if (e.what == k::already_active) {
        c.force_next = true;
      }
      // one note per distinct failure, not one per retry
      if (!c.down_noted || c.error != why) {
        note(self, c, "console lost: " + why);
        notify(c, {"lost", "console lost: " + why, {}});
        if (e.what != k::already_active) {
          base::log(base::log_level::warning, "console " + c.spec.node + ": " + why);
        }
      }
      c.down_noted = true;
      set_error(self, c, why);
      ++c.reconnects;
      if (self->state.cfg.stats) {
        self->state.cfg.stats->reconnects.add();
      }
      schedule_retry(self, c);
      break;
    }
    case k::closed:
      // closed on purpose: close_console forgot the id already; nothing to do
      break;
    case k::dropped:
    case k::break_detected:
      for (auto& w : c.watchers) {
        if (w.writer || e.what == k::break_detected) {
          caf::anon_send(w.who, notice_atom::value, c.spec.node,
                         console_notice{e.what == k::dropped ? "dropped" : "break",
                                        e.what == k::dropped ? std::to_string(e.count)
                                                                 + " keystrokes were not delivered"
                                                             : "the host sent a break",
                                        {}});
        }
      }
      break;
  }
}

console_attach_reply attach(self_ptr self, const console_attach& req, const console_watcher& w) {
  auto& st = self->state;
  console_attach_reply reply;
  auto it = st.consoles.find(req.node);
  if (it == st.consoles.end()) {
    reply.error = errc::failed;
    reply.message = req.node + ": no console (its cons attribute is not set)";
    return reply;
  }
  auto& c = it->second;
  reply.state = state_name(c.at);
  if (c.at == state::failed) {
    reply.error = errc::failed;
    reply.message = req.node + ": " + c.spec.error;
    return reply;
  }
  if (c.at == state::stopped) {
    reply.error = errc::failed;
    reply.message = req.node
                    + ": the console is not held (makeconservercf -d); run "
                      "makeconservercf "
                    + req.node;
    return reply;
  }
  if (c.at == state::waiting || (c.at == state::idle && st.slots >= st.cfg.max)) {
    reply.error = errc::failed;
    reply.message = req.node + ": console_max (" + std::to_string(st.cfg.max)
                    + ") consoles are open; this one is not";
    return reply;
  }
  // the same watcher again: its earlier attachment ends first
  for (size_t i = 0; i < c.watchers.size(); ++i) {
    if (c.watchers[i].who == w) {
      drop_watcher(self, c, i, "attached again", false);
      break;
    }
  }
  if (c.at == state::idle) { // on-demand: the first watcher opens it
    open_console(self, c);
  }
  watch nw{w, req.user, req.client, false, 0};
  auto writer
    = std::find_if(c.watchers.begin(), c.watchers.end(), [](const watch& x) { return x.writer; });
  if (req.mode == console_mode::force && writer != c.watchers.end()) {
    writer->writer = false;
    reply.bumped = writer->user;
    caf::anon_send(
      writer->who, notice_atom::value, c.spec.node,
      console_notice{"takenover", req.user + " took the console over; you read on", req.user});
    nw.writer = true;
  } else if (req.mode != console_mode::ro) {
    if (writer == c.watchers.end()) {
      nw.writer = true;
    } else {
      reply.holder = writer->user;
    }
  }
  reply.writer = nw.writer;
  reply.state = state_name(c.at);
  if (!reply.holder.empty()) {
    reply.message = "read-only: " + reply.holder + " has the console (force to take it over)";
  }
  auto replay = c.ring.last(static_cast<size_t>(std::min<uint64_t>(req.replay, c.ring.size())));
  nw.unacked = replay.size();
  if (!replay.empty()) {
    caf::anon_send(w, console_atom::value, c.spec.node, replay);
  }
  if (!reply.holder.empty()) {
    caf::anon_send(w, notice_atom::value, c.spec.node,
                   console_notice{"readonly", reply.message, reply.holder});
  }
  c.watchers.push_back(nw);
  if (st.monitored[w.address()]++ == 0) {
    self->monitor(w);
  }
  if (st.cfg.stats) {
    st.cfg.stats->watchers.add(1);
  }
  tell_attach(self, c, c.watchers.back(), "attached");
  return reply;
}

watch* find_watch(console& c, const console_watcher& w, size_t* index = nullptr) {
  for (size_t i = 0; i < c.watchers.size(); ++i) {
    if (c.watchers[i].who == w) {
      if (index) {
        *index = i;
      }
      return &c.watchers[i];
    }
  }
  return nullptr;
}

console* find(self_ptr self, const std::string& node) {
  auto it = self->state.consoles.find(node);
  return it == self->state.consoles.end() ? nullptr : &it->second;
}

std::vector<console_status> status(self_ptr self) {
  std::vector<console_status> out;
  for (auto& [name, c] : self->state.consoles) {
    console_status s;
    s.node = name;
    s.state = state_name(c.at);
    s.error = c.at == state::failed ? c.spec.error : c.error;
    s.watchers = c.watchers.size();
    for (auto& w : c.watchers) {
      if (w.writer) {
        s.writer = w.user;
      }
    }
    s.bytes = c.bytes;
    s.reconnects = c.reconnects;
    out.push_back(std::move(s));
  }
  return out;
}

/// GET /nodes/{node}/console/log?tail=N (`command`: N, "" for the whole current file).
api_result read_log(self_ptr self, const api::api_call& call, const api::authorization& auth) {
  std::string node = call.target;
  if (self->state.cfg.expand) {
    // a node of the store (a name that is no node, or a rotated file's name, reads nothing)
    std::vector<std::string> names;
    if (auto r = self->state.cfg.expand(call, auth, names); !r.ok()) {
      return r;
    }
    node = names.size() == 1 ? names.front() : std::string{};
  }
  if (!api::console_file_name_ok(node) || node.find(',') != std::string::npos) {
    return api_result::failure(errc::bad_request, "One node name is needed for its console log.");
  }
  size_t lines = std::numeric_limits<size_t>::max();
  if (!call.command.empty()) {
    char* end = nullptr;
    auto n = std::strtoull(call.command.c_str(), &end, 10);
    if (*end != '\0' || call.command[0] == '-' || n > 1000000) {
      return api_result::failure(errc::bad_request,
                                 "tail must be a whole number of lines from 0 to 1000000.");
    }
    lines = static_cast<size_t>(n);
  }
  api_result r;
  auto path = std::filesystem::path{self->state.cfg.log_dir} / node;
  if (auto e = api::console_log_tail(path, lines, self->state.cfg.log_read_max, r.text); !e.ok()) {
    return e;
  }
  return r;
}

/// makeconservercf's nodes (none: every node).
api_result conserver_names(self_ptr self, const api::api_call& call, const api::authorization& auth,
                           std::vector<std::string>& names) {
  if (call.target.empty()) {
    return {};
  }
  if (!self->state.cfg.expand) {
    names = base::split_list(call.target);
    return {};
  }
  return self->state.cfg.expand(call, auth, names);
}

/// makeconservercf: `command` "" holds the named nodes (all: every node, and forgets
/// earlier -d), "-d" stops holding them, "-V" also lists each console's state.
api_result conserver(self_ptr self, const api::api_call& call, const api::authorization& auth) {
  auto& st = self->state;
  std::vector<std::string> names;
  bool all = call.target.empty();
  if (auto r = conserver_names(self, call, auth, names); !r.ok()) {
    return r;
  }
  bool del = call.command == "-d";
  bool verbose = call.command == "-V";
  if (del && all) {
    return api_result::failure(errc::bad_request, "makeconservercf -d needs a noderange.");
  }
  if (del) {
    for (auto& n : names) {
      st.unheld.insert(n);
    }
  } else if (all) {
    st.unheld.clear();
  } else {
    for (auto& n : names) {
      st.unheld.erase(n);
    }
  }
  refresh(self);
  api_result r;
  std::vector<std::string> errors;
  auto report = [&](const console& c) {
    if (c.at == state::failed) {
      errors.push_back(c.spec.node
                       + ": Error: Bad configuration, check attributes under the nodehm "
                         "category ("
                       + c.spec.error + ")");
    } else if (c.at == state::waiting) {
      errors.push_back(c.spec.node + ": Error: not held: console_max (" + std::to_string(st.cfg.max)
                       + ") consoles are open");
    } else if (verbose) {
      r.names.push_back(c.spec.node + ": " + state_name(c.at)
                        + (c.error.empty() ? "" : " (" + c.error + ")"));
    }
  };
  if (del) {
    return r;
  }
  if (all) {
    for (auto& [name, c] : st.consoles) {
      report(c);
    }
  } else {
    for (auto& n : names) {
      if (auto* c = find(self, n)) {
        report(*c);
      }
    }
  }
  if (!errors.empty()) {
    auto f = api_result::failure(std::move(errors));
    return f;
  }
  return r;
}

/// makeconservercf, first step: the nodes whose `consoleenabled` must change are written
/// (cfg.persist), and the call is answered once that is durable (refresh_atom with the call);
/// with nothing to write, at once.
void conserver_begin(self_ptr self, const api::api_call_ptr& call, const api::authorization& auth,
                     const done_ptr& done) {
  auto& st = self->state;
  bool del = call->command == "-d";
  std::vector<std::string> names;
  if (!st.cfg.persist || (del && call->target.empty())
      || !conserver_names(self, *call, auth, names).ok()) {
    (*done)(conserver(self, *call, auth)); // (its errors are said there)
    return;
  }
  std::vector<std::string> change;
  auto consider = [&](const console& c) {
    if (c.spec.held == del) { // -d of a held node, or holding one that is not
      change.push_back(c.spec.node);
    }
  };
  if (call->target.empty()) {
    for (auto& [name, c] : st.consoles) {
      consider(c);
    }
  } else {
    for (auto& n : names) {
      if (auto it = st.consoles.find(n); it != st.consoles.end()) {
        consider(it->second);
      }
    }
  }
  if (change.empty()) {
    (*done)(conserver(self, *call, auth));
    return;
  }
  auto me = caf::actor_cast<console_actor>(self);
  st.cfg.persist(std::move(change), !del, [me, call, auth, done](api_result w) {
    if (!w.ok()) {
      (*done)(std::move(w));
    } else {
      caf::anon_send(me, refresh_atom::value, call, auth, done);
    }
  });
}

console_actor::behavior_type console_impl(self_ptr self, console_config cfg) {
  self->state.cfg = std::move(cfg);
  auto me = caf::actor_cast<console_actor>(self);
  self->state.cfg.io->start({[me](uint64_t id, std::string bytes) {
                               caf::anon_send(me, output_atom::value, id, std::move(bytes));
                             },
                             [me](uint64_t id, console_io_event e) {
                               caf::anon_send(me, sol_atom::value, id, std::move(e));
                             }});
  self->set_down_handler([self](const caf::down_msg& msg) {
    // a watcher ended: every attachment of it ends
    self->state.monitored.erase(msg.source); // (drop_watcher then demonitors nothing)
    for (auto& [name, c] : self->state.consoles) {
      for (size_t i = 0; i < c.watchers.size();) {
        if (c.watchers[i].who.address() == msg.source) {
          drop_watcher(self, c, i, "watcher ended", false);
        } else {
          ++i;
        }
      }
    }
  });
  if (self->state.cfg.events) {
    // subscribed first, then read again once the subscription stands: no change is missed
    self
      ->request(self->state.cfg.events, caf::infinite, subscribe_atom::value,
                caf::actor_cast<change_subscriber>(self), from_now)
      .then([self](uint64_t) { queue_refresh(self); });
  }
  refresh(self);
  return {
    [self](attach_atom, const console_attach& req, const console_watcher& w) {
      return attach(self, req, w);
    },
    [self](detach_atom, const std::string& node, const console_watcher& w) {
      if (auto* c = find(self, node)) {
        size_t i = 0;
        if (find_watch(*c, w, &i)) {
          drop_watcher(self, *c, i, "left", false);
        }
      }
    },
    [self](input_atom, const std::string& node, const console_watcher& w, std::string& keys) {
      auto* c = find(self, node);
      auto* x = c ? find_watch(*c, w) : nullptr;
      if (!x) {
        return;
      }
      if (!x->writer) {
        caf::anon_send(w, notice_atom::value, node,
                       console_notice{"readonly", "read-only: keystrokes are not sent", {}});
      } else if (c->at != state::up) {
        caf::anon_send(w, notice_atom::value, node,
                       console_notice{"dropped", "the console is not up: keystrokes dropped", {}});
      } else {
        self->state.cfg.io->write(c->id, std::move(keys));
      }
    },
    [self](break_atom, const std::string& node, const console_watcher& w) {
      auto* c = find(self, node);
      auto* x = c ? find_watch(*c, w) : nullptr;
      if (x && x->writer && c->at == state::up) {
        self->state.cfg.io->send_break(c->id);
        note(self, *c, "break sent by " + x->user); // conserver tells the others too
      }
    },
    [self](ack_atom, const std::string& node, const console_watcher& w, uint64_t n) {
      auto* c = find(self, node);
      if (auto* x = c ? find_watch(*c, w) : nullptr) {
        x->unacked -= std::min(n, x->unacked);
      }
    },
    [self](status_atom) { return status(self); },
    [self](run_atom, const api::api_call_ptr& call, const api::authorization& auth,
           const done_ptr& done) {
      if (call->op == api::operation::console_log) {
        (*done)(read_log(self, *call, auth));
      } else if (call->op == api::operation::conserver) {
        conserver_begin(self, call, auth, done);
      } else {
        (*done)(api_result::failure(errc::unavailable, "Not a console call."));
      }
    },
    [self](const change_set_ptr& set) {
      if (!set) {
        return;
      }
      // a created node is read alone: its cost must not grow with the cluster
      if (auto scope = api::consoles_affected(*set); !scope.empty()) {
        queue_refresh(self, scope);
      }
    },
    [self](reset_atom, uint64_t) { queue_refresh(self); },
    [](const activity_ptr&) {},
    [self](output_atom, uint64_t id, std::string& bytes) {
      auto it = self->state.ids.find(id);
      if (it == self->state.ids.end()) {
        return; // an earlier session's (logged by the I/O already)
      }
      auto& c = self->state.consoles.at(it->second);
      c.bytes += bytes.size();
      if (self->state.cfg.stats) {
        self->state.cfg.stats->bytes.add(bytes.size());
      }
      fan_out(self, c, bytes);
    },
    [self](sol_atom, uint64_t id, const console_io_event& e) {
      auto it = self->state.ids.find(id);
      if (it == self->state.ids.end()) {
        return;
      }
      on_event(self, self->state.consoles.at(it->second), e);
    },
    [self](retry_atom, const std::string& node, uint64_t gen) {
      auto* c = find(self, node);
      if (c && c->at == state::backoff && c->retry_gen == gen) {
        open_console(self, *c);
      }
    },
    [self](refresh_atom) {
      auto& st = self->state;
      st.refresh_queued = false;
      // nothing queued: asked for from outside, which means every console
      bool all = st.refresh_all || st.refresh_nodes.empty();
      auto nodes = std::move(st.refresh_nodes);
      st.refresh_all = false;
      st.refresh_nodes.clear();
      refresh(self, all ? nullptr : &nodes);
    },
    [self](refresh_atom, const api::api_call_ptr& call, const api::authorization& auth,
           const done_ptr& done) {
      // the write is durable: conserver reads the definitions again (refresh) and answers
      (*done)(conserver(self, *call, auth));
    },
  };
}

} // namespace

std::optional<console_mode> parse_console_mode(std::string_view word) {
  if (word == "rw") {
    return console_mode::rw;
  }
  if (word == "ro") {
    return console_mode::ro;
  }
  if (word == "force") {
    return console_mode::force;
  }
  return std::nullopt;
}

std::string_view console_mode_name(console_mode m) {
  switch (m) {
    case console_mode::rw: return "rw";
    case console_mode::ro: return "ro";
    case console_mode::force: return "force";
  }
  return "rw";
}

console_actor spawn_console(caf::actor_system& sys, console_config cfg) {
  return sys.spawn(console_impl, std::move(cfg));
}

} // namespace cws::actors
