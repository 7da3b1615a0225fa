#include "actors/reapply_actor.hpp"

#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <algorithm>
#include <array>
#include <string_view>

#include "base/log.hpp"

namespace cws::actors {

namespace {

/// The node attributes a hosts line, a DHCP reservation or a DNS record is made of.
constexpr std::array<std::string_view, 11> relevant{"groups",
                                                    "hostnames",
                                                    "ip",
                                                    "mac",
                                                    "nicaliases",
                                                    "nichostnameprefixes",
                                                    "nichostnamesuffixes",
                                                    "nicips",
                                                    "nicnetworks",
                                                    "nictypes",
                                                    "otherinterfaces"};

bool is_relevant(const std::string& attr) {
  return std::find(relevant.begin(), relevant.end(), attr) != relevant.end();
}

struct reapply_state {
  std::set<std::string> pending;
  bool scheduled = false;
  static inline const char* name = "reapply";
};

using self_ptr = reapply_actor::stateful_pointer<reapply_state>;

/// One re-apply step as the REST resource runs it; its failure is logged, never retried (the
/// next change tries again).
void run(const store_actor& store, api::operation op, const std::vector<std::string>& nodes,
         const char* what) {
  auto call = std::make_shared<api::api_call>();
  call->op = op;
  call->type = store::object_type::node;
  call->target = "reapply"; // (non-empty: the nodes below, not every node)
  api::authorization auth;
  auth.user = "root";
  auth.nodes = std::make_shared<const std::vector<std::string>>(nodes);
  auto done = std::make_shared<done_fn>([what, count = nodes.size()](api::api_result r) {
    if (r.ok()) {
      base::log(base::log_level::info, std::string{"provision re-apply: "} + what + " for "
                                         + std::to_string(count) + " node(s)");
      return;
    }
    std::string why;
    for (const auto& m : r.messages) {
      why += (why.empty() ? "" : "; ") + m;
    }
    base::log(base::log_level::warning,
              std::string{"provision re-apply: "} + what + " failed: " + why);
  });
  caf::anon_send(store, run_atom::value, api::api_call_ptr{std::move(call)}, std::move(auth),
                 std::move(done));
}

reapply_actor::behavior_type reapply_impl(self_ptr self, store_actor store, reapply_config cfg) {
  return {
    [self, cfg](const change_set_ptr& set) {
      auto& st = self->state;
      reapply_nodes(*set, st.pending);
      if (!st.pending.empty() && !st.scheduled) {
        st.scheduled = true; // the burst's first change: one re-apply for all of it
        self->delayed_send(self, cfg.delay, tick_atom::value);
      }
    },
    [](reset_atom, uint64_t) {
      // changes were missed (the log moved on): nothing to name; the next change re-applies
    },
    [](const activity_ptr&) {
      // jobs and power: nothing here
    },
    [self, store, cfg](tick_atom) {
      auto& st = self->state;
      st.scheduled = false;
      if (st.pending.empty()) {
        return;
      }
      std::vector<std::string> nodes(st.pending.begin(), st.pending.end());
      st.pending.clear();
      run(store, api::operation::make_hosts, nodes, "makehosts");
      run(store, api::operation::make_dhcp, nodes, "makedhcp");
      if (cfg.dns_configured && cfg.dns_configured()) {
        run(store, api::operation::dns_apply, nodes, "makedns");
      }
    },
  };
}

} // namespace

void reapply_nodes(const store::change_set& set, std::set<std::string>& out) {
  for (const auto& c : set.changes) {
    if (c.type != store::object_type::node) {
      continue;
    }
    if (c.kind == store::change_kind::removed) {
      out.erase(c.name); // gone again within the burst (or renamed away): nothing to apply
      continue;
    }
    if (c.kind == store::change_kind::created
        || std::any_of(c.attrs.begin(), c.attrs.end(), is_relevant)) {
      out.insert(c.name);
    }
  }
}

reapply_actor spawn_reapply(caf::actor_system& sys, events_actor events, store_actor store,
                            reapply_config cfg) {
  auto me = sys.spawn(reapply_impl, std::move(store), std::move(cfg));
  caf::anon_send(events, subscribe_atom::value, caf::actor_cast<change_subscriber>(me), from_now);
  return me;
}

} // namespace cws::actors
