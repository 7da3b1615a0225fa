#include "ssh/engine.hpp"

#include <algorithm>
#include <deque>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <utility>

#include "base/task_thread.hpp"
#include "ssh/deadlines.hpp"
#include "ssh/known_hosts.hpp"
#include "ssh/pool.hpp"
#include "ssh/resolver.hpp"
#include "ssh/session.hpp"

namespace cws::ssh {

namespace {

using clock = std::chrono::steady_clock;

/// One call of engine::run.
struct batch {
  std::vector<job> jobs;
  size_t fanout = 1;
  size_t next = 0;
  size_t active = 0;
  size_t remaining = 0;
  engine::result_fn on_result;
  std::function<void()> on_done;
  engine::output_fn on_output;
  uint64_t id = 0;
  /// Set by engine::cancel on another thread; the engine thread ends the batch's jobs.
  std::atomic<bool> cancelled{false};
};

/// A running job: its batch (which holds the job) and its session.
struct task {
  std::shared_ptr<batch> b;
  size_t index = 0;
  std::unique_ptr<session> s; // after `b`: it refers to b->jobs[index]
};

} // namespace

/// The event loop: one thread multiplexes every session with epoll; the resolver thread
/// looks names up; the pool, the deadlines and known_hosts are the loop's own.
struct engine::impl {
  engine_config cfg;
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  int evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

  // -- shared with other threads (under mu) -----------------------------------------
  std::mutex mu;
  std::deque<std::shared_ptr<batch>> incoming;
  bool stopping = false;
  bool clear_requested = false;
  bool cancel_requested = false;
  /// Batches not finished yet, by id (for cancel).
  std::unordered_map<uint64_t, std::weak_ptr<batch>> runs;
  uint64_t next_run = 1;
  std::atomic<uint64_t> connects{0};
  std::atomic<uint64_t> reuses{0};
  std::atomic<uint64_t> pooled{0};

  // -- engine thread only -----------------------------------------------------------
  known_hosts hosts{cfg.known_hosts, cfg.host_keys};
  ssh::pool pool{cfg.max_pooled, cfg.pool_idle};
  deadlines timers;
  session_context ctx{cfg, epfd, hosts, timers, connects};
  std::unordered_map<uint64_t, task> tasks;
  std::deque<std::shared_ptr<batch>> waiting; // batches with jobs not yet started
  uint64_t next_id = 1;

  /// Looks names up off the loop: its tasks only touch a batch's jobs, then hand it to
  /// `incoming`.
  base::task_thread names;
  std::thread loop_thread;

