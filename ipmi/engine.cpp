#include "ipmi/engine.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <netdb.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <unordered_map>
#include <utility>

#include "base/event_loop.hpp"
#include "base/fanout.hpp"
#include "base/lru_pool.hpp"
#include "base/task_thread.hpp"
#include "ipmi/session_setup.hpp"

namespace cws::ipmi {

namespace {

using clock = std::chrono::steady_clock;
using base::node_errc;
namespace node_message = base::node_message;

constexpr size_t max_datagram = 1024;

/// A BMC's address as the socket takes it.
struct endpoint {
  sockaddr_storage addr{};
  socklen_t size = 0;
  std::string error; ///< why the name did not resolve
};

endpoint resolve(const std::string& host, uint16_t port) {
  endpoint e;
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  auto service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    e.error = "Could not resolve " + host + ": " + gai_strerror(rc);
    return e;
  }
  std::memcpy(&e.addr, res->ai_addr, res->ai_addrlen);
  e.size = res->ai_addrlen;
  freeaddrinfo(res);
  return e;
}

/// One call of engine::run: its jobs, their addresses, and their bookkeeping.
struct batch {
  std::vector<job> jobs;
  std::vector<endpoint> endpoints; ///< filled on the names thread
  clock::time_point started = clock::now();
  std::shared_ptr<base::fanout_run> run;
};

/// A session with one BMC: its socket and, once set up, the session.
struct connection {
  int fd = -1;
  std::string key; ///< the pool's key
  session s;

  ~connection() {
    if (fd >= 0) {
      ::close(fd);
    }
  }
};

enum class phase { delayed, setting_up, working };

/// A running job.
struct task {
  std::shared_ptr<batch> b;
  size_t index = 0;
  std::unique_ptr<connection> c;
  std::optional<session_setup> setup; ///< while at phase::setting_up
  phase at = phase::setting_up;
  bool reused = false;
  bool refused = false;
  int tries = 0;
  /// Tries a pooled session used up before it was given up: they count against the next
  /// message until the BMC answers, so a dead BMC costs its deadline, not one try more.
  int spent = 0;
  /// The end of the whole conversation (engine_config::node_timeout), from its begin.
  clock::time_point ends = clock::time_point::max();
};

std::string pool_key(const job& j) {
  std::string k = j.address;
  k += '\0';
  k += std::to_string(j.port);
  k += '\0';
  k += j.user;
  k += '\0';
  k += j.password;
  return k;
}

std::vector<std::string> names_of(const std::vector<job>& jobs) {
  std::vector<std::string> names;
  names.reserve(jobs.size());
  for (const auto& j : jobs) {
    names.push_back(j.node);
  }
  return names;
}

/// Tells the BMC the session ends (one datagram, no answer awaited).
void close_session(connection& c) {
  auto packet = c.s.close_packet();
  (void)::send(c.fd, packet.data(), packet.size(), MSG_DONTWAIT);
}

} // namespace

/// The engine on the fan-out kit (base/): each task is base::event_loop work under its id
/// (its socket and its deadline), each run a base::fanout_run in a base::run_registry, idle
/// sessions a base::lru_pool; the session set-up is ipmi::session_setup.
struct engine::impl {
  engine_config cfg;
  base::run_registry runs;
  std::atomic<uint64_t> sessions{0};
  std::atomic<uint64_t> reuses{0};
  std::atomic<uint64_t> pooled{0};

  // -- loop thread only -------------------------------------------------------------
  std::unordered_map<uint64_t, task> tasks;
  base::lru_pool<std::string, std::unique_ptr<connection>> pool{cfg.max_pooled, cfg.pool_idle,
                                                                [](std::unique_ptr<connection>& c) {
                                                                  close_session(*c);
                                                                }};
  uint64_t next_id = 1;

  /// Looks BMC names up off the loop and off the caller's thread (an actor's).
  base::task_thread names;
  /// Last: its thread starts once everything it calls is built.
  base::event_loop loop{handlers()};

  explicit impl(engine_config c) : cfg(std::move(c)) {
    // nop
  }

  ~impl() {
    runs.cancel_all(); // runs still waiting for their names skip the lookups
    names.stop();      // before the loop: it hands runs to the loop
    loop.stop();       // ends what runs (`stopped`)
  }

  base::event_loop::handlers handlers() {
    base::event_loop::handlers h;
    h.ready = [this](uint64_t id, uint32_t) {
      receive(id);
    };
    h.deadline = [this](uint64_t id) {
      expire(id);
    };
    h.turn = [this] {
      if (pool.expire(clock::now()) > 0) {
        pooled = pool.size();
      }
      return pool.next_expiry();
    };
    h.stopped = [this] {
      stop();
    };
    return h;
  }

  // -- loop thread --------------------------------------------------------------------

  /// Starts jobs of `b` while its fanout has a free slot.
  void fill(const std::shared_ptr<batch>& b) {
    while (auto idx = b->run->next_to_start()) {
      start(b, *idx);
    }
  }

