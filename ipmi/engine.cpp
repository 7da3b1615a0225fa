#include "ipmi/engine.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <iterator>
#include <list>
#include <mutex>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/rand.h>
#include <set>
#include <stdexcept>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <utility>

#include "base/task_thread.hpp"

namespace cws::ipmi {

namespace {

using clock = std::chrono::steady_clock;

constexpr uint8_t netfn_app = 0x06;
constexpr uint8_t cmd_set_privilege = 0x3b;
constexpr uint8_t cmd_close_session = 0x3c;
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

/// One call of engine::run.
struct batch {
  std::vector<job> jobs;
  std::vector<endpoint> endpoints;
  size_t fanout = 1;
  size_t next = 0;
  size_t active = 0;
  size_t remaining = 0;
  engine::result_fn on_result;
  std::function<void()> on_done;
  uint64_t id = 0;
  clock::time_point started = clock::now();
  std::atomic<bool> cancelled{false};
};

/// A session with one BMC: its socket and, once the RAKP exchange is done, its keys.
struct connection {
  int fd = -1;
  std::string key; ///< the pool's key
  handshake h;
  session_keys keys;
  uint32_t out_seq = 1;
  uint8_t rq_seq = 0;
  clock::time_point idle_since;

  ~connection() {
    if (fd >= 0) {
      ::close(fd);
    }
  }
};

enum class phase { delayed, opening, rakp1, rakp3, privilege, working };

/// A running job.
struct task {
  std::shared_ptr<batch> b;
  size_t index = 0;
  std::unique_ptr<connection> c;
  phase at = phase::opening;
  bool reused = false;
  bool refused = false;
  int tries = 0;
  /// Tries a pooled session used up before it was given up: they count against the next
  /// message until the BMC answers, so a dead BMC costs its deadline, not one try more.
  int spent = 0;
  uint8_t tag = 0;
  bytes packet;                   ///< the last set-up message, sent again on timeout
  std::optional<request> pending; ///< the last in-session request
  uint8_t pending_seq = 0;
  clock::time_point deadline;
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

} // namespace

struct engine::impl {
  engine_config cfg;
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  int evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

  // -- shared with other threads (under mu) -----------------------------------------
  std::mutex mu;
  std::deque<std::shared_ptr<batch>> incoming;
  bool stopping = false;
  bool cancel_requested = false;
  std::unordered_map<uint64_t, std::weak_ptr<batch>> runs;
  uint64_t next_run = 1;
  std::atomic<uint64_t> sessions{0};
  std::atomic<uint64_t> reuses{0};
  std::atomic<uint64_t> pooled{0};

  // -- engine thread only -----------------------------------------------------------
  std::unordered_map<uint64_t, task> tasks;
  std::set<std::pair<clock::time_point, uint64_t>> timers;
  std::deque<std::shared_ptr<batch>> waiting;
  /// Idle sessions, oldest first, and where each key's are.
  std::list<std::unique_ptr<connection>> pool;
  std::unordered_multimap<std::string, std::list<std::unique_ptr<connection>>::iterator> pool_index;
  uint64_t next_id = 1;
  std::thread loop_thread;
  /// Looks BMC names up off the loop and off the caller's thread (an actor's).
  base::task_thread names;

