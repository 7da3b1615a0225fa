#include "actors/jobs_actor.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <unordered_map>

#include "base/log.hpp"
#include "store/database.hpp"

namespace cws::actors {

namespace {

using api::api_call;
using api::api_call_ptr;
using api::api_result;
using api::job_info;
using api::job_state;

/// The jobs actor's own interface: the public one plus what its jobs send back.
using jobs_impl_actor = jobs_actor::extend<
  // job `id` planned its nodes
  caf::reacts_to<job_atom, std::string, size_t>,
  // a node of job `id` ended
  caf::reacts_to<node_atom, std::string, node_result_ptr>,
  // job `id` ended on the executor with this result
  caf::reacts_to<done_atom, std::string, api_result>>;

/// Carries a job's nodes from the executor's thread to the jobs actor.
class job_sink : public api::node_sink {
 public:
  job_sink(jobs_impl_actor me, std::string id) : me_(std::move(me)), id_(std::move(id)) {
    // nop
  }

  void push(base::node_result node) override {
    caf::anon_send(me_, node_atom::value, id_,
                   std::make_shared<base::node_result>(std::move(node)));
  }

  void started(size_t nodes) override {
    caf::anon_send(me_, job_atom::value, id_, nodes);
  }

 private:
  jobs_impl_actor me_;
  std::string id_;
};

/// A stream=1 reader of a running job: its sink, and where its call ends.
struct watcher {
  std::shared_ptr<api::node_sink> sink;
  done_ptr done;
};

struct job {
  job_info info;
  /// Output bytes kept.
  size_t bytes = 0;
  /// The call that started it (a synchronous caller's sink and cancel).
  api_call_ptr call;
  /// The job's own cancel (DELETE /jobs/{id}, the caller's call_timeout).
  std::shared_ptr<api::call_cancel> cancel = std::make_shared<api::call_cancel>();
  /// A synchronous caller waiting for the end (none: async, or answered).
  done_ptr waiter;
  /// An async caller waiting for the plan: answered 202 once the nodes start, or with the
  /// failure (then no job is kept).
  done_ptr accept;
  /// When `progress` was last told.
  int64_t told_ms = 0;
  std::vector<watcher> watchers;
};

struct jobs_state {
  static inline const char* name = "jobs";
  std::unordered_map<std::string, job> jobs;
  std::mt19937_64 random{std::random_device{}()};
  /// The last power state seen of each node (rpower results).
  std::unordered_map<std::string, std::string> power;
  caf::actor writer;
};

using self_ptr = jobs_impl_actor::stateful_pointer<jobs_state>;

int64_t now_of(const jobs_config& cfg) {
  if (cfg.now_ms) {
    return cfg.now_ms();
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

std::string new_id(jobs_state& st) {
  static constexpr char hex[] = "0123456789abcdef";
  for (;;) {
    auto v = st.random();
    std::string id(16, '0');
    for (int i = 15; i >= 0; --i, v >>= 4) {
      id[static_cast<size_t>(i)] = hex[v & 15];
    }
    if (st.jobs.count(id) == 0) {
      return id;
    }
  }
}

/// Writes (or, `erase`, removes) the record of `info`.
void persist(self_ptr self, const job_info& info, bool erase = false) {
  if (self->state.writer) {
    caf::anon_send(self->state.writer, record_atom::value,
                   std::string{api::job_record_prefix} + info.id,
                   erase ? std::string{} : api::encode_job_record(info));
  }
}

/// Tells `on_event` of `info` (its nodes are not lent out).
void tell(const jobs_config& cfg, job_info& info, const char* what) {
  if (cfg.on_event) {
    auto nodes = std::move(info.nodes);
    info.nodes.clear();
    cfg.on_event(info, what);
    info.nodes = std::move(nodes);
  }
}

/// Keeps node `r` in `j`, its output cut where the job's bytes would pass `max`.
void keep(job& j, base::node_result r, size_t max) {
  auto size = r.out.size() + r.err.size();
  if (j.bytes + size > max) {
    auto room = j.bytes < max ? max - j.bytes : 0;
    if (r.out.size() > room) {
      r.out.resize(room);
    }
    room -= r.out.size();
    if (r.err.size() > room) {
      r.err.resize(room);
    }
    r.truncated = true;
    ++j.info.truncated;
    size = r.out.size() + r.err.size();
  }
  j.bytes += size;
  j.info.nodes.push_back(std::move(r));
}

/// Cuts the kept output of `j` to `max` (after a synchronous caller got every byte).
void trim(job& j, size_t max) {
  auto nodes = std::move(j.info.nodes);
  j.info.nodes.clear();
  j.bytes = 0;
  j.info.truncated = 0;
  for (auto& n : nodes) {
    bool was = n.truncated;
    keep(j, std::move(n), max);
    if (was && !j.info.nodes.back().truncated) {
      j.info.nodes.back().truncated = true; // cut before (the node's own output limit)
    }
  }
}

/// Forgets finished jobs past `keep` or `keep_max` (the oldest first), in memory and store.
void evict(self_ptr self, const jobs_config& cfg) {
  auto& jobs = self->state.jobs;
  auto now = now_of(cfg);
  auto horizon = now - static_cast<int64_t>(cfg.keep.count()) * 1000;
  std::vector<std::pair<int64_t, std::string>> ended;
  for (auto it = jobs.begin(); it != jobs.end();) {
    const auto& info = it->second.info;
    if (api::job_ended(info.state) && it->second.watchers.empty() && !it->second.waiter) {
      if (info.ended_ms <= horizon) {
        persist(self, info, true);
        it = jobs.erase(it);
        continue;
      }
      ended.emplace_back(info.ended_ms, it->first);
    }
    ++it;
  }
  if (jobs.size() <= cfg.keep_max) {
    return;
  }
  std::sort(ended.begin(), ended.end());
  for (size_t i = 0; i < ended.size() && jobs.size() > cfg.keep_max; ++i) {
    persist(self, jobs.at(ended[i].second).info, true);
    jobs.erase(ended[i].second);
  }
}

/// The job `id` as `user` may see it (another user's is not there), or null.
job* visible(self_ptr self, const std::string& id, const std::string& user) {
  auto it = self->state.jobs.find(id);
  if (it == self->state.jobs.end() || (user != "root" && it->second.info.user != user)) {
    return nullptr;
  }
  return &it->second;
}

api_result no_such_job() {
  return api_result::failure(api::errc::not_found, "No such job.");
}

/// What a finished job's stream readers get at the end: the nodes' status.
api_result status_of(const job& j) {
  api_result r;
  r.created = true;
  r.nodes.reserve(j.info.nodes.size());
  for (const auto& n : j.info.nodes) {
    base::node_result s;
    s.name = n.name;
    s.rc = n.rc;
    s.error = n.error;
    r.nodes.push_back(std::move(s));
  }
  if (j.info.state == job_state::failed) {
    return api_result::failure(api::errc::failed, j.info.messages.empty()
                                                    ? std::string{"The job failed."}
                                                    : j.info.messages.front());
  }
  return r;
}

void run_job_call(self_ptr self, const jobs_config& cfg, const api_call& call,
                  const api::authorization& auth, const done_ptr& done) {
  evict(self, cfg);
  if (call.op == api::operation::job_list) {
    auto list = std::make_shared<std::vector<job_info>>();
    for (const auto& [id, j] : self->state.jobs) {
      if (auth.user == "root" || j.info.user == auth.user) {
        list->push_back(j.info);
        list->back().nodes.clear();
      }
    }
    std::sort(list->begin(), list->end(), [](const job_info& a, const job_info& b) {
      return a.created_ms != b.created_ms ? a.created_ms < b.created_ms : a.id < b.id;
    });
    api_result r;
    r.jobs = std::move(list);
    (*done)(std::move(r));
    return;
  }
  auto* j = visible(self, call.target, auth.user);
  if (j == nullptr) {
    (*done)(no_such_job());
    return;
  }
  if (call.op == api::operation::job_cancel) {
    if (!api::job_ended(j->info.state)) {
      j->cancel->cancel("Cancelled by " + auth.user + " (DELETE /jobs/" + j->info.id + ").");
    }
    api_result r;
    r.jobs = std::make_shared<std::vector<job_info>>(1, j->info);
    (*done)(std::move(r));
    return;
  }
  if (call.sink) {
    // stream=1: what is there, then the rest as it comes
    for (const auto& n : j->info.nodes) {
      call.sink->push(n);
    }
    if (api::job_ended(j->info.state)) {
      (*done)(status_of(*j));
    } else {
      j->watchers.push_back({call.sink, done});
    }
    return;
  }
  api_result r;
  r.jobs = std::make_shared<std::vector<job_info>>(1, j->info);
  (*done)(std::move(r));
}

void start_job(self_ptr self, const jobs_config& cfg, const executor_actor& executor,
               api_call_ptr call, api::authorization auth, done_ptr done) {
  evict(self, cfg);
  auto id = new_id(self->state);
  auto& j = self->state.jobs[id];
  j.info.id = id;
  j.info.user = auth.user;
  j.info.op = call->op;
  j.info.operation = api::operation_name(call->op);
  j.info.state = job_state::running;
  j.info.created_ms = j.info.started_ms = now_of(cfg);
  j.call = call;
  auto run = std::make_shared<api_call>(*call);
  run->sink = std::make_shared<job_sink>(caf::actor_cast<jobs_impl_actor>(self), id);
  run->cancel = j.cancel;
  run->async = false;
  if (call->async) {
    j.accept = std::move(done); // answered when the plan holds (job_atom), or failed
  } else {
    j.waiter = std::move(done);
    if (call->cancel) {
      // the caller's call_timeout ends the job (a client that leaves does not)
      call->cancel->on_cancel(
        [mine = j.cancel, theirs = call->cancel] { mine->cancel(theirs->reason()); });
    }
  }
  persist(self, j.info);
  tell(cfg, j.info, "created");
  auto me = caf::actor_cast<jobs_impl_actor>(self);
  auto finished = std::make_shared<done_fn>(
    [me, id](api_result r) { caf::anon_send(me, done_atom::value, id, std::move(r)); });
  self->send(executor, run_atom::value, api_call_ptr{std::move(run)}, std::move(auth),
             std::move(finished));
}

/// A power result (rpower on, off, reset, stat) tells the node's state: told when it changed.
void saw_power(jobs_state& st, const jobs_config& cfg, const base::node_result& res) {
  if (!cfg.on_power || res.failed() || (res.out != "on" && res.out != "off")) {
    return;
  }
  auto& last = st.power[res.name];
  if (last != res.out) {
    last = res.out;
    cfg.on_power(res.name, res.out);
  }
}

void on_node(jobs_state& st, const jobs_config& cfg, job& j, node_result_ptr res) {
  if (j.info.op == api::operation::power) {
    saw_power(st, cfg, *res);
  }
  ++j.info.finished;
  if (res->failed()) {
    ++j.info.failed;
  }
  if (res->error == "cancelled" && j.cancel->cancelled()) {
    res->message = j.cancel->reason();
  }
  for (const auto& w : j.watchers) {
    w.sink->push(*res);
  }
  const auto& caller_sink = j.waiter ? j.call->sink : nullptr;
  if (caller_sink) {
    caller_sink->push(*res);
  }
  if (j.waiter && !caller_sink) {
    j.bytes += res->out.size() + res->err.size(); // whole while its caller waits
    j.info.nodes.push_back(std::move(*res));
  } else {
    keep(j, std::move(*res), cfg.output_max_bytes);
  }
  if (cfg.on_event && j.info.finished < j.info.targets) {
    auto now = now_of(cfg);
    if (now - j.told_ms >= cfg.progress_every.count()) {
      j.told_ms = now;
      tell(cfg, j.info, "progress");
    }
  }
}

void on_done(self_ptr self, const jobs_config& cfg, const std::string& id, api_result r) {
  auto it = self->state.jobs.find(id);
  if (it == self->state.jobs.end()) {
    return;
  }
  auto& j = it->second;
  j.info.ended_ms = now_of(cfg);
  bool stale = r.error == api::errc::stale;
  if (j.accept || (stale && j.waiter)) {
    // never started: an async caller gets the failure instead of an id, and a stale
    // authorization goes back to the dispatcher, which authorizes again and starts a new
    // job; this one is not kept
    auto caller = j.accept ? std::move(j.accept) : std::move(j.waiter);
    if (j.call->cancel) {
      j.call->cancel->on_cancel(nullptr);
    }
    j.info.state = job_state::failed;
    tell(cfg, j.info, "ended");
    persist(self, j.info, true);
    self->state.jobs.erase(it);
    (*caller)(std::move(r));
    return;
  }
  if (!r.ok()) {
    j.info.state = job_state::failed;
    j.info.messages = r.messages;
  } else {
    j.info.state = j.cancel->cancelled() ? job_state::cancelled : job_state::done;
    j.info.targets = r.nodes.size();
  }
  if (j.waiter) {
    if (j.call->cancel) {
      j.call->cancel->on_cancel(nullptr); // the job is over
    }
    if (r.ok() && !j.call->sink) {
      // the executor kept the status (the output came through the job): put it back
      std::unordered_map<std::string, base::node_result*> by_name;
      for (auto& n : j.info.nodes) {
        by_name[n.name] = &n;
      }
      for (auto& n : r.nodes) {
        if (auto f = by_name.find(n.name); f != by_name.end()) {
          n = *f->second;
        }
      }
    }
    auto waiter = std::move(j.waiter);
    j.waiter = nullptr;
    (*waiter)(std::move(r));
    trim(j, cfg.output_max_bytes);
  }
  for (auto& w : j.watchers) {
    (*w.done)(status_of(j));
  }
  j.watchers.clear();
  persist(self, j.info);
  tell(cfg, j.info, "ended");
  evict(self, cfg);
}

/// Reads the stored records: what was running is interrupted now.
void load(self_ptr self, const jobs_config& cfg) {
  if (!cfg.db) {
    return;
  }
  std::vector<std::pair<std::string, std::string>> records;
  try {
    records = cfg.db->read().meta_with_prefix(api::job_record_prefix);
  } catch (const std::exception& e) {
    base::log(base::log_level::error,
              std::string{"jobs: cannot read the job records: "} + e.what());
    return;
  }
  auto now = now_of(cfg);
  for (auto& [key, value] : records) {
    job j;
    if (!api::decode_job_record(value, j.info)) {
      base::log(base::log_level::warning, "jobs: a damaged record was dropped: " + key);
      job_info damaged;
      damaged.id = key.substr(api::job_record_prefix.size());
      persist(self, damaged, true);
      continue;
    }
    if (!api::job_ended(j.info.state)) {
      j.info.state = job_state::interrupted;
      j.info.ended_ms = now;
      persist(self, j.info);
    }
    auto id = j.info.id;
    self->state.jobs.emplace(std::move(id), std::move(j));
  }
  evict(self, cfg);
}

caf::behavior writer_impl(std::shared_ptr<store::database> db) {
  return {
    [db](record_atom, const std::string& key, const std::string& value) {
      try {
        db->write([&](store::write_txn& t) {
          if (value.empty()) {
            t.erase_meta(key);
          } else {
            t.set_meta(key, value);
          }
        });
      } catch (const std::exception& e) {
        base::log(base::log_level::error,
                  "jobs: the record " + key + " could not be written: " + e.what());
      }
    },
  };
}

jobs_impl_actor::behavior_type jobs_impl(self_ptr self, executor_actor executor, jobs_config cfg) {
  if (cfg.db) {
    self->state.writer = cfg.detached_writer ? self->spawn<caf::detached>(writer_impl, cfg.db)
                                             : self->spawn(writer_impl, cfg.db);
    // not linked: it writes what it was sent, then ends with its last handle (the state's)
  }
  load(self, cfg);
  return {
    [=](run_atom, api_call_ptr& call, api::authorization& auth, done_ptr& done) {
      if (api::is_job_call(call->op)) {
        run_job_call(self, cfg, *call, auth, done);
      } else {
        start_job(self, cfg, executor, std::move(call), std::move(auth), std::move(done));
      }
    },
    [=](job_atom, const std::string& id, size_t nodes) {
      if (auto it = self->state.jobs.find(id); it != self->state.jobs.end()) {
        it->second.info.targets = nodes;
        if (auto accept = std::move(it->second.accept)) {
          it->second.accept = nullptr;
          api_result r;
          r.accepted = true;
          r.job_id = id;
          (*accept)(std::move(r));
        }
        persist(self, it->second.info);
        tell(cfg, it->second.info, "progress");
      }
    },
    [=](node_atom, const std::string& id, node_result_ptr& res) {
      if (auto it = self->state.jobs.find(id); it != self->state.jobs.end()) {
        on_node(self->state, cfg, it->second, std::move(res));
      }
    },
    [=](done_atom, const std::string& id, api_result& r) { on_done(self, cfg, id, std::move(r)); },
  };
}

} // namespace

jobs_actor spawn_jobs(caf::actor_system& sys, executor_actor executor, jobs_config cfg) {
  return caf::actor_cast<jobs_actor>(sys.spawn(jobs_impl, std::move(executor), std::move(cfg)));
}

} // namespace cws::actors
