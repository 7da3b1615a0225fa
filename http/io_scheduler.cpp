#include "http/io_scheduler.hpp"

#include <caf/detail/set_thread_name.hpp>
#include <caf/execution_unit.hpp>
#include <caf/resumable.hpp>

#include <algorithm>
#include <deque>
#include <optional>
#include <string>
#include <utility>

namespace cws::http {

namespace {

/// Messages an actor handles before its io thread serves the sessions waiting on it.
constexpr size_t io_throughput = 64;

/// Actors resumed in one go before the io thread's sessions get their turn again.
constexpr size_t jobs_per_turn = 64;

} // namespace

/// One io thread as CAF sees it: where an actor that sends a message queues its receiver.
/// Jobs queued on the thread itself wait in `local` and run one after another in one handler
/// (a request's hops then cost the event loop one turn, not one each).
class io_scheduler::unit : public caf::execution_unit {
 public:
  explicit unit(io_scheduler& owner)
      : caf::execution_unit(&owner.system()), owner(owner), ctx(1), work(ctx.get_executor()) {
  }

  ~unit() override {
    for (auto* job : local) {
      cleanup_and_release(job);
    }
  }

  /// Called on this unit's thread only (CAF's contract, and current_unit_'s).
  void exec_later(caf::resumable* job) override {
    local.push_back(job);
    if (!turn_queued) {
      turn_queued = true;
      net::post(ctx, [this] { run_turn(); });
    }
  }

  void run_turn() {
    for (size_t n = 0; n < jobs_per_turn && !local.empty(); ++n) {
      auto* job = local.front();
      local.pop_front();
      owner.resume(*this, job);
    }
    if (local.empty()) {
      turn_queued = false;
    } else {
      net::post(ctx, [this] { run_turn(); }); // after the sessions that queued meanwhile
    }
  }

  io_scheduler& owner;
  net::io_context ctx;
  std::optional<net::executor_work_guard<io_executor>> work;
  std::deque<caf::resumable*> local;
  bool turn_queued = false;
};

thread_local io_scheduler::unit* io_scheduler::current_unit_ = nullptr;

/// Resumes a job on its io thread; one destroyed unrun (the contexts' end) cleans the job up.
struct io_scheduler::job_handler {
  unit* u;
  caf::resumable* job;

  job_handler(unit* u, caf::resumable* job) : u(u), job(job) {
  }
  job_handler(job_handler&& other) noexcept : u(other.u), job(std::exchange(other.job, nullptr)) {
  }
  job_handler& operator=(job_handler&&) = delete;
  ~job_handler() {
    if (job != nullptr) {
      cleanup_and_release(job);
    }
  }
  void operator()() {
    u->owner.resume(*u, std::exchange(job, nullptr));
  }
};

void io_scheduler::install(caf::actor_system_config& cfg, size_t threads) {
  cfg.module_factories.push_back([threads](caf::actor_system& sys) -> caf::actor_system::module* {
    return new io_scheduler(sys, threads);
  });
}

io_scheduler* io_scheduler::of(caf::actor_system& sys) {
  return dynamic_cast<io_scheduler*>(&sys.scheduler());
}

io_scheduler::io_scheduler(caf::actor_system& sys, size_t threads) : abstract_coordinator(sys) {
  for (size_t i = 0; i < std::max<size_t>(1, threads); ++i) {
    units_.push_back(std::make_unique<unit>(*this));
    contexts_.push_back(&units_.back()->ctx);
  }
  clock_ = std::make_unique<io_clock>(contexts_);
}

io_scheduler::~io_scheduler() {
  stop(); // (a system whose start failed half-way)
}

void io_scheduler::init(caf::actor_system_config& cfg) {
  abstract_coordinator::init(cfg);
  num_workers_ = units_.size();
  max_throughput_ = std::min(max_throughput_, io_throughput);
}

void io_scheduler::start() {
  for (size_t i = 0; i < units_.size(); ++i) {
    threads_.emplace_back([this, i, u = units_[i].get(), name = "cws.io." + std::to_string(i)] {
      caf::detail::set_thread_name(name.c_str());
      system().thread_started();
      current_unit_ = u;
      clock_->bind_thread(i);
      u->ctx.run();
      io_clock::unbind_thread();
      current_unit_ = nullptr;
      system().thread_terminates();
    });
  }
  abstract_coordinator::start();
}

void io_scheduler::stop() {
  if (threads_.empty()) {
    return;
  }
  stop_actors();
  for (auto& u : units_) {
    u->work.reset();
    u->ctx.stop();
  }
  for (auto& t : threads_) {
    t.join();
  }
  threads_.clear();
  stopped_ = true;
  clock_->stop(); // (its timers belong to the contexts)
  // every io thread is gone: what is queued on the contexts (jobs, idle connections) goes
  // with them, and jobs queued meanwhile are cleaned up at once
  contexts_.clear();
  units_.clear();
}

void io_scheduler::enqueue(caf::resumable* job) {
  if (stopped_) {
    cleanup_and_release(job);
  } else if (current_unit_ != nullptr && &current_unit_->owner == this) {
    current_unit_->exec_later(job);
  } else {
    post(*units_[next_worker_++ % units_.size()], job);
  }
}

void io_scheduler::post(unit& u, caf::resumable* job) {
  if (stopped_) {
    cleanup_and_release(job);
    return;
  }
  net::post(u.ctx, job_handler{&u, job});
}

void io_scheduler::resume(unit& u, caf::resumable* job) {
  switch (job->resume(&u, max_throughput_)) {
    case caf::resumable::resume_later:
      post(u, job); // a busy actor goes behind the handlers queued meanwhile (sessions')
      break;
    case caf::resumable::done:
    case caf::resumable::awaiting_message:
    case caf::resumable::shutdown_execution_unit: intrusive_ptr_release(job); break;
  }
}

} // namespace cws::http
