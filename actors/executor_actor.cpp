#include "actors/executor_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <map>
#include <unordered_map>

#include "base/log.hpp"

namespace cws::actors {

namespace {

using api::api_result;

/// The executor's own interface: the public one plus what its operations send back.
using executor_impl_actor = executor_actor::extend<
  // node `index` of operation `id` finished
  caf::reacts_to<node_atom, uint64_t, size_t, node_result_ptr>,
  // every node of operation `id` finished
  caf::reacts_to<done_atom, uint64_t>>;

struct running {
  api::api_call_ptr call;
  api::node_operation_ptr op;
  done_ptr done;
  std::vector<base::node_result> results;
  /// Who runs it, for the failure summary.
  std::string user;
  /// Nodes not finished yet (the in-flight gauge holds them).
  size_t remaining = 0;
  /// Failed nodes by error ("refused", "timeout", "exit status"), and the first failure.
  std::map<std::string, size_t> failures;
  std::string first_failure;
};

struct executor_state {
  std::unordered_map<uint64_t, running> ops;
  uint64_t next_id = 1;
  static inline const char* name = "executor";

  std::shared_ptr<api::service_metrics> metrics;
  /// Unfinished nodes of the running calls, in total and by user (max_nodes_in_flight).
  size_t nodes = 0;
  std::unordered_map<std::string, size_t> nodes_of;

  /// Takes `n` finished nodes of `user` off the counts.
  void release(const std::string& user, size_t n) {
    if (n == 0) {
      return;
    }
    nodes -= n;
    auto it = nodes_of.find(user);
    if (it != nodes_of.end() && (it->second -= n) == 0) {
      nodes_of.erase(it);
    }
  }

