#include "actors/delegation_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <random>

#include "actors/share_seal.hpp"
#include "api/copy.hpp"
#include "api/copy_share.hpp"
#include "api/sn_seal.hpp"
#include "base/node_errc.hpp"

namespace cws::actors {

namespace {

/// The delegation's own interface: a share's sink, plus what the head's share and the
/// operation send it.
using delegation_impl_actor = sn_sink_actor::extend<
  // node `index` (in the head share's order) of the head's share ended (the tag is unused)
  caf::reacts_to<node_atom, uint64_t, size_t, node_result_ptr>,
  // the head's share ended
  caf::reacts_to<done_atom, uint64_t>,
  // the call was cancelled
  caf::reacts_to<sn_cancel_atom>>;

struct share_state {
  std::string name;
  sn_executor_actor executor;
  std::vector<uint32_t> indexes;
  uint64_t id = 0;
  /// Its end, its refusal or its loss came: nothing more is taken from it.
  bool ended = false;
  /// Its nodes not ended yet, as counted on the board (sent, no result taken).
  size_t open = 0;
};

struct delegation_state {
  static inline const char* name = "delegation";
  std::vector<std::string> nodes;
  std::vector<uint8_t> reported;
  size_t remaining = 0;
  api::node_operation::result_fn on_result;
  std::function<void()> on_done;
  api::node_operation_ptr head;
  std::vector<uint32_t> head_indexes;
  std::vector<share_state> shares;
  std::unordered_map<uint64_t, size_t> share_by_id;
  bool finished = false;
  std::shared_ptr<sn_board> board;

  /// `n` nodes of `s` ended (a batch's when `batch`): the board's nodes in flight.
  void count_ended(share_state& s, size_t n, bool batch) {
    n = std::min(n, s.open);
    s.open -= n;
    if (board && batch) {
      board->count_batch(s.name, n);
    } else if (board && n > 0) {
      board->count_ended(s.name, n);
    }
  }

  /// Reports node `index` once; calls on_done after the last one.
  /// @returns true if that was the last node.
  bool report(size_t index, base::node_result r) {
    if (finished || index >= reported.size() || reported[index] != 0) {
      return false;
    }
    reported[index] = 1;
    r.name = nodes[index];
    on_result(index, std::move(r));
    if (--remaining == 0) {
      finished = true;
      on_done();
      return true;
    }
    return false;
  }

  /// Ends every node of `s` not reported yet with `error` and `message`.
  /// @returns true if the run ended.
  bool end_share(share_state& s, base::node_errc error, const std::string& message) {
    s.ended = true;
    count_ended(s, s.open, false);
    bool last = false;
    for (auto i : s.indexes) {
      if (i < reported.size() && reported[i] == 0) {
        last = report(i, base::node_result::failure({}, error, message)) || last;
      }
    }
    return last;
  }

