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

/// Site keys whose change re-applies every node.
bool is_site_relevant(const std::string& key) {
  return key == "domain" || key == "dhcpinterfaces" || key == "dhcpinterface";
}

struct reapply_state {
  reapply_work pending;
  bool scheduled = false;
  static inline const char* name = "reapply";
};

using self_ptr = reapply_actor::stateful_pointer<reapply_state>;

/// One re-apply step as the REST resource runs it; its failure is logged, never retried (the
/// next change tries again). `nodes` (verified again by the step) or, when null, `target` (a
/// noderange the step expands: groups, `/.*`); `removed`: nodes no longer defined, whose
/// entries the step deletes by name.
void run(const store_actor& store, api::operation op, std::string command,
         std::shared_ptr<const std::vector<std::string>> nodes, std::string target,
         std::vector<std::string> removed, std::string what) {
  auto call = std::make_shared<api::api_call>();
  call->op = op;
  call->type = store::object_type::node;
  call->command = std::move(command);
  call->target = nodes ? std::string{"reapply"} : std::move(target); // (non-empty: not every node)
  call->removed_nodes = std::move(removed);
  api::authorization auth;
  auth.user = "root";
  auto count = nodes ? nodes->size() : call->removed_nodes.size();
  auth.nodes = std::move(nodes);
  // the log names the nodes' count, or the noderange the step expanded (`rack1`, `/.*`)
  auto whom = auth.nodes || !call->removed_nodes.empty() ? std::to_string(count) + " node(s)"
              : call->target.empty()                     ? std::string{"every node"}
                                                         : call->target;
  auto done = std::make_shared<done_fn>([what, whom](api::api_result r) {
    if (r.ok()) {
      base::log(base::log_level::info, "provision re-apply: " + what + " for " + whom);
      return;
    }
    std::string why;
    for (const auto& m : r.messages) {
      why += (why.empty() ? "" : "; ") + m;
    }
    base::log(base::log_level::warning, "provision re-apply: " + what + " failed: " + why);
  });
  caf::anon_send(store, run_atom::value, api::api_call_ptr{std::move(call)}, std::move(auth),
                 std::move(done));
}

/// The re-apply of one burst, in order: removals, then the -n forms (a site change), then the
/// nodes (named, or every node), then the groups' members.
void reapply(const store_actor& store, const reapply_config& cfg, const reapply_work& w) {
  using api::operation;
  bool dns = cfg.dns_configured && cfg.dns_configured();
  if (!w.removed.empty()) {
    std::vector<std::string> gone(w.removed.begin(), w.removed.end());
    run(store, operation::make_hosts, "", nullptr, "", gone, "makehosts -d");
    run(store, operation::make_dhcp, "-d", nullptr, "", gone, "makedhcp -d");
    if (dns) {
      run(store, operation::dns_delete, "", nullptr, "", gone, "makedns -d");
    }
  }
  if (w.everything) {
    // the site's domain or interfaces: every node's lines, the server configuration, then
    // every reservation; makedns -n is the whole DNS configuration with every node
    run(store, operation::make_hosts, "", nullptr, "/.*", {}, "makehosts");
    run(store, operation::make_dhcp, "-n", nullptr, "", {}, "makedhcp -n");
    run(store, operation::make_dhcp, "", nullptr, "/.*", {}, "makedhcp");
    if (dns) {
      run(store, operation::dns_service, "", nullptr, "", {}, "makedns -n");
    }
    return; // (every node: the named ones and the groups' are among them)
  }
  if (!w.nodes.empty()) {
    auto nodes = std::make_shared<const std::vector<std::string>>(w.nodes.begin(), w.nodes.end());
    run(store, operation::make_hosts, "", nodes, "", {}, "makehosts");
    run(store, operation::make_dhcp, "", nodes, "", {}, "makedhcp");
    if (dns) {
      run(store, operation::dns_apply, "", nodes, "", {}, "makedns");
    }
  }
  if (!w.groups.empty()) {
    std::string range;
    for (const auto& g : w.groups) {
      range += (range.empty() ? "" : ",") + g;
    }
    run(store, operation::make_hosts, "", nullptr, range, {}, "makehosts");
    run(store, operation::make_dhcp, "", nullptr, range, {}, "makedhcp");
    if (dns) {
      run(store, operation::dns_apply, "", nullptr, range, {}, "makedns");
    }
  }
}

reapply_actor::behavior_type reapply_impl(self_ptr self, store_actor store, reapply_config cfg) {
  return {
    [self, cfg](const change_set_ptr& set) {
      auto& st = self->state;
      reapply_gather(*set, st.pending);
      if (!cfg.reapply) {
        st.pending.nodes.clear();
        st.pending.removed.clear();
        st.pending.groups.clear();
        st.pending.everything = false;
      }
      if (!cfg.mirror) {
        st.pending.boot_states.clear();
      }
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
      auto work = std::move(st.pending);
      st.pending = {};
      if (work.empty()) {
        return;
      }
      reapply(store, cfg, work);
      if (!work.boot_states.empty() && cfg.mirror) {
        cfg.mirror({work.boot_states.begin(), work.boot_states.end()});
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

void reapply_gather(const store::change_set& set, reapply_work& work) {
  for (const auto& c : set.changes) {
    if (c.type == store::object_type::site) {
      if (std::any_of(c.attrs.begin(), c.attrs.end(), is_site_relevant)) {
        work.everything = true;
      }
      continue;
    }
    if (c.type == store::object_type::group) {
      if (c.kind != store::change_kind::removed
          && std::any_of(c.attrs.begin(), c.attrs.end(), is_relevant)) {
        work.groups.insert(c.name);
      } else if (c.kind == store::change_kind::removed) {
        work.groups.erase(c.name);
      }
      continue;
    }
    if (c.type != store::object_type::node) {
      continue;
    }
    if (c.kind == store::change_kind::removed) {
      work.nodes.erase(c.name);
      work.removed.insert(c.name); // (its entries go, also when it was made in this burst)
      work.boot_states.insert(c.name);
      continue;
    }
    if (c.kind == store::change_kind::created) {
      work.removed.erase(c.name); // defined again: its entries are rewritten, not removed
    }
    if (c.kind == store::change_kind::created
        || std::any_of(c.attrs.begin(), c.attrs.end(), is_relevant)) {
      work.nodes.insert(c.name);
    }
    if (c.kind == store::change_kind::created
        || std::find(c.attrs.begin(), c.attrs.end(), "currstate") != c.attrs.end()) {
      work.boot_states.insert(c.name);
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
