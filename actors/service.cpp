#include "actors/service.hpp"

#include <caf/event_based_actor.hpp>

namespace cws::actors {

namespace {

api_result unavailable(const caf::error& e, caf::actor_system& sys) {
  return api_result::failure(api_status::unavailable,
                             "The service could not complete the request: " + sys.render(e), "2");
}

} // namespace

void submit(const service& svc, api_call_ptr call, std::function<void(api_result)> done) {
  auto s = svc;
  // A one-shot actor per request: it quits after delivering the reply.
  s.sys->spawn([s, call, done](caf::event_based_actor* self) {
    self->request(s.policy, s.timeout, authz_atom::value, call)
      .then(
        [=](const auth_result& auth) {
          if (!auth.allowed) {
            done(api_result::failure(auth.unavailable ? api_status::unavailable
                                                      : api_status::unauthorized,
                                     auth.reason, "2"));
            return;
          }
          auto authorized = std::make_shared<api_call>(*call);
          authorized->user = auth.user;
          auto ok = [=](api_result& r) {
            done(std::move(r));
          };
          auto err = [=](caf::error& e) {
            done(unavailable(e, self->system()));
          };
          bool fan_out
            = call->op == operation::nodeshell
              || (call->op == operation::remove && call->type == store::object_type::node);
          if (fan_out && s.executor) {
            self->request(s.executor, s.timeout, exec_atom::value, api_call_ptr{authorized})
              .then(ok, err);
          } else if (call->op == operation::nodeshell) {
            done(api_result::failure(api_status::unavailable,
                                     "nodeshell is not enabled on this service.", "2"));
          } else {
            self->request(s.store, s.timeout, exec_atom::value, api_call_ptr{authorized})
              .then(ok, err);
          }
        },
        [=](caf::error& e) { done(unavailable(e, self->system())); });
  });
}

} // namespace cws::actors