  explicit impl(engine_config c) : cfg(std::move(c)) {
    if (epfd < 0 || evfd < 0) {
      throw std::runtime_error("ipmi engine: cannot create epoll/eventfd");
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = 0;
    epoll_ctl(epfd, EPOLL_CTL_ADD, evfd, &ev);
    loop_thread = std::thread([this] { loop(); });
  }

  ~impl() {
    {
      // batches still waiting for their names skip the lookups
      std::lock_guard<std::mutex> guard{mu};
      for (auto& run : runs) {
        if (auto b = run.second.lock()) {
          b->cancelled = true;
        }
      }
    }
    names.stop();
    {
      std::lock_guard<std::mutex> guard{mu};
      stopping = true;
    }
    wake();
    loop_thread.join();
    ::close(evfd);
    ::close(epfd);
  }

  void wake() {
    uint64_t one = 1;
    (void)!::write(evfd, &one, sizeof one);
  }

  void enqueue(std::shared_ptr<batch> b) {
    {
      std::lock_guard<std::mutex> guard{mu};
      incoming.push_back(std::move(b));
    }
    wake();
  }

  // -- engine thread ----------------------------------------------------------------

  void loop() {
    std::vector<epoll_event> events(1024);
    for (;;) {
      bool cancel = false;
      {
        std::lock_guard<std::mutex> guard{mu};
        cancel = std::exchange(cancel_requested, false);
        if (stopping) {
          break;
        }
        for (auto& b : incoming) {
          cancel = cancel || b->cancelled; // cancelled while its names were looked up
          waiting.push_back(std::move(b));
        }
        incoming.clear();
      }
      if (cancel) {
        end_cancelled();
      }
      start_waiting();
      int n = epoll_wait(epfd, events.data(), static_cast<int>(events.size()), next_timeout_ms());
      for (int i = 0; i < n; ++i) {
        auto id = events[static_cast<size_t>(i)].data.u64;
        if (id == 0) {
          uint64_t drained;
          (void)!::read(evfd, &drained, sizeof drained);
          continue;
        }
        receive(id);
      }
      expire();
    }
    std::vector<uint64_t> ids;
    for (const auto& t : tasks) {
      ids.push_back(t.first);
    }
    for (auto id : ids) {
      fail(id, "disconnected", "the service is stopping");
    }
    // and the jobs never started: every node of every batch still gets its result
    {
      std::lock_guard<std::mutex> guard{mu};
      std::move(incoming.begin(), incoming.end(), std::back_inserter(waiting));
      incoming.clear();
    }
    for (auto& b : std::exchange(waiting, {})) {
      end_unstarted(*b, "disconnected", "the service is stopping");
    }
    while (!pool.empty()) {
      close_session(*pool.front());
      pool.pop_front();
    }
  }

  int next_timeout_ms() {
    auto now = clock::now();
    auto best = now + std::chrono::seconds(1);
    if (!timers.empty() && timers.begin()->first < best) {
      best = timers.begin()->first;
    }
    if (!pool.empty()) {
      best = std::min(best, pool.front()->idle_since + cfg.pool_idle);
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(best - now).count();
    return static_cast<int>(std::max<long long>(0, ms) + 1);
  }

  void start_waiting() {
    auto ready = std::move(waiting);
    waiting.clear();
    for (auto& b : ready) {
      while (b->active < b->fanout && b->next < b->jobs.size()) {
        auto idx = b->next++;
        ++b->active;
        start(b, idx);
      }
      if (b->next < b->jobs.size()
          && std::find(waiting.begin(), waiting.end(), b) == waiting.end()) {
        waiting.push_back(b);
      }
    }
  }

  void set_timer(uint64_t id, task& t, clock::time_point when) {
    timers.erase({t.deadline, id});
    t.deadline = std::min(when, t.ends);
    timers.emplace(t.deadline, id);
  }

  void start(const std::shared_ptr<batch>& b, size_t idx) {
    auto id = next_id++;
    auto& t = tasks[id];
    t.b = b;
    t.index = idx;
    const auto& j = b->jobs[idx];
    if (!b->endpoints[idx].error.empty()) {
      fail(id, "resolve", b->endpoints[idx].error);
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
    if (auto c = take_pooled(pool_key(j))) {
      ++reuses;
      t.c = std::move(c);
      t.reused = true;
      watch(id, t);
      begin_work(id, t);
      return;
    }
    open_session(id, t);
  }

  std::unique_ptr<connection> take_pooled(const std::string& key) {
    auto it = pool_index.find(key);
    if (it == pool_index.end()) {
      return nullptr;
    }
    auto c = std::move(*it->second);
    pool.erase(it->second);
    pool_index.erase(it);
    pooled = pool.size();
    return c;
  }

  void watch(uint64_t id, task& t) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = id;
    epoll_ctl(epfd, EPOLL_CTL_ADD, t.c->fd, &ev);
  }

  /// A new session: a socket, then the Open Session Request.
  void open_session(uint64_t id, task& t) {
    const auto& j = t.b->jobs[t.index];
    const auto& ep = t.b->endpoints[t.index];
    if (t.c) {
      epoll_ctl(epfd, EPOLL_CTL_DEL, t.c->fd, nullptr);
    }
    t.c = std::make_unique<connection>();
    t.reused = false;
    t.c->key = pool_key(j);
    t.c->fd = ::socket(ep.addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (t.c->fd < 0
        || ::connect(t.c->fd, reinterpret_cast<const sockaddr*>(&ep.addr), ep.size) != 0) {
      fail(id, "unreachable", std::string{"socket: "} + std::strerror(errno));
      return;
    }
    watch(id, t);
    auto& h = t.c->h;
    RAND_bytes(reinterpret_cast<uint8_t*>(&h.console_sid), sizeof h.console_sid);
    h.console_sid |= 1; // never 0: 0 is "no session"
    RAND_bytes(h.console_rand.data(), static_cast<int>(h.console_rand.size()));
    h.user = j.user;
    h.password = j.password;
    h.role = privilege_admin;
    t.at = phase::opening;
    t.tag = 0;
    send_setup(
      id, t, wrap_plain(payload::open_request, open_session_request(t.tag, h.console_sid, h.role)));
  }

  void send_setup(uint64_t id, task& t, bytes packet) {
    t.packet = std::move(packet);
    t.pending.reset();
    t.tries = 0;
    transmit(id, t);
  }

  void send_request(uint64_t id, task& t, request r) {
    t.c->rq_seq = static_cast<uint8_t>((t.c->rq_seq + 1) & 0x3f);
    t.pending_seq = t.c->rq_seq;
    t.pending = std::move(r);
    t.tries = 0;
    transmit(id, t);
  }

  /// Sends the task's current message (again), with its answer's deadline.
  void transmit(uint64_t id, task& t) {
    ++t.tries;
    if (t.pending) {
      auto& c = *t.c;
      t.packet
        = wrap_session(c.h.bmc_sid, c.out_seq++, c.keys, encode_request(*t.pending, t.pending_seq));
    }
    if (::send(t.c->fd, t.packet.data(), t.packet.size(), 0) < 0 && errno == ECONNREFUSED) {
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
      if (it == tasks.end()) {
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
    auto& c = *t.c;
    auto& h = c.h;
    bool in_session = t.at == phase::privilege || t.at == phase::working;
    auto d = parse_datagram(data, size, in_session ? &c.keys.k1 : nullptr);
    if (!d) {
      return;
    }
    switch (t.at) {
      case phase::delayed: return;
      case phase::opening: {
        auto r
          = d->type == payload::open_response ? parse_open_session_response(d->body) : std::nullopt;
        if (!r || r->tag != t.tag || r->console_sid != h.console_sid) {
          return;
        }
        if (r->status != 0) {
          fail(id, "auth", status_text(r->status));
          return;
        }
        if (r->auth != 1 || r->integrity != 1 || r->confidentiality != 1) {
          fail(id, "auth", "The BMC did not accept cipher suite 3");
          return;
        }
        h.bmc_sid = r->bmc_sid;
        t.spent = 0; // it answers
        t.at = phase::rakp1;
        t.tag = 1;
        send_setup(id, t, wrap_plain(payload::rakp1, rakp1(t.tag, h)));
        return;
      }
      case phase::rakp1: {
        auto r = d->type == payload::rakp2 ? parse_rakp2(d->body) : std::nullopt;
        if (!r || r->tag != t.tag || r->console_sid != h.console_sid) {
          return;
        }
        if (r->status != 0) {
          fail(id, "auth", status_text(r->status));
          return;
        }
        h.bmc_rand = r->bmc_rand;
        h.bmc_guid = r->bmc_guid;
        if (!rakp2_valid(h, r->code)) {
          fail(id, "auth", "Incorrect password provided");
          return;
        }
        c.keys = derive_keys(h);
        t.at = phase::rakp3;
        t.tag = 2;
        send_setup(id, t, wrap_plain(payload::rakp3, rakp3(t.tag, h)));
        return;
      }
      case phase::rakp3: {
        auto r = d->type == payload::rakp4 ? parse_rakp4(d->body) : std::nullopt;
        if (!r || r->tag != t.tag || r->console_sid != h.console_sid) {
          return;
        }
        if (r->status != 0) {
          fail(id, "auth", status_text(r->status));
          return;
        }
        if (!rakp4_valid(h, c.keys, r->icv)) {
          fail(id, "auth", "Invalid integrity check value");
          return;
        }
        ++sessions;
        t.at = phase::privilege;
        send_request(id, t, request{netfn_app, cmd_set_privilege, {h.role}});
        return;
      }
      case phase::privilege:
      case phase::working: break;
    }
    if (d->type != payload::ipmi || !d->encrypted || d->session_id != h.console_sid || !t.pending) {
      return;
    }
    auto plain = decrypt_payload(d->body, c.keys.k2);
    auto r = plain ? parse_response(plain->data(), plain->size()) : std::nullopt;
    if (!r || r->seq != t.pending_seq || r->cmd != t.pending->cmd || r->netfn != t.pending->netfn) {
      return;
    }
    t.pending.reset();
    if (t.at == phase::privilege) {
      if (r->code != 0) {
        fail(id, "auth", completion_text(r->code));
        return;
      }
      begin_work(id, t);
      return;
    }
    auto s = t.b->jobs[t.index].work->next(*r);
    if (s.next) {
      send_request(id, t, std::move(*s.next));
      return;
    }
    base::node_result res;
    res.out = std::move(s.out);
    res.error = std::move(s.error);
    res.message = std::move(s.message);
    res.rc = res.error.empty() ? 0 : 1;
    finish(id, std::move(res), true);
  }

  /// Deadlines that have passed: send again, or fail the node; idle pooled sessions.
  void expire() {
    auto now = clock::now();
    while (!timers.empty() && timers.begin()->first <= now) {
      auto id = timers.begin()->second;
      timers.erase(timers.begin());
      auto it = tasks.find(id);
      if (it == tasks.end()) {
        continue;
      }
      auto& t = it->second;
      const auto& j = t.b->jobs[t.index];
      if (t.at == phase::delayed) {
        begin(id, t);
        continue;
      }
      if (now >= t.ends) {
        // each answer came in time, the whole did not (a long SEL walk of a slow BMC)
        fail(id, "timeout",
             "timeout (the conversation with " + j.address + " took longer than "
               + std::to_string(cfg.node_timeout.count() / 1000) + " s: ipmi_node_timeout)");
        continue;
      }
      if (t.reused && t.at == phase::working) {
        // a pooled session the BMC has forgotten: a new one, once
        t.spent = t.tries;
        open_session(id, t);
        continue;
      }
      if (t.tries + t.spent < std::max(1, j.retries)) {
        transmit(id, t);
        continue;
      }
      auto secs = static_cast<double>(j.timeout.count()) / 1000.0;
      char what[160];
      std::snprintf(what, sizeof what, "%s%s:%u after %d tries of %.3g s",
                    t.refused ? "refused by " : "no answer from ", j.address.c_str(), j.port,
                    t.tries + t.spent, secs);
      fail(id, "timeout", std::string{"timeout ("} + what + ")");
    }
    while (!pool.empty() && pool.front()->idle_since + cfg.pool_idle <= now) {
      drop_oldest();
    }
  }

  void drop_oldest() {
    auto& c = pool.front();
    auto range = pool_index.equal_range(c->key);
    for (auto it = range.first; it != range.second; ++it) {
      if (it->second == pool.begin()) {
        pool_index.erase(it);
        break;
      }
    }
    close_session(*c);
    pool.pop_front();
    pooled = pool.size();
  }

  /// Tells the BMC the session ends (one datagram, no answer awaited).
  void close_session(connection& c) {
    bytes sid;
    for (int i = 0; i < 4; ++i) {
      sid.push_back(static_cast<uint8_t>(c.h.bmc_sid >> (8 * i)));
    }
    c.rq_seq = static_cast<uint8_t>((c.rq_seq + 1) & 0x3f);
    auto msg = encode_request(request{netfn_app, cmd_close_session, sid}, c.rq_seq);
    auto packet = wrap_session(c.h.bmc_sid, c.out_seq++, c.keys, msg);
    (void)::send(c.fd, packet.data(), packet.size(), MSG_DONTWAIT);
  }

  void fail(uint64_t id, std::string error, std::string message) {
    base::node_result r;
    r.error = std::move(error);
    r.message = std::move(message);
    r.rc = 1;
    finish(id, std::move(r), false);
  }

  /// The task has ended: its session goes to the pool if it is sound, its result to the
  /// batch, and the batch may start its next job.
  void finish(uint64_t id, base::node_result res, bool keep) {
    auto it = tasks.find(id);
    if (it == tasks.end()) {
      return;
    }
    auto& t = it->second;
    timers.erase({t.deadline, id});
    if (t.c && t.c->fd >= 0) {
      epoll_ctl(epfd, EPOLL_CTL_DEL, t.c->fd, nullptr);
    }
    if (keep && t.c && cfg.max_pooled > 0) {
      t.c->idle_since = clock::now();
      auto key = t.c->key;
      pool.push_back(std::move(t.c));
      pool_index.emplace(std::move(key), std::prev(pool.end()));
      while (pool.size() > cfg.max_pooled) {
        drop_oldest();
      }
      pooled = pool.size();
    } else if (keep && t.c) {
      close_session(*t.c);
    }
    auto b = std::move(t.b);
    auto idx = t.index;
    res.name = b->jobs[idx].node;
    res.reused = t.reused;
    tasks.erase(it);
    --b->active;
    --b->remaining;
    b->on_result(idx, std::move(res));
    if (b->remaining == 0) {
      done(*b);
    } else if (b->next < b->jobs.size()
               && std::find(waiting.begin(), waiting.end(), b) == waiting.end()) {
      waiting.push_back(b);
    }
  }

  void end_cancelled() {
    std::vector<uint64_t> ids;
    for (const auto& t : tasks) {
      if (t.second.b->cancelled) {
        ids.push_back(t.first);
      }
    }
    for (auto id : ids) {
      fail(id, "cancelled", "The request was cancelled.");
    }
    auto ready = std::move(waiting);
    waiting.clear();
    for (auto& b : ready) {
      if (b->cancelled) {
        end_unstarted(*b, "cancelled", "The request was cancelled before it started.");
      } else {
        waiting.push_back(b);
      }
    }
  }

  /// Gives each job of `b` not started yet its result (`error`), and ends `b` when no job
  /// of it is left running.
  void end_unstarted(batch& b, const char* error, const char* message) {
    while (b.next < b.jobs.size()) {
      auto idx = b.next++;
      base::node_result r;
      r.name = b.jobs[idx].node;
      r.error = error;
      r.message = message;
      --b.remaining;
      b.on_result(idx, std::move(r));
    }
    if (b.remaining == 0) {
      done(b);
    }
  }

  void done(batch& b) {
    {
      std::lock_guard<std::mutex> guard{mu};
      runs.erase(b.id);
    }
    b.on_done();
  }
};

engine::engine(engine_config cfg) : impl_(std::make_unique<impl>(std::move(cfg))) {
  // nop
}

engine::~engine() = default;

uint64_t engine::run(std::vector<job> jobs, size_t fanout, result_fn on_result,
                     std::function<void()> on_done) {
  meter_->wrap(jobs.size(), on_result, on_done); // (counted: the metrics page)
  auto b = std::make_shared<batch>();
  b->jobs = std::move(jobs);
  b->fanout = std::max<size_t>(1, fanout);
  b->remaining = b->jobs.size();
  b->on_result = std::move(on_result);
  b->on_done = std::move(on_done);
  if (b->jobs.empty()) {
    b->on_done();
    return 0;
  }
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> guard{impl_->mu};
    id = b->id = impl_->next_run++;
    impl_->runs.emplace(id, b);
  }
  impl_->names.post([i = impl_.get(), b = std::move(b)]() mutable {
    b->endpoints.reserve(b->jobs.size());
    for (const auto& j : b->jobs) {
      b->endpoints.push_back(b->cancelled ? endpoint{{}, 0, "cancelled"}
                                          : resolve(j.address, j.port));
    }
    i->enqueue(std::move(b));
  });
  return id;
}

void engine::cancel(uint64_t run) {
  {
    std::lock_guard<std::mutex> guard{impl_->mu};
    auto it = impl_->runs.find(run);
    auto b = it == impl_->runs.end() ? nullptr : it->second.lock();
    if (!b) {
      return;
    }
    b->cancelled = true;
    impl_->cancel_requested = true;
  }
  impl_->wake();
}

engine_stats engine::stats() const {
  return {impl_->sessions.load(), impl_->reuses.load(), impl_->pooled.load()};
}

} // namespace cws::ipmi
