#include "actors/policy_actor.hpp"

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <malloc.h>

#include <unordered_map>

#include "api/operations.hpp"
#include "store/credentials.hpp"

// gperftools' call to hand free memory back (present when clusterwsd links tcmalloc)
extern "C" void MallocExtension_ReleaseFreeMemory() __attribute__((weak));

namespace cws::actors {

namespace {

using api::api_call;
using api::api_call_ptr;
using api::auth_result;
using api::auth_snapshot_ptr;
using api::operation;
using api::token_info;
using clock = std::chrono::steady_clock;

/// The policy actor's own interface: the public one plus its delayed answers to itself.
using policy_impl_actor = policy_actor::extend<caf::reacts_to<fail_atom, uint64_t>>;

constexpr const char* auth_failure = "Authentication failure";
constexpr const char* permission_denied = "Permission denied for request";
constexpr size_t max_tracked = 100000; // memory bound of the caches and the attempt tables
/// A client's or user's failures are forgotten after this long without a new one.
constexpr auto forget_after = std::chrono::minutes(15);
/// After a decision on more nodes than this, free memory goes back to the system: a large
/// expansion must not leave the daemon's RSS at its peak.
constexpr size_t large_expansion = 100000;

/// Failed and running password checks counted under one key (client and user, user, or
/// client), and when the next check may start once past the threshold.
struct attempts {
  unsigned failures = 0;
  unsigned pending = 0;
  clock::time_point last_failure{};
  clock::time_point next_try{};
};

/// What one request carries through a re-check on fresh data, so that nothing is done twice.
struct request_memo {
  /// The cache key of a password already found wrong, and whether that failure is counted.
  std::string bad_key;
  bool counted = false;
  /// The request's nodes, once expanded, and the membership generation they belong to.
  bool expanded = false;
  uint64_t generation = 0;
  std::vector<std::string> nodes;
};

using memo_ptr = std::shared_ptr<request_memo>;
/// Where a decision goes: the caller's verdict function, called once.
class promise {
 public:
  explicit promise(verdict_ptr fn) : fn_(std::move(fn)) {
  }

  void deliver(auth_result r) {
    (*fn_)(std::move(r));
  }