  explicit impl(engine_config c) : cfg(std::move(c)) {
    if (epfd < 0 || evfd < 0) {
      throw std::runtime_error("ssh engine: cannot create epoll/eventfd");
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = 0; // id 0: the wakeup eventfd
    epoll_ctl(epfd, EPOLL_CTL_ADD, evfd, &ev);
    loop_thread = std::thread([this] { loop(); });
  }

  ~impl() {
    {
      // batches still waiting for their names skip the lookups and end cancelled
      std::lock_guard<std::mutex> guard{mu};
      for (auto& run : runs) {
        if (auto b = run.second.lock()) {
          b->cancelled = true;
        }
      }
    }
    names.stop(); // before the loop: it hands batches to the loop and wakes it
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

  /// Hands `b` to the loop (any thread).
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
          cancel = cancel || b->cancelled; // cancelled while its names were resolved
          waiting.push_back(std::move(b));
        }
        incoming.clear();
        if (clear_requested) {
          pool.clear();
          pooled = 0;
          clear_requested = false;
        }
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
        drive(id, [](session& s) { s.step(); });
      }
      expire();
      hosts.save();
    }
    // shutting down: every job gets its result and every batch its end, as api::
    // node_operation promises: running ones fail, the others (beyond the fanout, or handed
    // over after the last turn) never start
    {
      std::lock_guard<std::mutex> guard{mu};
      std::move(incoming.begin(), incoming.end(), std::back_inserter(waiting));
      incoming.clear();
    }
    for (auto id : task_ids([](const task&) { return true; })) {
      drive(id, [](session& s) { s.fail("disconnected", "the service is stopping"); });
    }
    for (auto& b : std::exchange(waiting, {})) {
      end_unstarted(*b, "disconnected", "The service stopped before the command started.");
    }
    pool.clear();
  }

  /// Until the next deadline or pool expiry, at most a second; +1 so that it has passed.
  int next_timeout_ms() {
    auto now = clock::now();
    auto best = now + std::chrono::seconds(1);
    for (auto when : {timers.next(), pool.next_expiry()}) {
      if (when && *when < best) {
        best = *when;
      }
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(best - now).count();
    return static_cast<int>(std::max<long long>(0, ms) + 1);
  }

  /// Starts jobs of waiting batches, each within its fanout.
  void start_waiting() {
    auto ready = std::move(waiting);
    waiting.clear();
    for (auto& b : ready) {
      while (b->active < b->fanout && b->next < b->jobs.size()) {
        auto idx = b->next++;
        ++b->active;
        start(b, idx); // may finish at once and queue `b` again
      }
      if (b->next < b->jobs.size()
          && std::find(waiting.begin(), waiting.end(), b) == waiting.end()) {
        waiting.push_back(b);
      }
    }
  }

  void start(const std::shared_ptr<batch>& b, size_t idx) {
    auto id = next_id++;
    const auto& j = b->jobs[idx];
    auto s = std::make_unique<session>(id, j, ctx);
    if (b->on_output) {
      s->on_output([b = b.get(), idx](int stream, const char* data, size_t size) {
        b->on_output(idx, stream, data, size);
      });
    }
    tasks.emplace(id, task{b, idx, std::move(s)});
    auto conn = pool.take(pool_key(j));
    if (conn) {
      ++reuses;
      pooled = pool.size();
    }
    drive(id, [&](session& s) { s.start(std::move(conn)); });
  }

  /// Runs `f` on the session of task `id` if it still runs; finishes the task if that ended it.
  template<class F>
  void drive(uint64_t id, F&& f) {
    auto it = tasks.find(id);
    if (it == tasks.end()) {
      return;
    }
    f(*it->second.s);
    if (it->second.s->done()) {
      finish(it);
    }
  }

  /// The ids of the running tasks that `pred` picks (a copy: ending a task erases it).
  template<class Pred>
  std::vector<uint64_t> task_ids(Pred pred) const {
    std::vector<uint64_t> ids;
    for (const auto& [id, t] : tasks) {
      if (pred(t)) {
        ids.push_back(id);
      }
    }
    return ids;
  }

  /// A session is done: its connection goes to the pool (if it may), its result to the
  /// batch, and the batch may start its next job.
  void finish(std::unordered_map<uint64_t, task>::iterator it) {
    auto b = std::move(it->second.b);
    auto idx = it->second.index;
    auto& s = *it->second.s;
    if (auto conn = s.take_connection()) {
      pool.put(std::move(conn), clock::now());
      pooled = pool.size();
    }
    auto res = s.take_result();
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

  /// Ends the jobs of cancelled batches: running ones are closed (which hangs up their
  /// commands), waiting ones never start. Every job still gets its result.
  void end_cancelled() {
    for (auto id : task_ids([](const task& t) { return t.b->cancelled.load(); })) {
      drive(id, [](session& s) { s.cancel(); });
    }
    auto ready = std::move(waiting);
    waiting.clear();
    for (auto& b : ready) {
      if (!b->cancelled) {
        waiting.push_back(b);
        continue;
      }
      end_unstarted(*b, "cancelled", "The command was cancelled before it started.");
    }
  }

  /// Gives each job of `b` not started yet its result (`error`, `message`); the batch ends
  /// when none runs.
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

  /// A batch has ended: its last callback.
  void done(batch& b) {
    {
      std::lock_guard<std::mutex> guard{mu};
      runs.erase(b.id);
    }
    b.on_done();
  }

  /// Deadlines that have passed (connect and command timeouts) and idle pooled connections.
  void expire() {
    auto now = clock::now();
    for (auto id : timers.take_due(now)) {
      drive(id, [](session& s) { s.time_out(); });
    }
    if (pool.expire(now) > 0) {
      pooled = pool.size();
    }
  }
};

engine::engine(engine_config cfg) : impl_(std::make_unique<impl>(std::move(cfg))) {
  // nop
}

engine::~engine() = default;

uint64_t engine::run(std::vector<job> jobs, size_t fanout, result_fn on_result,
                     std::function<void()> on_done, output_fn on_output) {
  meter_->wrap(jobs.size(), on_result, on_done); // (counted: the metrics page)
  auto b = std::make_shared<batch>();
  b->jobs = std::move(jobs);
  b->fanout = std::max<size_t>(1, fanout);
  b->remaining = b->jobs.size();
  b->on_result = std::move(on_result);
  b->on_done = std::move(on_done);
  b->on_output = std::move(on_output);
  if (b->jobs.empty()) {
    b->on_done();
    return 0;
  }
  bool resolve
    = std::any_of(b->jobs.begin(), b->jobs.end(), [](const job& j) { return j.address.empty(); });
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> guard{impl_->mu};
    id = b->id = impl_->next_run++;
    impl_->runs.emplace(id, b);
  }
  if (resolve) {
    impl_->names.post([i = impl_.get(), b = std::move(b)]() mutable {
      if (!b->cancelled) {
        resolve_addresses(b->jobs);
      }
      i->enqueue(std::move(b));
    });
  } else {
    impl_->enqueue(std::move(b));
  }
  return id;
}

void engine::cancel(uint64_t run) {
  {
    std::lock_guard<std::mutex> guard{impl_->mu};
    auto it = impl_->runs.find(run);
    auto b = it == impl_->runs.end() ? nullptr : it->second.lock();
    if (!b) {
      return; // ended already
    }
    b->cancelled = true;
    impl_->cancel_requested = true;
  }
  impl_->wake();
}

engine_stats engine::stats() const {
  return {impl_->connects.load(), impl_->reuses.load(), impl_->pooled.load()};
}

void engine::clear_pool() {
  {
    std::lock_guard<std::mutex> guard{impl_->mu};
    impl_->clear_requested = true;
  }
  impl_->wake();
}

} // namespace cws::ssh
