#include "actors/dispatcher.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace cws::actors {

namespace {

using api::api_call_ptr;
using api::api_result;
using api::errc;

/// How many times a call is authorized again after the store found its decision stale.
constexpr int max_reauthorizations = 3;

struct handles {
  store_actor store;
  policy_actor policy;
  executor_actor executor;
  jobs_actor jobs;
  console_actor console;
};

/// Hands a call's result to `done` under the authorized user's name, or, when the store found
/// the authorization stale, sends the call back to the dispatcher `me` to be authorized again
/// on fresh data. Callable on any actor's thread.
void finish(const caf::actor& me, const api_call_ptr& call, const std::string& user,
            const done_ptr& done, int attempt, api_result r) {
  if (r.error != errc::stale) {
    r.user = user;
    r.authenticated = true;
    (*done)(std::move(r));
  } else if (attempt < max_reauthorizations) {
    caf::anon_send(me, submit_atom::value, call, done, attempt + 1);
  } else {
    (*done)(
      api_result::failure(errc::unavailable, "Policy and passwords keep changing; try again."));
  }
}

/// Runs an authorized call where it belongs. Called on the policy actor's thread (through its
/// verdict), so it sends without a sender. The store and the executor take the same protocol:
/// each calls `finish` itself where the result is ready, with no reply hop through here.
void run(const caf::actor& me, const handles& h, const api_call_ptr& call, api::authorization auth,
         const done_ptr& done, int attempt) {
  auto user = auth.user;
  if (call->op == api::operation::authorize) {
    finish(me, call, user, done, attempt, api_result{}); // allowed: the caller answers
    return;
  }
  auto to_finish = std::make_shared<done_fn>(
    [=](api_result r) { finish(me, call, user, done, attempt, std::move(r)); });
  if (api::is_console_call(call->op)) {
    if (!h.console) {
      (*done)(api_result::failure(errc::unavailable, "Consoles are not enabled on this service."));
    } else {
      caf::anon_send(h.console, run_atom::value, call, std::move(auth), std::move(to_finish));
    }
    return;
  }
  if (api::is_job_call(call->op) && !h.jobs) {
    (*done)(api_result::failure(errc::unavailable, "Jobs are not enabled on this service."));
  } else if (api::is_job_call(call->op) || (api::is_fan_out(call->op) && h.jobs)) {
    // every fan-out call is a job: its client may leave, the job runs on
    caf::anon_send(h.jobs, run_atom::value, call, std::move(auth), std::move(to_finish));
  } else if (!api::is_fan_out(call->op)) {
    caf::anon_send(h.store, run_atom::value, call, std::move(auth), std::move(to_finish));
  } else if (!h.executor) {
    (*done)(api_result::failure(errc::unavailable, "nodeshell is not enabled on this service."));
  } else {
    caf::anon_send(h.executor, run_atom::value, call, std::move(auth), std::move(to_finish));
  }
}

void dispatch(caf::event_based_actor* self, const handles& h, api_call_ptr call, done_ptr done,
              int attempt) {
  // policy hands its decision to the verdict, which sends the call on: no reply message.
  // A retry after a stale decision asks policy to read passwords and policy again first.
  auto me = caf::actor_cast<caf::actor>(self);
  auto verdict = std::make_shared<verdict_fn>([me, h, call, done, attempt](api::auth_result res) {
    if (!res.allowed) {
      auto r = api_result::failure(res.error, res.reason);
      r.authenticated = !res.auth.user.empty();
      r.user = r.authenticated ? res.auth.user : call->creds.user;
      (*done)(std::move(r));
      return;
    }
    run(me, h, call, std::move(res.auth), done, attempt);
  });
  self->send(h.policy, authz_atom::value, call, attempt > 0, std::move(verdict));
}

/// Carries the change feed to one group's handlers. It ends with the feed (a stop does not
/// wait for the streams' clients); monitored, not linked: its own end must not take the feed
/// with it.
stream_subscriber::behavior_type bridge_impl(stream_subscriber::pointer self, event_handlers h,
                                             const events_actor& events) {
  self->monitor(events);
  self->set_down_handler([self](const caf::down_msg&) { self->quit(); });
  return {
    [h](const change_set_ptr& set) { h.on_changes(set, 0); },
    [h](reset_atom, uint64_t seq) { h.on_reset(seq, 0); },
    [h](const activity_ptr& a) { h.on_activity(a); },
    [h](const change_set_ptr& set, uint64_t stream) { h.on_changes(set, stream); },
    [h](reset_atom, uint64_t seq, uint64_t stream) { h.on_reset(seq, stream); },
    [h](join_atom, uint64_t stream) { h.on_joined(stream); },
  };
}

caf::behavior dispatcher_impl(caf::event_based_actor* self, handles h) {
  return {
    [=](submit_atom, api_call_ptr& call, done_ptr& done, int attempt) {
      dispatch(self, h, std::move(call), std::move(done), attempt);
    },
  };
}

} // namespace

event_subscription::~event_subscription() {
  caf::anon_send_exit(bridge_, caf::exit_reason::user_shutdown);
}

void event_subscription::join(uint64_t stream, uint64_t after) const {
  caf::anon_send(events_, subscribe_atom::value, caf::actor_cast<stream_subscriber>(bridge_), after,
                 stream);
}

dispatcher::dispatcher(caf::actor_system& sys, store_actor store, policy_actor policy,
                       executor_actor executor, size_t count, events_actor events, jobs_actor jobs,
                       console_actor console)
    : sys_(sys), store_(store), events_(std::move(events)), console_(console) {
  handles h{std::move(store), std::move(policy), std::move(executor), std::move(jobs),
            std::move(console)};
  for (size_t i = 0; i < std::max<size_t>(1, count); ++i) {
    actors_.push_back(sys.spawn(dispatcher_impl, h));
  }
}

void dispatcher::submit(api_call_ptr call, done_fn done) const {
  const auto& d = actors_[next_++ % actors_.size()];
  caf::anon_send(d, submit_atom::value, std::move(call), std::make_shared<done_fn>(std::move(done)),
                 0);
}

void dispatcher::next_page(api::object_pages_ptr pages, size_t count, done_fn done) const {
  caf::anon_send(store_, page_atom::value, std::move(pages), count,
                 std::make_shared<done_fn>(std::move(done)));
}

std::unique_ptr<event_subscription> dispatcher::subscribe(event_handlers h) const {
  if (!events_) {
    return nullptr;
  }
  auto bridge = sys_.spawn(bridge_impl, std::move(h), events_);
  return std::make_unique<event_subscription>(caf::actor_cast<caf::actor>(bridge), events_);
}

std::unique_ptr<console_attachment> dispatcher::attach_console(console_attach req,
                                                               console_handlers h) const {
  if (!console_) {
    return nullptr;
  }
  return actors::attach_console(sys_, console_, std::move(req), std::move(h));
}

void dispatcher::shutdown() const {
  for (const auto& d : actors_) {
    caf::anon_send_exit(d, caf::exit_reason::user_shutdown);
  }
}

} // namespace cws::actors