  ~executor_state() {
    for (auto& [id, r] : ops) {
      if (r.call->cancel) {
        r.call->cancel->on_cancel(nullptr);
      }
      r.op->cancel(); // their callbacks find nobody: the engine must not work on for no one
      metrics->nodes_in_flight.add(-static_cast<int64_t>(r.remaining));
      (*r.done)(api_result::failure(api::errc::unavailable, "The service is stopping."));
    }
  }
};

using self_ptr = executor_impl_actor::stateful_pointer<executor_state>;

/// Counts a finished node by its result, and remembers a failure for the summary.
void count(running& r, const base::node_result& res, executor_state& st) {
  auto& metrics = *st.metrics;
  if (r.remaining == 0) {
    return; // (a transport reports each node once; never count one twice)
  }
  --r.remaining;
  st.release(r.user, 1);
  metrics.nodes_in_flight.add(-1);
  if (!res.failed()) {
    metrics.nodes_ok.add();
    return;
  }
  (res.error.empty() ? metrics.nodes_nonzero : metrics.nodes_error).add();
  ++r.failures[res.error.empty() ? std::string{"exit status"} : res.error];
  if (r.first_failure.empty()) {
    r.first_failure
      = res.name + ": "
        + (res.message.empty() ? "exit status " + std::to_string(res.rc) : res.message);
  }
}

/// One line per fan-out call with failed nodes: how many, why, and the first one (never the
/// command: it may hold a secret, and the audit log has it).
void log_failures(const running& r) {
  if (r.failures.empty() || !base::log_enabled(base::log_level::warning)) {
    return;
  }
  size_t failed = 0;
  std::string why;
  for (const auto& [error, n] : r.failures) {
    failed += n;
    why += (why.empty() ? "" : ", ") + std::to_string(n) + " " + error;
  }
  auto what = r.call->policy_command == "xdsh" || r.call->policy_command.empty()
                ? std::string{"nodeshell"}
                : r.call->policy_command; // rpower, rsetboot
  base::log(base::log_level::warning, what + " by " + r.user + ": " + std::to_string(failed)
                                        + " of " + std::to_string(r.results.size())
                                        + " nodes failed (" + why + "); first: " + r.first_failure);
}

/// Why a call of `n` nodes by `user` may not start now (empty: it may).
std::string over_limit(const executor_state& st, const executor_config& cfg,
                       const std::string& user, size_t n) {
  auto it = st.nodes_of.find(user);
  size_t mine = it == st.nodes_of.end() ? 0 : it->second;
  if (mine + n > cfg.max_nodes_per_user) {
    return "Too many nodes in flight for user '" + user + "': " + std::to_string(mine)
           + " running and " + std::to_string(n) + " asked for, at most "
           + std::to_string(cfg.max_nodes_per_user)
           + " (max_nodes_in_flight_per_user); nothing was run. Try again later.";
  }
  if (st.nodes + n > cfg.max_nodes) {
    return "Too many nodes in flight: " + std::to_string(st.nodes) + " running and "
           + std::to_string(n) + " asked for, at most " + std::to_string(cfg.max_nodes)
           + " (max_nodes_in_flight); nothing was run. Try again later.";
  }
  return {};
}

void start(self_ptr self, const executor_config& cfg, api::api_call_ptr call,
           api::node_operation_ptr op, done_ptr done, std::string user) {
  if (call->cancel && call->cancel->cancelled()) {
    // the caller left (or its time ran out) while the call was planned: nothing to run
    (*done)(api_result::failure(api::errc::unavailable, call->cancel->reason()));
    return;
  }
  if (auto why = over_limit(self->state, cfg, user, op->nodes().size()); !why.empty()) {
    (*done)(api_result::failure(api::errc::unavailable, std::move(why)));
    return;
  }
  auto id = self->state.next_id++;
  auto& r = self->state.ops[id];
  r.call = std::move(call);
  r.op = op;
  r.done = std::move(done);
  r.user = std::move(user);
  const auto& names = op->nodes();
  r.remaining = names.size();
  self->state.nodes += names.size();
  self->state.nodes_of[r.user] += names.size();
  self->state.metrics->nodes_in_flight.add(static_cast<int64_t>(names.size()));
  r.results.resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    r.results[i].name = names[i];
  }
  if (r.call->sink) {
    r.call->sink->started(names.size());
  }
  auto me = caf::actor_cast<executor_impl_actor>(self);
  // the transport calls back on its own thread: hand over by message
  op->start(
    [me, id](size_t index, base::node_result res) {
      caf::anon_send(me, node_atom::value, id, index,
                     std::make_shared<base::node_result>(std::move(res)));
    },
    [me, id] { caf::anon_send(me, done_atom::value, id); });
  if (r.call->cancel) {
    // the caller's connection closed, or its call_timeout passed: the engine ends the rest
    r.call->cancel->on_cancel([op] { op->cancel(); });
  }
}

executor_impl_actor::behavior_type executor_impl(self_ptr self, store_actor store,
                                                 executor_config cfg) {
  self->state.metrics = cfg.metrics;
  return {
    [=](run_atom, api::api_call_ptr& call, api::authorization& auth, done_ptr& done) {
      if (!cfg.bind) {
        (*done)(
          api_result::failure(api::errc::unavailable, "nodeshell is not enabled on this service."));
        return;
      }
      auto user = auth.user;
      self->request(store, cfg.store_timeout, plan_atom::value, call, std::move(auth), cfg.bind)
        .then(
          [=](plan_reply& plan) mutable {
            if (!plan.failure.ok()) {
              (*done)(std::move(plan.failure));
            } else {
              start(self, cfg, std::move(call), std::move(plan.op), std::move(done), user);
            }
          },
          [=](caf::error& e) mutable {
            (*done)(api_result::failure(api::errc::unavailable, self->system().render(e)));
          });
    },
    [=](node_atom, uint64_t id, size_t index, node_result_ptr& res) {
      auto it = self->state.ops.find(id);
      if (it == self->state.ops.end() || index >= it->second.results.size()) {
        return;
      }
      if (res->error == "cancelled" && it->second.call->cancel) {
        if (auto why = it->second.call->cancel->reason(); !why.empty()) {
          res->message = std::move(why); // the client left, or call_timeout passed
        }
      }
      count(it->second, *res, self->state);
      auto& out = it->second.results[index];
      if (const auto& sink = it->second.call->sink) {
        // the output goes out in the stream; the final result counts only the status
        out.rc = res->rc;
        out.error = res->error;
        sink->push(std::move(*res));
      } else {
        out = std::move(*res);
      }
    },
    [=](done_atom, uint64_t id) {
      auto it = self->state.ops.find(id);
      if (it == self->state.ops.end()) {
        return;
      }
      log_failures(it->second);
      if (it->second.call->cancel) {
        it->second.call->cancel->on_cancel(nullptr); // the operation is over
      }
      self->state.release(it->second.user, it->second.remaining);
      self->state.metrics->nodes_in_flight.add(-static_cast<int64_t>(it->second.remaining));
      api_result r;
      r.created = true;
      r.nodes = std::move(it->second.results);
      auto done = std::move(it->second.done);
      self->state.ops.erase(it);
      (*done)(std::move(r));
    },
  };
}

} // namespace

executor_actor spawn_executor(caf::actor_system& sys, store_actor store, executor_config cfg) {
  // callers see the public interface only; the per-node messages are the executor's own
  return caf::actor_cast<executor_actor>(sys.spawn(executor_impl, std::move(store), cfg));
}

} // namespace cws::actors
