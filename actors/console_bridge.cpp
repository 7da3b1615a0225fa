#include "actors/console_bridge.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace cws::actors {

namespace {

struct bridge_state {
  static constexpr const char* name = "console-bridge";
  /// Bytes and notices that came before the attach's answer: handed on after it.
  std::vector<std::function<void()>> early;
  bool answered = false;
};

console_watcher::behavior_type bridge_impl(console_watcher::stateful_pointer<bridge_state> self,
                                           console_actor console, console_attach req,
                                           std::shared_ptr<console_handlers> h) {
  auto me = caf::actor_cast<console_watcher>(self);
  self->request(console, caf::infinite, attach_atom::value, std::move(req), me)
    .then(
      [self, h](console_attach_reply& r) {
        bool ok = r.error == api::errc::none;
        h->attached(std::move(r));
        self->state.answered = true;
        if (ok) {
          for (auto& f : self->state.early) {
            f();
          }
        }
        self->state.early.clear();
        if (!ok) {
          self->quit();
        }
      },
      [self, h](caf::error& e) {
        console_attach_reply r;
        r.error = api::errc::unavailable;
        r.message = "The console server did not answer: " + to_string(e);
        h->attached(std::move(r));
        self->quit();
      });
  auto later = [self](std::function<void()> f) {
    if (self->state.answered) {
      f();
    } else {
      self->state.early.push_back(std::move(f));
    }
  };
  return {
    [h, later](console_atom, const std::string&, std::string& bytes) {
      later([h, b = std::move(bytes)]() mutable { h->bytes(std::move(b)); });
    },
    [h, later](notice_atom, const std::string&, console_notice& n) {
      later([h, n = std::move(n)]() mutable { h->notice(std::move(n)); });
    },
    [h, later](detached_atom, const std::string&, std::string& why) {
      later([h, w = std::move(why)]() mutable { h->detached(std::move(w)); });
    },
  };
}

} // namespace

console_attachment::~console_attachment() {
  caf::anon_send(console_, detach_atom::value, node_, bridge_);
  caf::anon_send_exit(bridge_, caf::exit_reason::user_shutdown);
}

void console_attachment::input(std::string keys) const {
  caf::anon_send(console_, input_atom::value, node_, bridge_, std::move(keys));
}

void console_attachment::send_break() const {
  caf::anon_send(console_, break_atom::value, node_, bridge_);
}

void console_attachment::ack(uint64_t bytes) const {
  caf::anon_send(console_, ack_atom::value, node_, bridge_, bytes);
}

std::unique_ptr<console_attachment> attach_console(caf::actor_system& sys, console_actor console,
                                                   console_attach req, console_handlers h) {
  auto node = req.node;
  auto bridge = sys.spawn(bridge_impl, console, std::move(req),
                          std::make_shared<console_handlers>(std::move(h)));
  return std::make_unique<console_attachment>(std::move(console), std::move(bridge),
                                              std::move(node));
}

} // namespace cws::actors
