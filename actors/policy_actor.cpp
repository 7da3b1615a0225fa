#include "actors/policy_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <ctime>
#include <unordered_map>

#include "store/credentials.hpp"

namespace cws::actors {

namespace {

using clock = std::chrono::steady_clock;

constexpr const char* auth_failure = "Authentication failure";
constexpr size_t max_tracked = 100000; // memory bound of the caches and the backoff table

struct policy_state {
  auth_snapshot_ptr snap;
  /// Password checks in progress, by cache key: callers with the same credentials wait for
  /// the one check instead of queueing slow hashes of their own.
  struct waiter {
    api_call_ptr call;
    caf::typed_response_promise<auth_result> rp;
    bool fresh;
  };
  std::unordered_map<std::string, std::vector<waiter>> verifying;
  std::unordered_map<std::string, clock::time_point> verified;
  std::unordered_map<std::string, unsigned> failures;
  std::unordered_map<uint64_t, caf::typed_response_promise<auth_result>> delayed;
  uint64_t next_delayed = 0;
  auth_stats stats;
  static inline const char* name = "policy";
};

using self_ptr = policy_actor::stateful_pointer<policy_state>;
using promise = caf::typed_response_promise<auth_result>;

/// What every step of one authorization needs.
struct context {
  self_ptr self;
  store_actor store;
  hasher_actor hasher;
  policy_config cfg;
};

bool is_loopback(const std::string& addr) {
  return addr.rfind("127.", 0) == 0 || addr == "::1" || addr.rfind("::ffff:127.", 0) == 0;
}

/// True for calls whose target is a noderange that policy `noderange` rows apply to.
bool has_noderange(const api_call& call) {
  return call.type == store::object_type::node && !call.target.empty()
         && call.op != operation::list;
}

/// The xCAT-style argument line a policy `parameters` row is matched against.
std::string arguments(const api_call& call) {
  std::string args = "-t " + std::string{store::type_name(call.type)};
  if (!call.target.empty()) {
    args += " -o " + call.target;
  }
  for (const auto& c : call.changes) {
    args += " " + c.name + "=" + c.value;
  }
  return args;
}

std::string failure_key(const api_call& call) {
  return call.client + '\0' + call.creds.user;
}

void authenticate(const context& cx, api_call_ptr call, promise rp, bool fresh);

/// Loads passwords and policy as the database holds them now, then authenticates the call.
void refresh_then_authenticate(const context& cx, api_call_ptr call, promise rp) {
  cx.self->request(cx.store, caf::infinite, snapshot_atom::value)
    .then(
      [cx, call, rp](auth_snapshot_ptr& snap) mutable {
        cx.self->state.snap = std::move(snap);
        authenticate(cx, call, rp, true);
      },
      [rp](caf::error&) mutable {
        rp.deliver(auth_result::refused({}, "The service could not check credentials.", true));
      });
}

/// Authentication failed: answer now, or after a growing delay for repeated failures. A "no"
/// from a snapshot that may be old is first checked again on current data (`fresh`), so a
/// password or policy set with the CLI counts on the next request.
void deny(const context& cx, api_call_ptr call, promise rp, bool fresh) {
  if (!fresh) {
    refresh_then_authenticate(cx, call, rp);
    return;
  }
  auto& st = cx.self->state;
  ++st.stats.failures;
  if (call->creds.password.empty()) {
    // nothing was guessed (no credentials, or a token): refuse at once
    rp.deliver(auth_result::refused({}, auth_failure));
    return;
  }
  if (st.failures.size() >= max_tracked) {
    st.failures.clear();
  }
  auto n = ++st.failures[failure_key(*call)];
  if (n <= cx.cfg.backoff_after) {
    rp.deliver(auth_result::refused({}, auth_failure));
    return;
  }
  auto delay = cx.cfg.backoff_base;
  for (unsigned i = cx.cfg.backoff_after + 1; i < n && delay < cx.cfg.backoff_max; ++i) {
    delay *= 2;
  }
  auto id = st.next_delayed++;
  st.delayed.emplace(id, rp);
  cx.self->delayed_send(cx.self, std::min(delay, cx.cfg.backoff_max), fail_atom::value, id);
}

/// Authenticated as `user`: decide with the policy table.
void authorize(const context& cx, api_call_ptr call, std::string user, promise rp, bool fresh) {
  cx.self->state.failures.erase(failure_key(*call));
  auto snap = cx.self->state.snap;
  auth_result stamp;
  stamp.stamp = {snap->auth_generation, snap->membership_generation, snap->has_noderange_rows};
  if (call->policy_command.empty()) {
    // authentication is all it needs (tokens)
    stamp.allowed = true;
    stamp.user = user;
    rp.deliver(std::move(stamp));
    return;
  }
  store::policy_request req;
  req.user = user;
  req.hosts = {call->client};
  if (is_loopback(call->client)) {
    req.hosts.emplace_back("localhost");
  }
  req.command = call->policy_command;
  req.arguments = arguments(*call);
  auto decide = [cx, call, rp, user, snap, stamp, fresh](const store::policy_request& q) mutable {
    auto d = store::evaluate_policy(snap->rows, q);
    if (!d.allowed && !fresh) {
      refresh_then_authenticate(cx, call, rp);
      return;
    }
    auto r = stamp;
    r.allowed = d.allowed;
    r.user = user;
    r.reason = d.allowed ? "" : "Permission denied for request";
    rp.deliver(std::move(r));
  };
  if (!snap->has_noderange_rows || !has_noderange(*call)) {
    decide(req);
    return;
  }
  req.has_noderange = true;
  cx.self->request(cx.store, caf::infinite, expand_atom::value, call->target, false)
    .then(
      [req, decide](store::noderange_result& r) mutable {
        req.nodes = std::move(r.nodes);
        decide(req);
      },
      [rp, user](caf::error&) mutable {
        rp.deliver(auth_result::refused(user, "Permission denied for request"));
      });
}

/// Checks the credentials; on success goes on to authorize.
void authenticate(const context& cx, api_call_ptr call, promise rp, bool fresh) {
  const auto& creds = call->creds;
  if (!creds.token.empty()) {
    cx.self->request(cx.store, caf::infinite, token_atom::value, store::sha256_hex(creds.token))
      .then(
        [cx, call, rp, fresh](const token_info& t) mutable {
          auto now = static_cast<int64_t>(std::time(nullptr));
          if (!t.found || (t.expires != 0 && t.expires < now)) {
            deny(cx, call, rp, true); // read just now
            return;
          }
          authorize(cx, call, t.user, rp, fresh);
        },
        [cx, call, rp](caf::error&) mutable { deny(cx, call, rp, true); });
    return;
  }
  const auto& snap = *cx.self->state.snap;
  auto stored = snap.passwords.find(creds.user);
  if (creds.user.empty() || creds.password.empty()) {
    deny(cx, call, rp, true);
    return;
  }
  if (stored == snap.passwords.end()) {
    deny(cx, call, rp, fresh);
    return;
  }
  // The cache key binds the password to the stored hash: a new password invalidates it.
  auto key = store::sha256_hex(creds.user + '\0' + creds.password + '\0' + stored->second);
  auto& st = cx.self->state;
  if (auto it = st.verified.find(key); it != st.verified.end()) {
    if (clock::now() < it->second) {
      ++st.stats.cache_hits;
      authorize(cx, call, creds.user, rp, fresh);
      return;
    }
    st.verified.erase(it);
  }
  auto& waiting = st.verifying[key];
  waiting.push_back({call, rp, fresh});
  if (waiting.size() > 1) {
    return; // the same credentials are being checked already
  }
  ++st.stats.hash_checks;
  auto finish = [cx, key](bool ok) {
    auto& st = cx.self->state;
    auto it = st.verifying.find(key);
    if (it == st.verifying.end()) {
      return;
    }
    auto callers = std::move(it->second);
    st.verifying.erase(it);
    if (ok) {
      if (st.verified.size() >= max_tracked) {
        st.verified.clear();
      }
      st.verified[key] = clock::now() + cx.cfg.cache_ttl;
    }
    for (auto& w : callers) {
      if (ok) {
        authorize(cx, w.call, w.call->creds.user, w.rp, w.fresh);
      } else {
        deny(cx, w.call, w.rp, w.fresh);
      }
    }
  };
  cx.self->request(cx.hasher, caf::infinite, verify_atom::value, creds.password, stored->second)
    .then([finish](bool ok) { finish(ok); }, [finish](caf::error&) { finish(false); });
}

hasher_actor::behavior_type hasher_impl() {
  return {[](verify_atom, const std::string& pw, const std::string& hash) {
    return store::verify_password(pw, hash);
  }};
}

policy_actor::behavior_type policy_impl(self_ptr self, store_actor store, hasher_actor hasher,
                                        policy_config cfg) {
  self->link_to(hasher);
  context cx{self, std::move(store), std::move(hasher), cfg};
  return {
    [cx](authz_atom, api_call_ptr call) -> promise {
      auto rp = cx.self->make_response_promise<auth_result>();
      if (cx.self->state.snap && !call->refresh_auth) {
        // a "yes" is checked by the store against the generations it was made on
        // (api_call), a "no" is checked here against fresh data before it is given
        authenticate(cx, call, rp, false);
      } else {
        refresh_then_authenticate(cx, call, rp);
      }
      return rp;
    },
    [cx](fail_atom, uint64_t id) {
      auto& delayed = cx.self->state.delayed;
      if (auto it = delayed.find(id); it != delayed.end()) {
        it->second.deliver(auth_result::refused({}, auth_failure));
        delayed.erase(it);
      }
    },
    [cx](stats_atom) { return cx.self->state.stats; },
  };
}

} // namespace

policy_actor spawn_policy(caf::actor_system& sys, store_actor store, policy_config cfg) {
  auto hasher
    = cfg.detached_hasher ? sys.spawn<caf::detached>(hasher_impl) : sys.spawn(hasher_impl);
  return sys.spawn(policy_impl, std::move(store), std::move(hasher), cfg);
}

} // namespace cws::actors
