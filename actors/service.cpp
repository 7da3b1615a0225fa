#include "actors/service.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

namespace cws::actors {

namespace {

/// How many times a call is authorized again after the store found its decision stale.
constexpr int max_reauthorizations = 3;

struct handles {
  store_actor store;
  policy_actor policy;
  executor_actor executor;
};

api_result unavailable(const caf::error& e, caf::actor_system& sys) {
  return api_result::failure(api_status::unavailable,
                             "The service could not complete the request: " + sys.render(e), "2");
}

/// Hands a call's result to `done` under the authorized user's name, or, when the store found
/// the authorization stale, sends the call back to the dispatcher `me` to be authorized again.
/// Callable on any actor's thread.
void finish(const caf::actor& me, const api_call_ptr& call, const std::string& user,
            const done_ptr& done, int attempt, api_result r) {
  if (r.status != api_status::stale) {
    r.user = user;
    r.authenticated = true;
    (*done)(std::move(r));
  } else if (attempt < max_reauthorizations) {
    auto again = std::make_shared<api_call>(*call);
    again->refresh_auth = true;
    caf::anon_send(me, exec_atom::value, api_call_ptr{std::move(again)}, done, attempt + 1);
  } else {
    (*done)(api_result::failure(api_status::unavailable,
                                "Policy and passwords keep changing; try again.", "2"));
  }
}

/// Runs an authorized call where it belongs.
void run(caf::event_based_actor* self, const handles& h, api_call_ptr call, api_call_ptr authorized,
         done_ptr done, int attempt) {
  auto me = caf::actor_cast<caf::actor>(self);
  bool fan_out = call->op == operation::nodeshell
                 || (call->op == operation::remove && call->type == store::object_type::node);
  if (fan_out && h.executor) {
    self->request(h.executor, caf::infinite, exec_atom::value, authorized)
      .then([=](api_result& r) { finish(me, call, authorized->user, done, attempt, std::move(r)); },
            [=](caf::error& e) { (*done)(unavailable(e, self->system())); });
  } else if (call->op == operation::nodeshell) {
    (*done)(api_result::failure(api_status::unavailable,
                                "nodeshell is not enabled on this service.", "2"));
  } else {
    // the store calls `finish` itself where the result is ready: no reply hop through here
    auto user = authorized->user;
    self->send(h.store, exec_atom::value, std::move(authorized),
               std::make_shared<done_fn>(
                 [=](api_result r) { finish(me, call, user, done, attempt, std::move(r)); }));
  }
}

void dispatch(caf::event_based_actor* self, const handles& h, api_call_ptr call, done_ptr done,
              int attempt) {
  self->request(h.policy, caf::infinite, authz_atom::value, call)
    .then(
      [=](const auth_result& auth) {
        if (!auth.allowed) {
          auto r = auth.invalid ? api_result::failure(api_status::failed, auth.reason)
                                : api_result::failure(auth.unavailable ? api_status::unavailable
                                                                       : api_status::unauthorized,
                                                      auth.reason, "2");
          r.authenticated = !auth.user.empty();
          r.user = r.authenticated ? auth.user : call->creds.user;
          (*done)(std::move(r));
          return;
        }
        auto authorized = std::make_shared<api_call>(*call);
        authorized->user = auth.user;
        authorized->stamped = true;
        authorized->stamp = auth.stamp;
        run(self, h, call, std::move(authorized), done, attempt);
      },
      [=](caf::error& e) { (*done)(unavailable(e, self->system())); });
}

caf::behavior dispatcher(caf::event_based_actor* self, handles h) {
  return {
    [=](exec_atom, api_call_ptr call, done_ptr done, int attempt) {
      dispatch(self, h, std::move(call), std::move(done), attempt);
    },
  };
}

} // namespace

service::service(caf::actor_system& sys, store_actor store, policy_actor policy,
                 executor_actor executor, size_t dispatchers) {
  handles h{std::move(store), std::move(policy), std::move(executor)};
  for (size_t i = 0; i < std::max<size_t>(1, dispatchers); ++i) {
    dispatchers_.push_back(sys.spawn(dispatcher, h));
  }
}

void service::submit(api_call_ptr call, done_fn done) const {
  const auto& d = dispatchers_[next_++ % dispatchers_.size()];
  caf::anon_send(d, exec_atom::value, std::move(call), std::make_shared<done_fn>(std::move(done)),
                 0);
}

void service::shutdown() const {
  for (const auto& d : dispatchers_) {
    caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  }
}

} // namespace cws::actors
