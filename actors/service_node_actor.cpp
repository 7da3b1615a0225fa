#include "actors/service_node_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <deque>
#include <unordered_map>
#include <unordered_set>

namespace cws::actors {

namespace {

/// The actor's own interface: the public one plus what its operations send back.
using sn_impl_actor = sn_executor_actor::extend<
  // node `index` (in the operation's order) of share `id` ended
  caf::reacts_to<node_atom, uint64_t, size_t, node_result_ptr>,
  // every node of share `id` ended
  caf::reacts_to<done_atom, uint64_t>>;

struct share {
  api::node_operation_ptr op;
  sn_sink_actor sink;
  /// The share index of each of the operation's nodes.
  std::vector<uint32_t> index_of;
  uint32_t credits = 1;
  uint32_t batch_nodes = 1;
  uint64_t batch_bytes = 1;
  /// Results not sent yet, and their bytes.
  std::deque<api::wire::node_result> pending;
  /// Batches sent and not credited, the next batch's seq.
  uint32_t in_flight = 0;
  uint32_t seq = 0;
  bool op_done = false;
};

struct sn_state {
  static inline const char* name = "service_node";
  std::unordered_map<uint64_t, share> shares;
  /// Every share id seen, in order (bounded): a repeated id is never run twice.
  std::unordered_set<uint64_t> seen;
  std::deque<uint64_t> seen_order;

  ~sn_state() {
    for (auto& [id, s] : shares) {
      s.op->cancel(); // its callbacks find nobody: the engine must not work on for no one
    }
  }
};

using self_ptr = sn_impl_actor::stateful_pointer<sn_state>;

/// Sends what credits allow, and the end once the operation is done and all is sent.
void flush(self_ptr self, uint64_t id) {
  auto it = self->state.shares.find(id);
  if (it == self->state.shares.end()) {
    return;
  }
  auto& s = it->second;
  while (s.in_flight < s.credits && !s.pending.empty()) {
    api::wire::result_batch b;
    b.id = id;
    b.seq = s.seq++;
    uint64_t bytes = 0;
    while (!s.pending.empty() && b.results.size() < s.batch_nodes) {
      auto size = api::wire::result_bytes(s.pending.front());
      if (!b.results.empty() && bytes + size > s.batch_bytes) {
        break; // a larger result goes alone, in the next batch
      }
      bytes += size;
      b.results.push_back(std::move(s.pending.front()));
      s.pending.pop_front();
    }
    ++s.in_flight;
    self->send(s.sink, sn_batch_atom::value, std::move(b));
  }
  if (s.op_done && s.pending.empty()) {
    // same sender, same receiver: the end arrives after every batch
    self->send(s.sink, sn_end_atom::value, api::wire::share_end{id, s.seq, {}});
    self->state.shares.erase(it);
  }
}

void remember(sn_state& st, uint64_t id, size_t most) {
  st.seen.insert(id);
  st.seen_order.push_back(id);
  while (st.seen_order.size() > most) {
    st.seen.erase(st.seen_order.front());
    st.seen_order.pop_front();
  }
}

sn_impl_actor::behavior_type service_node_impl(self_ptr self, service_node_config cfg) {
  self->set_down_handler([=](caf::down_msg& dm) {
    // the head (a share's sink) went away: nobody waits for these nodes any more
    for (auto it = self->state.shares.begin(); it != self->state.shares.end();) {
      if (it->second.sink.address() == dm.source) {
        it->second.op->cancel();
        it = self->state.shares.erase(it);
      } else {
        ++it;
      }
    }
  });
  return {
    [=](sn_run_atom, api::wire::share_request& req, sn_sink_actor& sink) {
      auto id = req.job.id;
      auto refuse = [&](std::string why) {
        self->send(sink, sn_end_atom::value, api::wire::share_end{id, 0, std::move(why)});
      };
      if (!cfg.name.empty() && req.service_node != cfg.name) {
        return refuse("the share is for service node '" + req.service_node.substr(0, 64)
                      + "', this is '" + cfg.name + "'");
      }
      if (auto why = api::wire::check(req, cfg.limits); !why.empty()) {
        return refuse(std::move(why));
      }
      if (cfg.verify) {
        if (auto why = cfg.verify(req); !why.empty()) {
          return refuse(std::move(why));
        }
      }
      if (self->state.seen.count(id) != 0) {
        return refuse("share " + std::to_string(id) + " was sent before; it is not run again");
      }
      remember(self->state, id, cfg.remember_ids);
      if (!cfg.bind) {
        return refuse("service node " + cfg.name + " runs no operations");
      }
      api::node_operation_ptr op;
      auto bound = cfg.bind(req.job, op);
      if (!bound.ok() || !op) {
        return refuse(bound.messages.empty() ? std::string{"the share could not be planned"}
                                             : bound.messages.front());
      }
      auto& s = self->state.shares[id];
      s.op = op;
      s.sink = sink;
      s.credits = req.credits;
      s.batch_nodes = req.batch_nodes;
      s.batch_bytes = req.batch_bytes;
      s.index_of.reserve(req.job.targets.size());
      for (const auto& t : req.job.targets) {
        s.index_of.push_back(t.index);
      }
      self->monitor(sink);
      auto me = caf::actor_cast<sn_impl_actor>(self);
      // the transport calls back on its own thread: hand over by message
      op->start(
        [me, id](size_t index, base::node_result r) {
          caf::anon_send(me, node_atom::value, id, index,
                         std::make_shared<base::node_result>(std::move(r)));
        },
        [me, id] { caf::anon_send(me, done_atom::value, id); });
    },
    [=](sn_credit_atom, const api::wire::credit& c) {
      auto it = self->state.shares.find(c.id);
      if (it != self->state.shares.end() && it->second.in_flight > 0) {
        --it->second.in_flight;
        flush(self, c.id);
      }
    },
    [=](sn_cancel_atom, const api::wire::cancel& c) {
      auto it = self->state.shares.find(c.id);
      if (it != self->state.shares.end()) {
        auto op = it->second.op;
        op->cancel(); // the nodes end `cancelled` and go back as results
      }
    },
    [=](node_atom, uint64_t id, size_t index, node_result_ptr& r) {
      auto it = self->state.shares.find(id);
      if (it == self->state.shares.end() || index >= it->second.index_of.size()) {
        return;
      }
      it->second.pending.push_back(api::wire::to_wire(it->second.index_of[index], *r));
      flush(self, id);
    },
    [=](done_atom, uint64_t id) {
      auto it = self->state.shares.find(id);
      if (it != self->state.shares.end()) {
        it->second.op_done = true;
        flush(self, id);
      }
    },
  };
}

} // namespace

sn_executor_actor spawn_service_node(caf::actor_system& sys, service_node_config cfg) {
  return caf::actor_cast<sn_executor_actor>(sys.spawn(service_node_impl, std::move(cfg)));
}

} // namespace cws::actors
