#pragma once

#include <memory>

#include "actors/dispatcher.hpp"
#include "http/beast.hpp"

#include <boost/asio/strand.hpp>

namespace cws::http {

/// Subscribes `reader` (an SSE response or a WebSocket session) to the change feed after
/// `after`: each change set, reset, job or power event and heartbeat is posted to the
/// reader's own io thread as `on_changes(set)`, `on_reset(seq)`, `on_activity(a)`,
/// `on_heartbeat()`, in the order the feed sent them, while the reader lives. Null when the
/// service has no feed. Authorize first: the feed holds every change.
template<class Reader>
std::unique_ptr<actors::event_subscription>
subscribe_events(const actors::dispatcher& svc, uint64_t after, std::chrono::milliseconds heartbeat,
                 const std::shared_ptr<Reader>& reader) {
  std::weak_ptr<Reader> weak = reader;
  // each handler runs on an actor thread, not always the same: posted to the reader's own
  // through a strand, which keeps their order (a plain post from an io thread waits in that
  // thread's private queue until its handler ends, and a later one from another thread
  // overtook it: ids went backwards under load, bench/events.sh)
  auto ex = net::make_strand(reader->get_executor());
  auto on_io = [weak, ex](auto f) {
    if (auto r = weak.lock()) {
      net::post(ex, [r = std::move(r), f = std::move(f)] { f(*r); });
    }
  };
  actors::event_handlers h;
  h.on_changes = [on_io](actors::change_set_ptr set) {
    on_io([set](Reader& r) { r.on_changes(set); });
  };
  h.on_reset = [on_io](uint64_t seq) {
    on_io([seq](Reader& r) { r.on_reset(seq); });
  };
  h.on_activity = [on_io](actors::activity_ptr a) {
    on_io([a](Reader& r) { r.on_activity(*a); });
  };
  h.on_heartbeat = [on_io] {
    on_io([](Reader& r) { r.on_heartbeat(); });
  };
  h.heartbeat = heartbeat;
  return svc.subscribe(after, std::move(h));
}

/// The reason of a reset event for changes the change log no longer holds.
constexpr const char* missed_changes_reason
  = "changes were missed: the change log no longer holds them; read the state again";

} // namespace cws::http