  ~delegation_state() {
    if (finished) {
      return;
    }
    // the operation was dropped (the executor stops) or the actor was killed: cancel what
    // runs, and still give every node its one result
    if (head) {
      head->cancel();
    }
    for (auto& s : shares) {
      count_ended(s, s.open, false);
      if (!s.ended && s.executor) {
        caf::anon_send(s.executor, sn_cancel_atom::value,
                       api::wire::cancel{s.id, std::string{base::node_message::stopping}});
      }
    }
    for (size_t i = 0; i < reported.size() && !finished; ++i) {
      if (reported[i] == 0) {
        report(i, base::node_result::failure({}, base::node_errc::disconnected,
                                             base::node_message::stopping));
      }
    }
  }
};

using self_ptr = delegation_impl_actor::stateful_pointer<delegation_state>;

delegation_impl_actor::behavior_type delegation_impl(self_ptr self, delegated_run run,
                                                     api::node_operation::result_fn on_result,
                                                     std::function<void()> on_done) {
  auto& st = self->state;
  st.nodes = std::move(run.nodes);
  st.reported.assign(st.nodes.size(), 0);
  st.remaining = st.nodes.size();
  st.on_result = std::move(on_result);
  st.on_done = std::move(on_done);
  st.head = std::move(run.head);
  st.head_indexes = std::move(run.head_indexes);
  st.board = std::move(run.board);
  auto quit_when_done = [self] {
    if (self->state.finished) {
      self->quit();
    }
  };
  self->set_down_handler([=](caf::down_msg& dm) {
    for (auto& s : self->state.shares) {
      if (!s.ended && s.executor.address() == dm.source) {
        self->state.end_share(s, base::node_errc::servicenode,
                              "service node " + s.name
                                + " became unreachable after the command was sent; it may have "
                                  "run");
      }
    }
    quit_when_done();
  });
  if (st.remaining == 0) {
    st.finished = true;
    st.on_done();
  }
  for (auto& r : run.refused) {
    st.report(r.index, base::node_result::failure({}, base::node_errc::servicenode, r.message));
  }
  if (!st.head) {
    for (auto i : st.head_indexes) { // (a caller's slip: never leave a node without a result)
      st.report(i, base::node_result::failure({}, base::node_errc::unsupported,
                                              "the head's share of the call was not planned"));
    }
  }
  // the call's start: staged power-on waves are counted from it on the head and on every
  // service node (a share's delays are shortened by the time the head spent before it left)
  auto started = std::chrono::steady_clock::now();
  if (st.head && !st.finished) {
    auto me = caf::actor_cast<delegation_impl_actor>(self);
    // the transport calls back on its own thread: hand over by message
    st.head->start(
      [me](size_t index, base::node_result r) {
        caf::anon_send(me, node_atom::value, uint64_t{0}, index,
                       std::make_shared<base::node_result>(std::move(r)));
      },
      [me] { caf::anon_send(me, done_atom::value, uint64_t{0}); });
  }
  auto sink = caf::actor_cast<sn_sink_actor>(self);
  st.shares.reserve(run.shares.size());
  for (auto& sh : run.shares) {
    share_state s;
    s.name = sh.service_node;
    s.executor = sh.executor;
    s.indexes = std::move(sh.indexes);
    s.id = sh.request.job.id;
    st.share_by_id[s.id] = st.shares.size();
    st.shares.push_back(std::move(s));
    auto& placed = st.shares.back();
    if (!placed.executor) {
      st.end_share(placed, base::node_errc::servicenode,
                   "service node " + placed.name + " is not connected; nothing was run");
      continue;
    }
    self->monitor(placed.executor);
    auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - started)
                   .count();
    for (auto& t : sh.request.job.targets) {
      t.delay_ms = t.delay_ms > spent ? t.delay_ms - spent : 0;
    }
    if (run.seal) {
      run.seal(sh.request);
    }
    placed.open = placed.indexes.size();
    if (st.board) {
      st.board->count_share(placed.name, placed.open);
    }
    self->send(placed.executor, sn_run_atom::value, std::move(sh.request), sink);
  }
  if (st.finished) {
    self->quit();
  }
  return {
    [=](sn_batch_atom, api::wire::result_batch& b) {
      auto& st = self->state;
      auto it = st.share_by_id.find(b.id);
      if (it == st.share_by_id.end() || st.shares[it->second].ended) {
        return; // another run's, or from a service node given up on
      }
      auto& s = st.shares[it->second];
      size_t taken = 0;
      for (auto& r : b.results) {
        if (r.index < s.indexes.size()) { // a service node reports on its own nodes only
          taken += st.reported[s.indexes[r.index]] == 0 ? 1 : 0;
          st.report(s.indexes[r.index], api::wire::from_wire(std::move(r)));
        }
      }
      st.count_ended(s, taken, true);
      if (!st.finished) {
        self->send(s.executor, sn_credit_atom::value, api::wire::credit{b.id, b.seq});
      }
      quit_when_done();
    },
    [=](sn_end_atom, api::wire::share_end& e) {
      auto& st = self->state;
      auto it = st.share_by_id.find(e.id);
      if (it == st.share_by_id.end() || st.shares[it->second].ended) {
        return;
      }
      auto& s = st.shares[it->second];
      self->demonitor(s.executor.address());
      if (!e.refused.empty()) {
        st.end_share(s, base::node_errc::servicenode,
                     "service node " + s.name + " refused the request: " + e.refused
                       + "; nothing was run");
      } else {
        st.end_share(s, base::node_errc::servicenode,
                     "service node " + s.name + " ended without reporting this node");
      }
      quit_when_done();
    },
    [=](node_atom, uint64_t, size_t index, node_result_ptr& r) {
      auto& st = self->state;
      if (index < st.head_indexes.size()) {
        st.report(st.head_indexes[index], std::move(*r));
      }
      quit_when_done();
    },
    [=](done_atom, uint64_t) {
      // every node of the head's share was reported before this (one sender, in order)
    },
    [=](sn_cancel_atom) {
      auto& st = self->state;
      if (st.head) {
        st.head->cancel();
      }
      for (auto& s : st.shares) {
        if (!s.ended) {
          self->send(s.executor, sn_cancel_atom::value,
                     api::wire::cancel{s.id, std::string{base::node_message::cancelled}});
        }
      }
    },
  };
}

/// The delegated call as an api::node_operation: spawns the delegation at start.
class delegated_operation : public api::node_operation {
 public:
  delegated_operation(caf::actor_system& sys, delegated_run run)
      : sys_(sys), nodes_(run.nodes), run_(std::move(run)) {
  }

  ~delegated_operation() override {
    // the executor let go of the call (it ended, or the executor stops): a delegation still
    // running ends its nodes and its service nodes' work
    if (actor_) {
      caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
    }
  }

  const std::vector<std::string>& nodes() const override {
    return nodes_;
  }

  void start(result_fn on_result, std::function<void()> on_done) override {
    std::lock_guard<std::mutex> guard{mu_};
    actor_ = sys_.spawn(delegation_impl, std::move(run_), std::move(on_result), std::move(on_done));
    if (cancelled_) {
      caf::anon_send(actor_, sn_cancel_atom::value);
    }
  }