  void set_timer(uint64_t id, task& t, clock::time_point when) {
    loop.set_deadline(id, std::min(when, t.ends));
  }

  void start(const std::shared_ptr<batch>& b, size_t idx) {
    auto id = next_id++;
    auto& t = tasks[id];
    t.b = b;
    t.index = idx;
    const auto& j = b->jobs[idx];
    if (!b->endpoints[idx].error.empty()) {
      fail(id, node_errc::resolve, b->endpoints[idx].error);
      return;
    }
    if (j.delay.count() > 0 && clock::now() < b->started + j.delay) {
      t.at = phase::delayed;
      set_timer(id, t, b->started + j.delay);
      return;
    }
    begin(id, t);
  }

  /// The job's BMC session: a pooled one, or a new one.
  void begin(uint64_t id, task& t) {
    const auto& j = t.b->jobs[t.index];
    t.ends = clock::now() + cfg.node_timeout;
    if (auto c = pool.take(pool_key(j))) {
      pooled = pool.size();
      ++reuses;
      t.c = std::move(c);
      t.reused = true;
      loop.watch(t.c->fd, EPOLLIN, id);
      begin_work(id, t);
      return;
    }
    open_session(id, t);
  }

  /// A new session: a socket, then the set-up's first message.
  void open_session(uint64_t id, task& t) {
    const auto& j = t.b->jobs[t.index];
    const auto& ep = t.b->endpoints[t.index];
    if (t.c) {
      loop.unwatch(t.c->fd);
    }
    t.c = std::make_unique<connection>();
    t.reused = false;
    t.c->key = pool_key(j);
    t.c->fd = ::socket(ep.addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (t.c->fd < 0
        || ::connect(t.c->fd, reinterpret_cast<const sockaddr*>(&ep.addr), ep.size) != 0) {
      fail(id, node_errc::unreachable, std::string{"socket: "} + std::strerror(errno));
      return;
    }
    loop.watch(t.c->fd, EPOLLIN, id);
    t.at = phase::setting_up;
    t.setup.emplace(j.user, j.password, privilege_admin);
    t.tries = 0;
    transmit(id, t);
  }

  void send_request(uint64_t id, task& t, request r) {
    t.c->s.ask(std::move(r));
    t.tries = 0;
    transmit(id, t);
  }

  /// Sends the task's current message (again), with its answer's deadline.
  void transmit(uint64_t id, task& t) {
    ++t.tries;
    auto packet = t.setup ? t.setup->packet() : t.c->s.packet();
    if (::send(t.c->fd, packet.data(), packet.size(), 0) < 0 && errno == ECONNREFUSED) {
      t.refused = true;
    }
    set_timer(id, t, clock::now() + t.b->jobs[t.index].timeout);
  }

  void begin_work(uint64_t id, task& t) {
    t.at = phase::working;
    send_request(id, t, t.b->jobs[t.index].work->first());
  }

  void receive(uint64_t id) {
    uint8_t buf[max_datagram];
    for (int i = 0; i < 64; ++i) { // bounded: other sessions get their turn
      auto it = tasks.find(id);
      if (it == tasks.end() || !it->second.c) {
        return;
      }
      auto n = ::recv(it->second.c->fd, buf, sizeof buf, 0);
      if (n < 0) {
        if (errno == ECONNREFUSED) {
          it->second.refused = true; // ICMP port unreachable: keep trying until the deadline
          continue;
        }
        return;
      }
      handle(id, it->second, buf, static_cast<size_t>(n));
    }
  }

  /// One datagram from the task's BMC. Anything that does not fit the current step (a late
  /// answer to an earlier send, noise) is ignored.
  void handle(uint64_t id, task& t, const uint8_t* data, size_t size) {
    if (t.at == phase::setting_up) {
      switch (t.setup->feed(data, size)) {
        case session_setup::progress::ignored: return;
        case session_setup::progress::next:
          t.spent = 0; // it answers
          t.tries = 0;
          transmit(id, t);
          return;
        case session_setup::progress::failed: fail(id, node_errc::auth, t.setup->message()); return;
        case session_setup::progress::established:
          ++sessions;
          t.c->s = t.setup->take();
          t.setup.reset();
          begin_work(id, t);
          return;
      }
    }
    if (t.at != phase::working) {
      return;
    }
    auto r = t.c->s.answer(data, size);
    if (!r) {
      return;
    }
    auto s = t.b->jobs[t.index].work->next(*r);
    if (s.next) {
      send_request(id, t, std::move(*s.next));
      return;
    }
    base::node_result res;
    res.out = std::move(s.out);
    res.error = to_string(s.error);
    res.message = std::move(s.message);
    res.rc = s.error == node_errc::none ? 0 : 1;
    finish(id, std::move(res), true);
  }

  /// The task's deadline has passed: it begins (delayed), sends again, or fails.
  void expire(uint64_t id) {
    auto it = tasks.find(id);
    if (it == tasks.end()) {
      return;
    }
    auto& t = it->second;
    const auto& j = t.b->jobs[t.index];
    if (t.at == phase::delayed) {
      begin(id, t);
      return;
    }
    if (clock::now() >= t.ends) {
      // each answer came in time, the whole did not (a long SEL walk of a slow BMC)
      fail(id, node_errc::timeout,
           "timeout (the conversation with " + j.address + " took longer than "
             + std::to_string(cfg.node_timeout.count() / 1000) + " s: ipmi_node_timeout)");
      return;
    }
    if (t.reused && t.at == phase::working) {
      // a pooled session the BMC has forgotten: a new one, once
      t.spent = t.tries;
      open_session(id, t);
      return;
    }
    if (t.tries + t.spent < std::max(1, j.retries)) {
      transmit(id, t);
      return;
    }
    auto secs = static_cast<double>(j.timeout.count()) / 1000.0;
    char what[160];
    std::snprintf(what, sizeof what, "%s%s:%u after %d tries of %.3g s",
                  t.refused ? "refused by " : "no answer from ", j.address.c_str(), j.port,
                  t.tries + t.spent, secs);
    fail(id, node_errc::timeout, std::string{"timeout ("} + what + ")");
  }

  void fail(uint64_t id, node_errc why, std::string_view message) {
    auto r = base::node_result::failure({}, why, message);
    r.rc = 1;
    finish(id, std::move(r), false);
  }

  /// The task has ended: its session goes to the pool if it is sound (`keep`), its result
  /// to the run, and the run may start its next job (posted: a job that fails at once must
  /// not recurse into the next one).
  void finish(uint64_t id, base::node_result res, bool keep) {
    auto it = tasks.find(id);
    if (it == tasks.end()) {
      return;
    }
    auto& t = it->second;
    loop.clear_deadline(id);
    if (t.c && t.c->fd >= 0) {
      loop.unwatch(t.c->fd);
    }
    if (keep && t.c) {
      auto key = t.c->key;
      pool.put(key, std::move(t.c), clock::now()); // (max_pooled 0: closed at once)
      pooled = pool.size();
    }
    auto b = std::move(t.b);
    auto idx = t.index;
    res.name = b->jobs[idx].node;
    res.reused = t.reused;
    tasks.erase(it);
    b->run->finished(idx, std::move(res));
    if (b->run->unstarted() > 0) {
      loop.post([this, b] { fill(b); });
    }
  }

  /// The ids of the running tasks of `run` (all with null; a copy: ending a task erases it).
  std::vector<uint64_t> task_ids(const base::fanout_state* run) const {
    std::vector<uint64_t> ids;
    for (const auto& [id, t] : tasks) {
      if (run == nullptr || t.b->run.get() == run) {
        ids.push_back(id);
      }
    }
    return ids;
  }

  /// Ends the running jobs of `run` (a command already sent may still take effect on the
  /// BMC), then the waiting ones.
  void end_cancelled(base::fanout_state& run) {
    for (auto id : task_ids(&run)) {
      fail(id, node_errc::cancelled, node_message::cancelled);
    }
    run.end_unstarted(node_errc::cancelled, node_message::cancelled_unstarted);
  }

  /// The loop stops: every job gets its result and every run its end, as api::
  /// node_operation promises: running ones fail, the others never start.
  void stop() {
    for (auto id : task_ids(nullptr)) {
      fail(id, node_errc::disconnected, node_message::stopping);
    }
    for (auto& run : runs.cancel_all()) {
      run->end_unstarted(node_errc::disconnected, node_message::stopped_unstarted);
    }
    pool.clear();
    pooled = 0;
  }
};

engine::engine(engine_config cfg) : impl_(std::make_unique<impl>(std::move(cfg))) {
  // nop
}

engine::~engine() = default;

uint64_t engine::run(std::vector<job> jobs, size_t fanout, result_fn on_result,
                     std::function<void()> on_done) {
  meter_->wrap(jobs.size(), on_result, on_done); // (counted: the metrics page)
  if (jobs.empty()) {
    on_done();
    return 0;
  }
  auto b = std::make_shared<batch>();
  b->run
    = std::make_shared<base::fanout_run>(jobs.size(), fanout, std::move(on_result),
                                         std::move(on_done), base::node_failures(names_of(jobs)));
  b->jobs = std::move(jobs);
  auto id = impl_->runs.add(b->run);
  impl_->names.post([i = impl_.get(), b = std::move(b)] {
    b->endpoints.reserve(b->jobs.size());
    for (const auto& j : b->jobs) {
      b->endpoints.push_back(b->run->cancel_requested() ? endpoint{{}, 0, "cancelled"}
                                                        : resolve(j.address, j.port));
    }
    i->loop.post([i, b] { i->fill(b); });
  });
  return id;
}

void engine::cancel(uint64_t id) {
  if (auto run = impl_->runs.cancel(id)) {
    impl_->loop.post([i = impl_.get(), run] { i->end_cancelled(*run); });
  }
}

engine_stats engine::stats() const {
  return {impl_->sessions.load(), impl_->reuses.load(), impl_->pooled.load()};
}

} // namespace cws::ipmi
