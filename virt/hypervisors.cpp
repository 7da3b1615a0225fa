#include "virt/hypervisors.hpp"

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "base/deadlines.hpp"
#include "base/fanout.hpp"
#include "virt/inventory.hpp"

namespace cws::virt {

namespace {

using clock = std::chrono::steady_clock;
using base::node_errc;
namespace node_message = base::node_message;

/// One call of hypervisors::run: its jobs and their bookkeeping (base::fanout_run).
struct batch {
  std::vector<vm_job> jobs;
  std::shared_ptr<base::fanout_run> run;
};

/// A started job, known to the workers and the deadline thread by an id of its own.
struct started {
  std::shared_ptr<batch> b;
  size_t index = 0;
  uint64_t id = 0;
};

/// A hypervisor connection, shared by the workers.
struct connection {
  std::mutex open_mu; // one opener at a time
  virConnectPtr conn = nullptr;
  clock::time_point last_used;
  int users = 0;
};

std::string last_error() {
  const char* msg = virGetLastErrorMessage();
  return msg != nullptr ? msg : "unknown libvirt error";
}

/// libvirt prints every error on stderr unless told otherwise: errors go into results here.
void quiet(void*, virErrorPtr) {
  // nop
}

base::node_result failure(const std::string& node, node_errc code, std::string_view message) {
  return base::node_result::failure(node, code, message);
}

/// xCAT's kvm plugin reads running, blocked and no-state as on, everything else (paused,
/// shutting down, shut off, crashed) as off.
bool is_on(virDomainPtr d) {
  int state = 0;
  int reason = 0;
  if (virDomainGetState(d, &state, &reason, 0) != 0) {
    return false;
  }
  return state == VIR_DOMAIN_RUNNING || state == VIR_DOMAIN_BLOCKED || state == VIR_DOMAIN_NOSTATE;
}

/// The action on domain `d`, answering the state text xCAT's kvm plugin prints, or a failure.
base::node_result act(const vm_job& j, virDomainPtr d) {
  base::node_result r;
  r.name = j.node;
  r.rc = 0;
  bool on = is_on(d);
  int rc = 0;
  switch (j.action) {
    case power_action::state: r.out = on ? "on" : "off"; break;
    case power_action::on:
      rc = on ? 0 : virDomainCreate(d);
      r.out = "on";
      break;
    case power_action::off:
      rc = on ? virDomainDestroy(d) : 0;
      r.out = "off";
      break;
    case power_action::softoff: // asks the guest; the state right after, as xCAT prints it
      rc = on ? virDomainShutdown(d) : 0;
      r.out = rc == 0 && is_on(d) ? "on" : "off";
      break;
    case power_action::reset: // an off machine stays off
      rc = on ? virDomainReset(d, 0) : 0;
      r.out = on ? "reset" : "off";
      break;
    case power_action::boot: // the state before, then what was done
      rc = on ? virDomainReset(d, 0) : virDomainCreate(d);
      r.out = on ? "on reset" : "off on";
      break;
    case power_action::inventory:
      if (char* xml = virDomainGetXMLDesc(d, 0)) {
        r.out = inventory_text(xml);
        free(xml);
      } else {
        rc = -1;
      }
      break;
  }
  if (rc != 0) {
    return failure(j.node, node_errc::libvirt, last_error());
  }
  return r;
}

} // namespace

std::optional<power_action> parse_power_action(std::string_view word) {
  static const std::pair<std::string_view, power_action> words[] = {
    {"on", power_action::on},           {"off", power_action::off},
    {"softoff", power_action::softoff}, {"reset", power_action::reset},
    {"boot", power_action::boot},       {"stat", power_action::state},
    {"state", power_action::state},     {"status", power_action::state},
  };
  for (const auto& [w, a] : words) {
    if (w == word) {
      return a;
    }
  }
  return std::nullopt;
}

std::string vmhost_uri(std::string_view vmhost) {
  if (vmhost.find("://") != std::string_view::npos) {
    return std::string{vmhost};
  }
  return "qemu+ssh://root@" + std::string{vmhost} + "/system";
}

struct hypervisors::impl {
  hypervisor_config cfg;
  base::run_registry runs;
  mutable std::mutex mu;
  std::condition_variable work_cv;  // workers: a job is ready, or stopping
  std::condition_variable timer_cv; // the deadline thread: a new deadline, or stopping
  std::deque<started> ready;
  /// Started jobs whose result has not come yet (a worker's or a deadline's), by id.
  std::unordered_map<uint64_t, started> live;
  base::deadlines deadlines;
  uint64_t next_job = 1;
  std::map<std::string, std::shared_ptr<connection>> conns;
  bool stopping = false;
  size_t working = 0;              // workers whose thread has not ended yet
  std::condition_variable done_cv; // stop(): a worker ended
  std::vector<std::thread> workers;
  std::thread timer;

