#include "actors/sn_registry.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <algorithm>
#include <map>

#include "actors/atoms.hpp"
#include "api/sn_seal.hpp"
#include "base/log.hpp"
#include "base/log_burst.hpp"
#include "base/published_file.hpp"

namespace cws::actors {

// -- board ----------------------------------------------------------------------------

std::vector<sn_status> sn_board::snapshot() const {
  std::lock_guard<std::mutex> lock{mutex_};
  return list_;
}

void sn_board::put(const sn_status& s) {
  std::lock_guard<std::mutex> lock{mutex_};
  for (auto& x : list_) {
    if (x.name == s.name) {
      x = s;
      return;
    }
  }
  list_.push_back(s);
}

uint64_t sn_board::joins() const {
  std::lock_guard<std::mutex> lock{mutex_};
  return joins_;
}
uint64_t sn_board::refusals() const {
  std::lock_guard<std::mutex> lock{mutex_};
  return refusals_;
}
uint64_t sn_board::departures() const {
  std::lock_guard<std::mutex> lock{mutex_};
  return departures_;
}
uint64_t sn_board::heartbeats() const {
  std::lock_guard<std::mutex> lock{mutex_};
  return heartbeats_;
}
void sn_board::count_join() {
  std::lock_guard<std::mutex> lock{mutex_};
  ++joins_;
}
void sn_board::count_refusal() {
  std::lock_guard<std::mutex> lock{mutex_};
  ++refusals_;
}
void sn_board::count_departure() {
  std::lock_guard<std::mutex> lock{mutex_};
  ++departures_;
}
void sn_board::count_heartbeat() {
  std::lock_guard<std::mutex> lock{mutex_};
  ++heartbeats_;
}

void sn_board::count_share(const std::string& name, size_t nodes) {
  std::lock_guard<std::mutex> lock{mutex_};
  auto& t = traffic_[name];
  t.name = name;
  ++t.shares;
  t.in_flight += nodes;
}
void sn_board::count_batch(const std::string& name, size_t ended) {
  std::lock_guard<std::mutex> lock{mutex_};
  auto& t = traffic_[name];
  t.name = name;
  ++t.batches;
  t.in_flight -= std::min<uint64_t>(t.in_flight, ended);
}
void sn_board::count_ended(const std::string& name, size_t ended) {
  std::lock_guard<std::mutex> lock{mutex_};
  auto& t = traffic_[name];
  t.name = name;
  t.in_flight -= std::min<uint64_t>(t.in_flight, ended);
}
std::vector<sn_traffic> sn_board::traffic() const {
  std::lock_guard<std::mutex> lock{mutex_};
  std::vector<sn_traffic> out;
  out.reserve(traffic_.size());
  for (const auto& [name, t] : traffic_) {
    out.push_back(t);
  }
  return out;
}

// -- roster ---------------------------------------------------------------------------

sn_roster::view sn_roster::snapshot() const {
  std::lock_guard<std::mutex> lock{mutex_};
  return v_;
}

bool sn_roster::any_known() const {
  std::lock_guard<std::mutex> lock{mutex_};
  return !v_.known.empty() || !v_.up.empty();
}

void sn_roster::set_known(std::unordered_set<std::string> names) {
  std::lock_guard<std::mutex> lock{mutex_};
  v_.known = std::move(names);
}

void sn_roster::put(const std::string& name, member m) {
  std::lock_guard<std::mutex> lock{mutex_};
  v_.known.insert(name);
  v_.up[name] = std::move(m);
}

void sn_roster::drop(const std::string& name) {
  std::lock_guard<std::mutex> lock{mutex_};
  v_.up.erase(name);
}

namespace {

using namespace std::chrono;
namespace wire = api::wire;

/// A registered service node.
struct member {
  sn_status status;
  caf::actor handle;
  steady_clock::time_point last;
  /// What its heartbeats are checked with: its secret, its registration's challenge and the
  /// last heartbeat number taken (never the sender's address: BASP lets a peer write it).
  std::string secret;
  std::string nonce;
  uint64_t last_seq = 0;
};

/// A link between hello and join.
struct pending_join {
  std::string name;
  std::string nonce;
  steady_clock::time_point until;
};

struct registry_state {
  sn_registry_config cfg;
  std::map<caf::actor_addr, pending_join> pending;
  std::map<std::string, member> members;
  uint64_t seq = 0;
  static inline const char* name = "sn-registry";
};

using registry = caf::stateful_actor<registry_state>;

/// The secret of service node `name`, or "" when the head does not know it.
std::string secret_of(const sn_registry_config& cfg, const std::string& name) {
  if (!api::valid_sn_name(name)) {
    return {};
  }
  auto path = cfg.secrets / name;
  std::string text;
  bool exists = false;
  if (base::read_file(path, 1024, text, &exists) || !exists) {
    return {};
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.pop_back();
  }
  return api::check_sn_secret(text).empty() ? text : std::string{};
}

/// The names of the secrets the head holds: every service node it knows.
std::unordered_set<std::string> known_names(const sn_registry_config& cfg) {
  std::unordered_set<std::string> out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it{cfg.secrets, ec}, end; !ec && it != end;
       it.increment(ec)) {
    auto name = it->path().filename().string();
    if (api::valid_sn_name(name)) {
      out.insert(std::move(name));
    }
  }
  return out;
}

int64_t now_ms() {
  return api::sn_now_ms();
}

void refuse(registry* self, const std::string& why) {
  self->state.cfg.board->count_refusal();
  base::log(base::log_level::warning, "service node refused: " + why);
}

void leave(registry* self, const std::string& name, const std::string& why) {
  auto& st = self->state;
  auto it = st.members.find(name);
  if (it == st.members.end()) {
    return;
  }
  self->demonitor(it->second.handle.address());
  it->second.status.registered = false;
  it->second.status.left = why;
  st.cfg.board->put(it->second.status);
  st.cfg.board->count_departure();
  st.cfg.roster->drop(name);
  base::log(base::log_level::warning, "service node " + name + " left: " + why);
  if (st.cfg.on_event) {
    st.cfg.on_event(name, "left", why);
  }
  st.members.erase(it);
}

caf::behavior registry_impl(registry* self, sn_registry_config cfg) {
  self->state.cfg = std::move(cfg);
  self->state.cfg.roster->set_known(known_names(self->state.cfg));
  self->set_down_handler([self](const caf::down_msg& dm) {
    for (auto& [name, m] : self->state.members) {
      if (m.handle.address() == dm.source) {
        auto why = "its link dropped (" + self->system().render(dm.reason) + ")";
        leave(self, std::string{name}, why);
        return;
      }
    }
  });
  self->delayed_send(self, self->state.cfg.heartbeat, tick_atom::value);
  return {
    [self](const wire::sn_hello& h) -> wire::sn_challenge {
      auto& st = self->state;
      wire::sn_challenge c;
      c.version = api::sn_protocol_version;
      if (h.version != api::sn_protocol_version) {
        c.refused = "protocol version " + std::to_string(h.version) + " of service node '" + h.name
                    + "' is not the head's protocol version "
                    + std::to_string(api::sn_protocol_version)
                    + ": run the same clusterws release on both";
        refuse(self, c.refused);
        return c;
      }
      if (secret_of(st.cfg, h.name).empty()) {
        c.refused = "service node '" + h.name
                    + "' is not known to this head (clusterctl sn add on the head)";
        refuse(self, c.refused);
        return c;
      }
      c.nonce = api::make_sn_challenge();
      auto sender = caf::actor_cast<caf::actor_addr>(self->current_sender());
      st.pending[sender] = {h.name, c.nonce, steady_clock::now() + st.cfg.dead_after};
      return c;
    },
    [self](const wire::sn_join& j, const sn_executor_actor& executor) -> wire::sn_welcome {
      auto& st = self->state;
      wire::sn_welcome w;
      w.head = st.cfg.head;
      w.heartbeat_ms = duration_cast<milliseconds>(st.cfg.heartbeat).count();
      w.dead_after_ms = duration_cast<milliseconds>(st.cfg.dead_after).count();
      auto sender = caf::actor_cast<caf::actor_addr>(self->current_sender());
      auto p = st.pending.find(sender);
      if (p == st.pending.end() || p->second.name != j.name
          || p->second.until < steady_clock::now()) {
        w.refused = "no challenge outstanding for service node '" + j.name
                    + "' on this link (send a hello first)";
        refuse(self, w.refused);
        return w;
      }
      auto nonce = p->second.nonce;
      st.pending.erase(p); // one join per challenge
      auto secret = secret_of(st.cfg, j.name);
      if (secret.empty() || j.version != api::sn_protocol_version
          || !api::sn_check_registration(secret, j.name, j.version, nonce, j.proof)) {
        w.refused = "service node '" + j.name
                    + "' did not prove its secret (its sn-secret is not the head's record: "
                      "clusterctl sn add again and copy the new home)";
        refuse(self, w.refused);
        return w;
      }
      if (!executor) {
        w.refused = "service node '" + j.name + "' named no executor to send work to";
        refuse(self, w.refused);
        return w;
      }
      // a service node that restarted registers again before its old link timed out
      if (st.members.count(j.name) > 0) {
        leave(self, j.name, "it registered again");
      }
      member m;
      m.handle = caf::actor_cast<caf::actor>(self->current_sender());
      m.last = steady_clock::now();
      m.secret = secret;
      m.nonce = nonce;
      m.status.name = j.name;
      m.status.registered = true;
      m.status.joined_ms = now_ms();
      m.status.last_heartbeat_ms = m.status.joined_ms;
      self->monitor(m.handle);
      st.cfg.board->put(m.status);
      st.cfg.board->count_join();
      st.cfg.roster->put(j.name, {executor, secret});
      base::log(base::log_level::notice, "service node " + j.name + " registered");
      if (st.cfg.on_event) {
        st.cfg.on_event(j.name, "joined", "");
      }
      st.members.emplace(j.name, std::move(m));
      return w;
    },
    [self](const wire::sn_heartbeat& hb) {
      auto& st = self->state;
      auto it = st.members.find(hb.name);
      // proven by the secret and bound to this registration, whoever relayed it; rising, so
      // an old one sent again counts for nothing
      if (it == st.members.end() || hb.seq <= it->second.last_seq
          || !api::sn_check_heartbeat(it->second.secret, api::sn_heartbeat_from::service_node,
                                      hb.name, it->second.nonce, hb.seq, hb.load, hb.proof)) {
        static base::log_burst dropped{base::log_level::warning,
                                       "dropped a service-node heartbeat without a proof"};
        dropped.note("claiming '" + hb.name.substr(0, 64) + "'");
        return;
      }
      auto& m = it->second;
      m.last_seq = hb.seq;
      m.last = steady_clock::now();
      m.status.last_heartbeat_ms = now_ms();
      m.status.load = hb.load;
      ++m.status.heartbeats;
      st.cfg.board->put(m.status);
      st.cfg.board->count_heartbeat();
    },
    [self](tick_atom) {
      auto& st = self->state;
      auto now = steady_clock::now();
      st.cfg.roster->set_known(known_names(st.cfg)); // (clusterctl sn add and remove)
      std::vector<std::pair<std::string, std::string>> gone;
      for (auto& [name, m] : st.members) {
        if (now - m.last > st.cfg.dead_after) {
          gone.emplace_back(name, "silent for more than "
                                    + std::to_string(st.cfg.dead_after.count()) + " ms");
        } else if (secret_of(st.cfg, name).empty()) {
          gone.emplace_back(name, "removed (clusterctl sn remove)");
        } else {
          auto seq = ++st.seq;
          self->send(m.handle, wire::sn_heartbeat{
                                 seq, 0, name,
                                 api::sn_heartbeat_proof(m.secret, api::sn_heartbeat_from::head,
                                                         name, m.nonce, seq, 0)});
        }
      }
      for (auto& [name, why] : gone) {
        // no more heartbeats to it: the service node sees the head silent and dials again
        leave(self, name, why);
      }
      for (auto it = st.pending.begin(); it != st.pending.end();) {
        it = it->second.until < now ? st.pending.erase(it) : std::next(it);
      }
      self->delayed_send(self, st.cfg.heartbeat, tick_atom::value);
    },
  };
}

} // namespace

sn_registry_actor spawn_sn_registry(caf::actor_system& sys, sn_registry_config cfg) {
  // the published interface is the registry's contract; its tick is its own
  return caf::actor_cast<sn_registry_actor>(sys.spawn(registry_impl, std::move(cfg)));
}

} // namespace cws::actors