 private:
  verdict_ptr fn_;
};

struct policy_state {
  auth_snapshot_ptr snap;
  /// Password checks in progress, by cache key: callers with the same credentials wait for
  /// the one check instead of queueing slow hashes of their own.
  struct waiter {
    api_call_ptr call;
    promise rp;
    bool fresh;
    memo_ptr memo;
  };
  std::unordered_map<std::string, std::vector<waiter>> verifying;
  std::unordered_map<std::string, clock::time_point> verified;
  std::unordered_map<std::string, attempts> by_pair;
  std::unordered_map<std::string, attempts> by_user;
  std::unordered_map<std::string, attempts> by_client;
  std::unordered_map<uint64_t, promise> delayed;
  uint64_t next_delayed = 0;
  static inline const char* name = "policy";
};

using self_ptr = policy_impl_actor::stateful_pointer<policy_state>;

/// What every step of one authorization needs.
struct context {
  self_ptr self;
  store_actor store;
  hasher_actor hasher;
  policy_config cfg;
};

void release_free_memory() {
  if (MallocExtension_ReleaseFreeMemory != nullptr) {
    MallocExtension_ReleaseFreeMemory();
  } else {
    malloc_trim(0);
  }
}

/// The text a store error carries (make_error(sec, text)).
std::string error_text(const caf::error& e) {
  const auto& ctx = e.context();
  if (ctx.size() == 1 && ctx.match_element<std::string>(0)) {
    return ctx.get_as<std::string>(0);
  }
  return "The noderange could not be expanded.";
}

/// True for calls whose target is a noderange that policy `noderange` rows apply to.
bool has_noderange(const api_call& call) {
  return call.type == store::object_type::node && !call.target.empty()
         && call.op != operation::list;
}

std::string pair_key(const api_call& call) {
  return call.client + '\0' + call.creds.user;
}

/// Applies `fn` to the three attempt counters a password check of `call` counts in, with
/// the threshold of each.
template<class Fn>
void for_each_counter(const context& cx, const api_call& call, Fn&& fn) {
  auto& st = cx.self->state;
  for (auto* table : {&st.by_pair, &st.by_user, &st.by_client}) {
    if (table->size() >= max_tracked) {
      table->clear();
    }
  }
  fn(st.by_pair[pair_key(call)], cx.cfg.backoff_after);
  fn(st.by_user[call.creds.user], cx.cfg.user_backoff_after);
  fn(st.by_client[call.client], cx.cfg.client_backoff_after);
}

/// The delay after the `n`th failure under a threshold of `after` (0 up to the threshold).
std::chrono::milliseconds backoff(const policy_config& cfg, unsigned n, unsigned after) {
  if (n <= after) {
    return std::chrono::milliseconds{0};
  }
  auto delay = cfg.backoff_base;
  for (unsigned i = after + 1; i < n && delay < cfg.backoff_max; ++i) {
    delay *= 2;
  }
  return std::min(delay, cfg.backoff_max);
}

/// Whether a password of `call` may be checked now: below every threshold (failures and
/// checks running), or past one with no check running and its delay over.
bool may_check(const context& cx, const api_call& call) {
  auto now = clock::now();
  bool ok = true;
  for_each_counter(cx, call, [&](attempts& a, unsigned after) {
    if (a.failures > 0 && now - a.last_failure > forget_after) {
      a.failures = 0;
    }
    if (a.failures + a.pending >= after && (a.pending > 0 || now < a.next_try)) {
      ok = false;
    }
  });
  return ok;
}

/// Counts a failed authentication of `call` under every key.
void count_failure(const context& cx, const api_call& call) {
  auto now = clock::now();
  for_each_counter(cx, call, [&](attempts& a, unsigned after) {
    ++a.failures;
    a.last_failure = now;
    a.next_try = now + backoff(cx.cfg, a.failures, after);
  });
}

void authenticate(const context& cx, api_call_ptr call, promise rp, bool fresh, memo_ptr memo);

/// Loads passwords and policy as the database holds them now, then authenticates the call.
void refresh_then_authenticate(const context& cx, api_call_ptr call, promise rp, memo_ptr memo) {
  cx.self->request(cx.store, caf::infinite, snapshot_atom::value)
    .then(
      [cx, call, rp, memo](auth_snapshot_ptr& snap) mutable {
        cx.self->state.snap = std::move(snap);
        authenticate(cx, call, rp, true, memo);
      },
      [rp](caf::error&) mutable {
        rp.deliver(auth_result::refused({}, "The service could not check credentials.",
                                        api::errc::unavailable));
      });
}

/// A "no" made on a snapshot that may be old: `answer` is given if the snapshot still holds
/// what the database holds (one cheap read); if not, the call is authenticated again on
/// fresh data, so a password or policy set with the CLI counts on the next request.
template<class Answer>
void when_current(const context& cx, api_call_ptr call, promise rp, bool fresh, memo_ptr memo,
                  Answer answer) {
  if (fresh) {
    answer();
    return;
  }
  auto snap = cx.self->state.snap;
  cx.self->request(cx.store, caf::infinite, generation_atom::value)
    .then(
      [=](uint64_t auth, uint64_t membership) mutable {
        if (auth == snap->auth_generation
            && (!snap->has_noderange_rows || membership == snap->membership_generation)) {
          answer();
        } else {
          refresh_then_authenticate(cx, call, rp, memo);
        }
      },
      [=](caf::error&) mutable { refresh_then_authenticate(cx, call, rp, memo); });
}

/// Authentication failed: answer now, or after a growing delay for repeated failures.
void deny(const context& cx, api_call_ptr call, promise rp, bool fresh, memo_ptr memo) {
  when_current(cx, call, rp, fresh, memo, [cx, call, rp, memo]() mutable {
    auto& st = cx.self->state;
    cx.cfg.metrics->auth_failures.add();
    if (call->creds.password.empty()) {
      // nothing was guessed (no credentials, or a token): refuse at once
      rp.deliver(auth_result::refused({}, auth_failure));
      return;
    }
    if (!memo->counted) {
      memo->counted = true;
      count_failure(cx, *call);
    }
    auto delay = backoff(cx.cfg, st.by_pair[pair_key(*call)].failures, cx.cfg.backoff_after);
    if (delay.count() == 0) {
      rp.deliver(auth_result::refused({}, auth_failure));
      return;
    }
    auto id = st.next_delayed++;
    st.delayed.emplace(id, rp);
    cx.self->delayed_send(cx.self, delay, fail_atom::value, id);
  });
}

/// Gives the decision. A "yes" takes the request's nodes along (the operation does not expand
/// them again); a "no" lets go of them (and, after a large expansion, of the memory they took).
void conclude(promise& rp, auth_result r, const memo_ptr& memo) {
  if (r.allowed && memo->expanded) {
    r.auth.nodes = std::make_shared<const std::vector<std::string>>(std::move(memo->nodes));
    rp.deliver(std::move(r));
    return;
  }
  rp.deliver(std::move(r));
  if (memo->nodes.size() > large_expansion) {
    std::vector<std::string>{}.swap(memo->nodes);
    release_free_memory();
  }
}

/// Authenticated as `user`: decide with the policy table.
void authorize(const context& cx, api_call_ptr call, std::string user, promise rp, bool fresh,
               memo_ptr memo) {
  auto& st = cx.self->state;
  st.by_pair.erase(pair_key(*call));
  auto snap = st.snap;
  auth_result stamp;
  stamp.auth.user = user;
  stamp.auth.stamped = true;
  stamp.auth.stamp = {snap->auth_generation, snap->membership_generation, snap->has_noderange_rows};
  if (call->policy_command.empty()) {
    // authentication is all it needs (tokens)
    stamp.allowed = true;
    rp.deliver(std::move(stamp));
    return;
  }
  auto req = api::policy_request_for(*call, user);
  req.has_noderange = snap->has_noderange_rows && has_noderange(*call);
  if (memo->expanded && memo->generation == snap->membership_generation) {
    // the nodes expanded for this request before (sorted already): lent, not copied
    req.nodes = std::move(memo->nodes);
    req.nodes_known = true;
  }
  auto d = store::evaluate_policy(snap->rows, req);
  if (req.nodes_known) {
    memo->nodes = std::move(req.nodes);
  }
  if (d.needs_nodes) {
    // only now, and once: the rows before this one did not decide
    cx.cfg.metrics->policy_expansions.add();
    // a caller who may not read masked attributes may not test them either (N1): refused
    // here too, or the allow/deny difference would tell
    bool hide_secrets = !api::reads_secrets(stamp.auth);
    cx.self->request(cx.store, caf::infinite, expand_atom::value, call->target, hide_secrets)
      .then(
        [=](std::vector<std::string>& nodes) mutable {
          memo->expanded = true;
          memo->generation = snap->membership_generation;
          memo->nodes = std::move(nodes);
          authorize(cx, call, user, rp, fresh, memo);
        },
        [=](caf::error& e) mutable {
          // a bad noderange is the request's fault: answered as without noderange rows
          auto r = auth_result::refused(user, error_text(e), api::errc::failed);
          rp.deliver(std::move(r));
        });
    return;
  }
  if (d.allowed) {
    stamp.allowed = true;
    conclude(rp, std::move(stamp), memo);
    return;
  }
  when_current(cx, call, rp, fresh, memo, [rp, stamp, memo]() mutable {
    stamp.reason = permission_denied;
    conclude(rp, std::move(stamp), memo);
  });
}

/// Checks the credentials; on success goes on to authorize.
void authenticate(const context& cx, api_call_ptr call, promise rp, bool fresh, memo_ptr memo) {
  const auto& creds = call->creds;
  if (!creds.peer_user.empty()) {
    // the local socket: the kernel named the caller (SO_PEERCRED); policy decides as for
    // any authenticated user
    authorize(cx, call, creds.peer_user, rp, fresh, memo);
    return;
  }
  if (!creds.token.empty()) {
    cx.self->request(cx.store, caf::infinite, token_atom::value, store::sha256_hex(creds.token))
      .then(
        [cx, call, rp, fresh, memo](const token_info& t) mutable {
          if (!t.found) {
            deny(cx, call, rp, true, memo); // read just now
            return;
          }
          authorize(cx, call, t.user, rp, fresh, memo);
        },
        [cx, call, rp, memo](caf::error&) mutable { deny(cx, call, rp, true, memo); });
    return;
  }
  auto& st = cx.self->state;
  const auto& snap = *st.snap;
  // a NUL would end the password (or the name) early in crypt(3) and in the tables
  if (creds.user.empty() || creds.password.empty() || creds.user.find('\0') != std::string::npos
      || creds.password.find('\0') != std::string::npos) {
    deny(cx, call, rp, true, memo);
    return;
  }
  auto stored = snap.passwords.find(creds.user);
  if (stored == snap.passwords.end()) {
    deny(cx, call, rp, fresh, memo);
    return;
  }
  // The cache key binds the password to the stored hash: a new password invalidates it.
  auto key = store::sha256_hex(creds.user + '\0' + creds.password + '\0' + stored->second);
  if (key == memo->bad_key) {
    deny(cx, call, rp, true, memo); // found wrong against this very hash: no second check
    return;
  }
  if (auto it = st.verified.find(key); it != st.verified.end()) {
    if (clock::now() < it->second) {
      cx.cfg.metrics->auth_cache_hits.add();
      authorize(cx, call, creds.user, rp, fresh, memo);
      return;
    }
    st.verified.erase(it);
  }
  if (auto it = st.verifying.find(key); it != st.verifying.end()) {
    it->second.push_back({call, rp, fresh, memo}); // the same credentials are being checked
    return;
  }
  if (!may_check(cx, *call)) {
    // past a threshold: refused before any hash is computed
    cx.cfg.metrics->auth_throttled.add();
    cx.cfg.metrics->auth_failures.add();
    rp.deliver(auth_result::refused({}, auth_failure));
    return;
  }
  st.verifying[key].push_back({call, rp, fresh, memo});
  for_each_counter(cx, *call, [](attempts& a, unsigned) { ++a.pending; });
  cx.cfg.metrics->hash_checks.add();
  auto finish = [cx, key, call](bool ok) {
    auto& st = cx.self->state;
    for_each_counter(cx, *call, [](attempts& a, unsigned) {
      if (a.pending > 0) {
        --a.pending;
      }
    });
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
    } else {
      count_failure(cx, *call); // one guess, however many requests shared it
    }
    for (auto& w : callers) {
      if (ok) {
        authorize(cx, w.call, w.call->creds.user, w.rp, w.fresh, w.memo);
      } else {
        w.memo->bad_key = key;
        w.memo->counted = true;
        deny(cx, w.call, w.rp, w.fresh, w.memo);
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

void decide(const context& cx, api_call_ptr call, bool refresh, promise rp) {
  auto memo = std::make_shared<request_memo>();
  if (cx.self->state.snap && !refresh) {
    // a "yes" is checked by the store against the generations it was made on
    // (api::authorization), a "no" is checked here against fresh data before it is given
    authenticate(cx, call, rp, false, memo);
  } else {
    refresh_then_authenticate(cx, call, rp, memo);
  }
}

policy_impl_actor::behavior_type policy_impl(self_ptr self, store_actor store, hasher_actor hasher,
                                             policy_config cfg) {
  self->link_to(hasher);
  context cx{self, std::move(store), std::move(hasher), cfg};
  return {
    [cx](authz_atom, api_call_ptr call, bool refresh, verdict_ptr& fn) {
      decide(cx, std::move(call), refresh, promise{std::move(fn)});
    },
    [cx](fail_atom, uint64_t id) {
      auto& delayed = cx.self->state.delayed;
      if (auto it = delayed.find(id); it != delayed.end()) {
        it->second.deliver(auth_result::refused({}, auth_failure));
        delayed.erase(it);
      }
    },
    [cx](stats_atom) { return cx.cfg.metrics->auth(); },
  };
}

} // namespace

policy_actor spawn_policy(caf::actor_system& sys, store_actor store, policy_config cfg) {
  auto hasher
    = cfg.detached_hasher ? sys.spawn<caf::detached>(hasher_impl) : sys.spawn(hasher_impl);
  return caf::actor_cast<policy_actor>(
    sys.spawn(policy_impl, std::move(store), std::move(hasher), cfg));
}

} // namespace cws::actors