  explicit impl(hypervisor_config c) : cfg(std::move(c)) {
    static std::once_flag once;
    std::call_once(once, [] {
      virInitialize();
      virSetErrorFunc(nullptr, quiet);
    });
  }

  /// Starts the threads; each worker owns `self`, so one left behind by `stop` keeps what it
  /// uses alive.
  void start_threads(const std::shared_ptr<impl>& self) {
    for (size_t i = 0; i < std::max<size_t>(1, cfg.threads); ++i) {
      ++working;
      workers.emplace_back([self] {
        self->work();
        std::lock_guard<std::mutex> guard{self->mu};
        --self->working;
        self->done_cv.notify_all();
      });
    }
    timer = std::thread([this] { watch(); });
  }

  void stop() {
    auto live_runs = runs.cancel_all(); // no job starts any more
    {
      std::lock_guard<std::mutex> guard{mu};
      stopping = true;
    }
    work_cv.notify_all();
    timer_cv.notify_all();
    timer.join();
    bool all_ended = false;
    {
      std::unique_lock<std::mutex> lock{mu};
      all_ended = done_cv.wait_for(lock, cfg.stop_wait, [this] { return working == 0; });
    }
    for (auto& t : workers) {
      if (all_ended) {
        t.join();
      } else {
        t.detach(); // a call blocked in libvirt: its worker ends with the process
      }
    }
    // every job still gets its result (api::node_operation); a blocked call's comes too
    // late and is dropped
    for (auto& run : live_runs) {
      run->end_unstarted(node_errc::disconnected, node_message::stopped_unstarted);
      run->end_all(node_errc::disconnected, node_message::stopping);
    }
    std::lock_guard<std::mutex> guard{mu};
    for (auto& [uri, c] : conns) {
      if (c->conn != nullptr && c->users == 0) {
        virConnectClose(c->conn);
        c->conn = nullptr;
      }
    }
  }

  /// Queues the batch's next jobs within its fanout.
  void fill(const std::shared_ptr<batch>& b) {
    {
      std::lock_guard<std::mutex> guard{mu};
      if (stopping) {
        return;
      }
      while (auto index = b->run->next_to_start()) {
        started s{b, *index, next_job++};
        live.emplace(s.id, s);
        deadlines.set(s.id, clock::now() + cfg.timeout);
        ready.push_back(std::move(s));
      }
    }
    work_cv.notify_all();
    timer_cv.notify_all();
  }

  /// Job `s` has its result (from its worker or its deadline); the first one counts.
  void complete(const started& s, base::node_result r) {
    {
      std::lock_guard<std::mutex> guard{mu};
      live.erase(s.id);
      deadlines.clear(s.id);
    }
    if (s.b->run->finished(s.index, std::move(r))) {
      fill(s.b); // its slot is free again
    }
  }

  /// The connection to `uri`, opened (or reopened when found dead) if needed; null on failure.
  std::shared_ptr<connection> acquire(const std::string& uri, std::string& error) {
    std::shared_ptr<connection> c;
    {
      std::lock_guard<std::mutex> guard{mu};
      auto& slot = conns[uri];
      if (!slot) {
        slot = std::make_shared<connection>();
      }
      c = slot;
      ++c->users;
    }
    std::lock_guard<std::mutex> open_guard{c->open_mu};
    if (c->conn != nullptr && virConnectIsAlive(c->conn) != 1) {
      virConnectClose(c->conn);
      c->conn = nullptr;
    }
    if (c->conn == nullptr) {
      c->conn = virConnectOpen(uri.c_str());
      if (c->conn == nullptr) {
        error = last_error();
        release(c);
        return nullptr;
      }
    }
    return c;
  }

