#include "actors/sn_agent.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/io/middleman_actor.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/stateful_actor.hpp>

#include <algorithm>

#include "actors/atoms.hpp"
#include "actors/sn_registry.hpp"
#include "api/sn_seal.hpp"
#include "base/log.hpp"

namespace cws::actors {

namespace {

using namespace std::chrono;
namespace wire = api::wire;

struct agent_state {
  sn_agent_config cfg;
  sn_registry_actor head;
  /// The link's generation: answers and timers of an older link are ignored.
  uint64_t gen = 0;
  /// A dial is scheduled (the link is down).
  bool waiting = false;
  bool registered = false;
  milliseconds backoff{0};
  steady_clock::time_point last_from_head;
  uint64_t seq = 0;
  /// The registration's challenge (heartbeats both ways are bound to it) and the head's
  /// last heartbeat number taken.
  std::string nonce;
  uint64_t head_seq = 0;
  /// The challenge of the join in flight.
  std::string joining;
  static inline const char* name = "sn-agent";
};

using agent = caf::stateful_actor<agent_state>;

std::string where(const sn_agent_config& c) {
  return c.host + ":" + std::to_string(c.port);
}

/// The link is down (`why`): the head's work ends if it was registered; dial again later.
void lost(agent* self, uint64_t g, const std::string& why) {
  auto& st = self->state;
  if (g != st.gen || st.waiting) {
    return;
  }
  st.waiting = true;
  if (st.head) {
    self->demonitor(st.head.address());
    st.head = nullptr;
  }
  if (st.registered) {
    st.registered = false;
    st.cfg.board->registered = false;
    base::log(base::log_level::warning, "lost the head at " + where(st.cfg) + ": " + why);
    if (st.cfg.on_head_lost) {
      st.cfg.on_head_lost(why);
    }
  } else {
    base::log(base::log_level::warning, "no link to the head at " + where(st.cfg) + ": " + why
                                          + "; dialing again in "
                                          + std::to_string(st.backoff.count()) + " ms");
  }
  self->delayed_send(self, st.backoff, dial_atom::value);
  st.backoff = std::min(st.backoff * 2, st.cfg.redial_max);
}

/// The head said no for good.
void refused(agent* self, const std::string& why) {
  auto& st = self->state;
  st.waiting = true; // no more dials
  base::log(base::log_level::error, "refused by the head at " + where(st.cfg) + ": " + why);
  if (st.cfg.on_refused) {
    st.cfg.on_refused(why);
  }
}

void join(agent* self, uint64_t g, const wire::sn_challenge& c) {
  auto& st = self->state;
  if (!c.refused.empty()) {
    refused(self, c.refused);
    return;
  }
  st.joining = c.nonce; // this registration's challenge: its heartbeats are bound to it
  wire::sn_join j{st.cfg.version, st.cfg.name, c.nonce,
                  api::sn_registration_proof(st.cfg.secret, st.cfg.name, st.cfg.version, c.nonce)};
  self->request(st.head, st.cfg.connect_timeout, std::move(j), st.cfg.executor)
    .then(
      [self, g](const wire::sn_welcome& w) {
        auto& st = self->state;
        if (g != st.gen) {
          return;
        }
        if (!w.refused.empty()) {
          refused(self, w.refused);
          return;
        }
        st.registered = true;
        st.nonce = st.joining;
        st.seq = 0;
        st.head_seq = 0;
        st.backoff = st.cfg.redial_min;
        st.last_from_head = steady_clock::now();
        st.cfg.board->registered = true;
        ++st.cfg.board->registrations;
        base::log(base::log_level::notice, "registered with the head " + w.head + " at "
                                             + where(st.cfg) + " as " + st.cfg.name);
        if (w.heartbeat_ms != st.cfg.heartbeat.count()
            || w.dead_after_ms != st.cfg.dead_after.count()) {
          base::log(base::log_level::warning,
                    "the head's sn_heartbeat_ms/sn_dead_after_ms (" + std::to_string(w.heartbeat_ms)
                      + "/" + std::to_string(w.dead_after_ms)
                      + ") differ from this service node's: set the same on both");
        }
      },
      [self, g](const caf::error& e) {
        lost(self, g, "registration: " + self->system().render(e));
      });
}

void dial(agent* self) {
  auto& st = self->state;
  st.waiting = false;
  auto g = ++st.gen;
  ++st.cfg.board->dials;
  // the middleman actor's connect, asked with a timeout: no actor thread waits on it
  auto mm = self->system().openssl_manager().actor_handle();
  self->request(mm, st.cfg.connect_timeout, caf::connect_atom::value, st.cfg.host, st.cfg.port)
    .then(
      [self, g](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>& ifs) {
        auto& st = self->state;
        if (g != st.gen) {
          return;
        }
        if (!ptr) {
          lost(self, g, "the head publishes nothing there");
          return;
        }
        if (!self->system().assignable<sn_registry_actor>(ifs)) {
          refused(self, "the actor at the head's address is no service-node registry of this "
                        "release (another clusterws version?)");
          return;
        }
        st.head = caf::actor_cast<sn_registry_actor>(std::move(ptr));
        self->monitor(st.head);
        self->request(st.head, st.cfg.connect_timeout, wire::sn_hello{st.cfg.version, st.cfg.name})
          .then([self, g](const wire::sn_challenge& c) { join(self, g, c); },
                [self, g](const caf::error& e) {
                  lost(self, g, "hello: " + self->system().render(e));
                });
      },
      [self, g](const caf::error& e) { lost(self, g, self->system().render(e)); });
}

caf::behavior agent_impl(agent* self, sn_agent_config cfg) {
  self->state.cfg = std::move(cfg);
  self->state.backoff = self->state.cfg.redial_min;
  self->set_down_handler([self](const caf::down_msg& dm) {
    auto& st = self->state;
    if (st.head && dm.source == st.head.address()) {
      lost(self, st.gen, "the link dropped (" + self->system().render(dm.reason) + ")");
    }
  });
  dial(self);
  self->delayed_send(self, self->state.cfg.heartbeat, tick_atom::value);
  return {
    [self](dial_atom) {
      if (self->state.waiting) {
        dial(self);
      }
    },
    [self](const wire::sn_heartbeat& hb) {
      auto& st = self->state;
      // the head's proof under this service node's secret, for this registration, rising:
      // a heartbeat relayed by another peer keeps nothing alive
      if (st.registered && hb.name == st.cfg.name && hb.seq > st.head_seq
          && api::sn_check_heartbeat(st.cfg.secret, api::sn_heartbeat_from::head, hb.name, st.nonce,
                                     hb.seq, hb.load, hb.proof)) {
        st.head_seq = hb.seq;
        st.last_from_head = steady_clock::now();
        ++st.cfg.board->heartbeats_received;
      }
    },
    [self](tick_atom) {
      auto& st = self->state;
      if (st.registered) {
        auto silent = steady_clock::now() - st.last_from_head;
        if (silent > st.cfg.dead_after) {
          lost(self, st.gen,
               "silent for " + std::to_string(duration_cast<milliseconds>(silent).count()) + " ms");
        } else {
          auto seq = ++st.seq;
          auto load = st.cfg.load ? st.cfg.load() : 0u;
          self->send(st.head,
                     wire::sn_heartbeat{
                       seq, load, st.cfg.name,
                       api::sn_heartbeat_proof(st.cfg.secret, api::sn_heartbeat_from::service_node,
                                               st.cfg.name, st.nonce, seq, load)});
          ++st.cfg.board->heartbeats_sent;
        }
      }
      self->delayed_send(self, st.cfg.heartbeat, tick_atom::value);
    },
  };
}

} // namespace

caf::actor spawn_sn_agent(caf::actor_system& sys, sn_agent_config cfg) {
  return sys.spawn(agent_impl, std::move(cfg));
}

} // namespace cws::actors
