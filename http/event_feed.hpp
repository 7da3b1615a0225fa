#pragma once

#include <memory>

#include "http/event_hub.hpp"
#include "http/session.hpp"

namespace cws::http {

/// The hub's view of a `Reader` (basic_session, ws_session), held weakly: a reader that is
/// gone is skipped until its membership leaves.
template<class Reader>
class reader_of final : public event_reader {
 public:
  explicit reader_of(std::weak_ptr<Reader> r) : reader_(std::move(r)) {
    // nop
  }
  void on_changes(change_texts& texts) override {
    if (auto r = reader_.lock()) {
      r->on_changes(texts);
    }
  }
  void on_reset(uint64_t seq) override {
    if (auto r = reader_.lock()) {
      r->on_reset(seq);
    }
  }
  void on_activity(const actors::activity& a) override {
    if (auto r = reader_.lock()) {
      r->on_activity(a);
    }
  }
  void on_heartbeat() override {
    if (auto r = reader_.lock()) {
      r->on_heartbeat();
    }
  }
  void flush() override {
    if (auto r = reader_.lock()) {
      r->flush();
    }
  }
  void flush_shared(shared_joins& joins) override {
    if (auto r = reader_.lock()) {
      r->flush_shared(joins);
    }
  }

 private:
  std::weak_ptr<Reader> reader_;
};

/// Subscribes `reader` (an SSE response or a WebSocket session) to the change feed after
/// `after`, through the hub of its io thread (http/event_hub.hpp): its `on_changes(texts)`,
/// `on_reset(seq)`, `on_activity(a)`, `on_heartbeat()` and `flush()` are called on its own
/// thread, in the order the feed sent, while the membership lives. Null when the service has
/// no feed. Authorize first: the feed holds every change.
template<class Reader>
std::unique_ptr<event_membership> subscribe_events(session_context& ctx, uint64_t after,
                                                   const std::shared_ptr<Reader>& reader) {
  auto hub = ctx.hubs.of(reader->get_executor(), *ctx.svc,
                         {ctx.cfg.events_heartbeat, ctx.cfg.events_flush});
  if (!hub) {
    return nullptr;
  }
  auto id = hub->join(std::make_unique<reader_of<Reader>>(reader), after);
  return std::make_unique<event_membership>(std::move(hub), id);
}

/// The reason of a reset event for changes the change log no longer holds.
constexpr const char* missed_changes_reason
  = "changes were missed: the change log no longer holds them; read the state again";

} // namespace cws::http