  void release(const std::shared_ptr<connection>& c) {
    std::lock_guard<std::mutex> guard{mu};
    --c->users;
    c->last_used = clock::now();
  }

  base::node_result call(const vm_job& j) {
    std::string error;
    auto c = acquire(j.uri, error);
    if (!c) {
      return failure(j.node, node_errc::unreachable,
                     "Cannot communicate via libvirt to " + j.uri + ": " + error);
    }
    base::node_result r;
    if (virDomainPtr d = virDomainLookupByName(c->conn, j.domain.c_str())) {
      r = act(j, d);
      virDomainFree(d);
    } else {
      r = failure(j.node, node_errc::not_found,
                  "The virtual machine " + j.domain + " was not found on " + j.uri + ".");
    }
    release(c);
    return r;
  }

  void work() {
    for (;;) {
      started s;
      {
        std::unique_lock<std::mutex> lock{mu};
        work_cv.wait(lock, [&] { return stopping || !ready.empty(); });
        if (stopping) {
          return;
        }
        s = ready.front();
        ready.pop_front();
        if (live.count(s.id) == 0) {
          continue; // its deadline passed while it waited
        }
      }
      complete(s, call(s.b->jobs[s.index]));
    }
  }

  /// Delivers `timeout` for jobs past their deadline, and closes idle connections.
  void watch() {
    std::unique_lock<std::mutex> lock{mu};
    while (!stopping) {
      auto now = clock::now();
      std::vector<started> due;
      for (auto id : deadlines.take_due(now)) {
        if (auto it = live.find(id); it != live.end()) {
          due.push_back(it->second);
        }
      }
      for (auto it = conns.begin(); it != conns.end();) {
        auto& c = it->second;
        if (c->users == 0 && now - c->last_used >= cfg.idle) {
          if (c->conn != nullptr) {
            virConnectClose(c->conn);
          }
          it = conns.erase(it);
        } else {
          ++it;
        }
      }
      if (!due.empty()) {
        lock.unlock();
        for (auto& s : due) {
          complete(s,
                   failure(s.b->jobs[s.index].node, node_errc::timeout,
                           "Timed out waiting for the hypervisor " + s.b->jobs[s.index].uri + "."));
        }
        lock.lock();
        continue;
      }
      auto wake = now + std::chrono::seconds(1);
      if (auto next = deadlines.next()) {
        wake = std::min(wake, *next);
      }
      timer_cv.wait_until(lock, wake);
    }
  }
};

hypervisors::hypervisors(hypervisor_config cfg) : impl_(std::make_shared<impl>(std::move(cfg))) {
  impl_->start_threads(impl_);
}

hypervisors::~hypervisors() {
  impl_->stop();
}

uint64_t hypervisors::run(std::vector<vm_job> jobs, size_t fanout, result_fn on_result,
                          std::function<void()> on_done) {
  meter_->wrap(jobs.size(), on_result, on_done); // (counted: the metrics page)
  if (jobs.empty()) {
    on_done();
    return 0;
  }
  std::vector<std::string> names;
  for (const auto& j : jobs) {
    names.push_back(j.node);
  }
  auto b = std::make_shared<batch>();
  b->jobs = std::move(jobs);
  b->run
    = std::make_shared<base::fanout_run>(b->jobs.size(), fanout, std::move(on_result),
                                         std::move(on_done), base::node_failures(std::move(names)));
  auto id = impl_->runs.add(b->run);
  impl_->fill(b);
  return id;
}

void hypervisors::cancel(uint64_t id) {
  if (auto run = impl_->runs.cancel(id)) {
    run->end_unstarted(node_errc::cancelled, node_message::cancelled_unstarted);
  }
}

size_t hypervisors::connections() const {
  std::lock_guard<std::mutex> guard{impl_->mu};
  size_t n = 0;
  for (const auto& [uri, c] : impl_->conns) {
    n += c->conn != nullptr ? 1 : 0;
  }
  return n;
}

} // namespace cws::virt
