#include "ssh/engine.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "base/event_loop.hpp"
#include "base/fanout.hpp"
#include "base/lru_pool.hpp"
#include "base/task_thread.hpp"
#include "ssh/known_hosts.hpp"
#include "ssh/resolver.hpp"
#include "ssh/session.hpp"

namespace cws::ssh {

namespace {

using clock = std::chrono::steady_clock;
using base::node_errc;
namespace node_message = base::node_message;

/// One call of engine::run: its jobs and their bookkeeping (base::fanout_run).
struct batch {
  std::vector<job> jobs;
  engine::output_fn on_output;
  std::shared_ptr<base::fanout_run> run;
};

/// A running job: its batch (which holds the job) and its session.
struct task {
  std::shared_ptr<batch> b;
  size_t index = 0;
  std::unique_ptr<session> s; // after `b`: it refers to b->jobs[index]
};

std::vector<std::string> names_of(const std::vector<job>& jobs) {
  std::vector<std::string> names;
  names.reserve(jobs.size());
  for (const auto& j : jobs) {
    names.push_back(j.node);
  }
  return names;
}

} // namespace

/// The engine on the fan-out kit (base/): its sessions are base::event_loop work under their
/// ids, its runs base::fanout_run in a base::run_registry; the resolver thread looks names
/// up; the pool and known_hosts are the loop's own.
struct engine::impl {
  engine_config cfg;
  std::atomic<uint64_t> connects{0};
  std::atomic<uint64_t> reuses{0};
  std::atomic<uint64_t> pooled{0};
  base::run_registry runs;

  // -- loop thread only -------------------------------------------------------------
  known_hosts hosts{cfg.known_hosts, cfg.host_keys};
  base::lru_pool<std::string, std::unique_ptr<connection>> pool{cfg.max_pooled, cfg.pool_idle};
  std::unordered_map<uint64_t, task> tasks;
  uint64_t next_id = 1;

  /// Looks names up off the loop: its tasks only touch a batch's jobs, then hand it over.
  base::task_thread names;
  /// Last: its thread starts once everything it calls is built.
  base::event_loop loop{handlers()};
  session_context ctx{cfg, loop, hosts, connects};

  explicit impl(engine_config c) : cfg(std::move(c)) {
    // nop
  }

  ~impl() {
    // runs still waiting for their names skip the lookups; no job starts any more
    runs.cancel_all();
    names.stop(); // before the loop: it hands batches to the loop
    loop.stop();  // ends what runs (`stopped`)
  }

  base::event_loop::handlers handlers() {
    base::event_loop::handlers h;
    h.ready = [this](uint64_t id, uint32_t) {
      drive(id, [](session& s) { s.step(); });
    };
    h.deadline = [this](uint64_t id) {
      drive(id, [](session& s) { s.time_out(); });
    };
    h.turn = [this] {
      if (pool.expire(clock::now()) > 0) {
        pooled = pool.size();
      }
      hosts.save();
      return pool.next_expiry();
    };
    h.stopped = [this] {
      stop();
    };
    return h;
  }

  // -- engine thread ----------------------------------------------------------------

  /// Starts jobs of `b` while its fanout has a free slot.
  void fill(const std::shared_ptr<batch>& b) {
    while (auto idx = b->run->next_to_start()) {
      start(b, *idx);
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

  /// A session is done: its connection goes to the pool (if it may), its result to the
  /// run, and the run may start its next job (posted: a job that fails at once must not
  /// recurse into the next one).
  void finish(std::unordered_map<uint64_t, task>::iterator it) {
    auto b = std::move(it->second.b);
    auto idx = it->second.index;
    auto& s = *it->second.s;
    if (auto conn = s.take_connection()) {
      auto key = conn->key;
      pool.put(key, std::move(conn), clock::now());
      pooled = pool.size();
    }
    auto res = s.take_result();
    tasks.erase(it);
    b->run->finished(idx, std::move(res));
    if (b->run->unstarted() > 0) {
      loop.post([this, b] { fill(b); });
    }
  }

  /// Ends the running jobs of `run` (their commands are hung up on the node), then the
  /// waiting ones.
  void end_cancelled(base::fanout_state& run) {
    for (auto id : task_ids([&](const task& t) { return t.b->run.get() == &run; })) {
      drive(id, [](session& s) { s.cancel(); });
    }
    run.end_unstarted(node_errc::cancelled, node_message::cancelled_unstarted);
  }

  /// The loop stops: every job gets its result and every run its end, as api::
  /// node_operation promises: running ones fail, the others never start.
  void stop() {
    for (auto id : task_ids([](const task&) { return true; })) {
      drive(id, [](session& s) { s.fail(node_errc::disconnected, node_message::stopping); });
    }
    for (auto& run : runs.cancel_all()) {
      run->end_unstarted(node_errc::disconnected, node_message::stopped_unstarted);
    }
    pool.clear();
    pooled = 0;
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
};

engine::engine(engine_config cfg) : impl_(std::make_unique<impl>(std::move(cfg))) {
  // nop
}

engine::~engine() = default;

uint64_t engine::run(std::vector<job> jobs, size_t fanout, result_fn on_result,
                     std::function<void()> on_done, output_fn on_output) {
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
  b->on_output = std::move(on_output);
  auto id = impl_->runs.add(b->run);
  bool resolve
    = std::any_of(b->jobs.begin(), b->jobs.end(), [](const job& j) { return j.address.empty(); });
  auto* i = impl_.get();
  if (resolve) {
    i->names.post([i, b = std::move(b)] {
      if (!b->run->cancel_requested()) {
        resolve_addresses(b->jobs);
      }
      i->loop.post([i, b] { i->fill(b); });
    });
  } else {
    i->loop.post([i, b = std::move(b)] { i->fill(b); });
  }
  return id;
}

void engine::cancel(uint64_t id) {
  if (auto run = impl_->runs.cancel(id)) {
    impl_->loop.post([i = impl_.get(), run] { i->end_cancelled(*run); });
  }
}

engine_stats engine::stats() const {
  return {impl_->connects.load(), impl_->reuses.load(), impl_->pooled.load()};
}

void engine::clear_pool() {
  impl_->loop.post([i = impl_.get()] {
    i->pool.clear();
    i->pooled = 0;
  });
}

} // namespace cws::ssh