  void stream_output(output_fn f) override {
    std::lock_guard<std::mutex> guard{mu_};
    if (run_.head && f) {
      run_.head->stream_output([f = std::move(f), map = run_.head_indexes](
                                 size_t index, int stream, const char* data, size_t size) {
        if (index < map.size()) {
          f(map[index], stream, data, size);
        }
      });
    }
  }

  void cancel() override {
    std::lock_guard<std::mutex> guard{mu_};
    cancelled_ = true;
    if (actor_) {
      caf::anon_send(actor_, sn_cancel_atom::value);
    }
  }

 private:
  caf::actor_system& sys_;
  std::vector<std::string> nodes_;
  std::mutex mu_;
  delegated_run run_;
  delegation_impl_actor actor_;
  bool cancelled_ = false;
};

} // namespace

delegated_run
make_delegated_run(std::vector<std::string> nodes, const api::wire::job_request& job,
                   const api::delegation_plan& plan,
                   const std::unordered_map<std::string, sn_executor_actor>& executors,
                   const api::delegation_settings& settings, size_t fanout, size_t& head_fanout) {
  std::vector<size_t> counts{plan.head.size()};
  for (const auto& s : plan.shares) {
    counts.push_back(s.indexes.size());
  }
  auto parts = api::split_fanout(fanout, counts);
  head_fanout = parts[0];
  std::random_device rd;
  std::mt19937_64 ids{(uint64_t{rd()} << 32) ^ rd()};
  delegated_run run;
  run.nodes = std::move(nodes);
  run.head_indexes = plan.head;
  run.refused = plan.refused;
  for (size_t k = 0; k < plan.shares.size(); ++k) {
    const auto& s = plan.shares[k];
    delegated_share d;
    d.service_node = s.service_node;
    d.executor = executors.at(s.service_node);
    d.indexes = s.indexes;
    uint64_t id = 0;
    while (id == 0) {
      id = ids();
    }
    d.request = api::make_share(job, s.indexes, s.service_node, id, parts[k + 1], settings);
    run.shares.push_back(std::move(d));
  }
  return run;
}

api::node_operation_ptr delegate(caf::actor_system& sys, delegated_run run) {
  return std::make_shared<delegated_operation>(sys, std::move(run));
}

bind_ptr delegating_bind(caf::actor_system& sys, std::shared_ptr<const api::drivers> d,
                         delegation_config cfg) {
  return std::make_shared<bind_fn>(
    [&sys, d = std::move(d), cfg = std::move(cfg)](
      const store::database& db, const api::api_call& call, const api::authorization& auth,
      const store::noderange_options& opts, api::node_operation_ptr& out) -> api::api_result {
      if (!cfg.roster || !api::delegates(call) || !cfg.roster->any_known()) {
        return api::plan(db, call, auth, opts, *d, out); // no service node: as ever
      }
      auto live = cfg.roster->snapshot();
      api::service_nodes sns;
      sns.fallback = cfg.settings.fallback;
      for (const auto& name : live.known) {
        sns.known[name] = live.up.count(name) != 0;
      }
      for (const auto& [name, m] : live.up) {
        sns.known[name] = true;
      }
      sns.head.insert(cfg.head.begin(), cfg.head.end());
      api::delegated_plan p;
      auto r = api::plan_delegated(db, call, auth, opts, *d, sns, p);
      if (!r.ok() || p.where.all_on_head()) {
        out = std::move(p.head);
        return r;
      }
      if (p.copy && !p.where.shares.empty()) {
        // the files plan_delegated read once (with the caller's rights, as for the head's
        // nodes): their bytes go in the shares (docs/service-nodes.md, "Copies")
        if (auto why = api::carry_copy(*p.copy, cfg.settings.copy_max, p.job.files); !why.empty()) {
          api::refuse_shares(p.where, why);
        }
      }
      std::unordered_map<std::string, sn_executor_actor> executors;
      auto secrets = std::make_shared<std::unordered_map<std::string, std::string>>();
      for (const auto& sh : p.where.shares) {
        const auto& m = live.up.at(sh.service_node); // (planned from this view: it is there)
        executors[sh.service_node] = m.executor;
        (*secrets)[sh.service_node] = m.secret;
      }
      size_t head_fanout = 0;
      auto run = make_delegated_run(std::move(p.nodes), p.job, p.where, executors, cfg.settings,
                                    p.fanout, head_fanout);
      run.head = std::move(p.head);
      run.seal = [secrets, ttl = cfg.seal_ttl](api::wire::share_request& share) {
        auto it = secrets->find(share.service_node);
        if (it != secrets->end()) {
          seal_share(share, it->second, api::sn_now_ms() + ttl.count());
        }
      };
      run.board = cfg.board;
      out = delegate(sys, std::move(run));
      return r;
    });
}

} // namespace cws::actors
