#include "actors/executor_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <unordered_map>

namespace cws::actors {

namespace {

using api::api_result;

/// The executor's own interface: the public one plus what its operations send back.
using executor_impl_actor = executor_actor::extend<
  // node `index` of operation `id` finished
  caf::reacts_to<node_atom, uint64_t, size_t, node_result_ptr>,
  // every node of operation `id` finished
  caf::reacts_to<done_atom, uint64_t>>;

using promise = caf::typed_response_promise<api_result>;

struct running {
  api::api_call_ptr call;
  api::node_operation_ptr op;
  promise rp;
  std::vector<base::node_result> results;
};

struct executor_state {
  std::unordered_map<uint64_t, running> ops;
  uint64_t next_id = 1;
  static inline const char* name = "executor";

  ~executor_state() {
    for (auto& [id, r] : ops) {
      r.op->cancel(); // their callbacks find nobody: the engine must not work on for no one
    }
  }
};

using self_ptr = executor_impl_actor::stateful_pointer<executor_state>;

void start(self_ptr self, api::api_call_ptr call, api::node_operation_ptr op, promise rp) {
  auto id = self->state.next_id++;
  auto& r = self->state.ops[id];
  r.call = std::move(call);
  r.op = op;
  r.rp = std::move(rp);
  const auto& names = op->nodes();
  r.results.resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    r.results[i].name = names[i];
  }
  auto me = caf::actor_cast<executor_impl_actor>(self);
  // the transport calls back on its own thread: hand over by message
  op->start(
    [me, id](size_t index, base::node_result res) {
      caf::anon_send(me, node_atom::value, id, index,
                     std::make_shared<base::node_result>(std::move(res)));
    },
    [me, id] { caf::anon_send(me, done_atom::value, id); });
}

executor_impl_actor::behavior_type executor_impl(self_ptr self, store_actor store,
                                                 executor_config cfg) {
  return {
    [=](run_atom, api::api_call_ptr& call, api::authorization& auth) -> promise {
      auto rp = self->make_response_promise<api_result>();
      self->request(store, cfg.store_timeout, plan_atom::value, call, std::move(auth))
        .then(
          [=](plan_reply& plan) mutable {
            if (!plan.failure.ok()) {
              rp.deliver(std::move(plan.failure));
            } else {
              start(self, std::move(call), std::move(plan.op), std::move(rp));
            }
          },
          [=](caf::error& e) mutable {
            rp.deliver(api_result::failure(api::errc::unavailable, self->system().render(e)));
          });
      return rp;
    },
    [=](node_atom, uint64_t id, size_t index, node_result_ptr& res) {
      auto it = self->state.ops.find(id);
      if (it == self->state.ops.end() || index >= it->second.results.size()) {
        return;
      }
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
      api_result r;
      r.created = true;
      r.nodes = std::move(it->second.results);
      it->second.rp.deliver(std::move(r));
      self->state.ops.erase(it);
    },
  };
}

} // namespace

executor_actor spawn_executor(caf::actor_system& sys, store_actor store, executor_config cfg) {
  // callers see the public interface only; the per-node messages are the executor's own
  return caf::actor_cast<executor_actor>(sys.spawn(executor_impl, std::move(store), cfg));
}

} // namespace cws::actors
