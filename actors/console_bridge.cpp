#include "actors/console_bridge.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

namespace cws::actors {

namespace {

/// The bridge: a console watcher that also takes `reattach` (attach_atom, the mode's word)
/// from its attachment.
using bridge_actor = console_watcher::extend<caf::reacts_to<attach_atom, std::string>>;

struct bridge_state {
  static constexpr const char* name = "console-bridge";
  /// Bytes and notices that came before the attach's answer: handed on after it.
  std::vector<std::function<void()>> early;
  bool answered = false;
};

bridge_actor::behavior_type bridge_impl(bridge_actor::stateful_pointer<bridge_state> self,
                                        console_actor console, console_attach req,
                                        std::shared_ptr<console_handlers> h) {
  auto me = caf::actor_cast<console_watcher>(self);
  self->request(console, caf::infinite, attach_atom::value, req, me)
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
    [self, h, console, me, req](attach_atom, const std::string& mode) {
      // a reattach: the same watcher in another mode, nothing replayed
      auto again = req;
      again.mode = parse_console_mode(mode).value_or(console_mode::rw);
      again.replay = 0;
      self->request(console, caf::infinite, attach_atom::value, std::move(again), me)
        .then(
          [self, h](console_attach_reply& r) {
            bool ok = r.error == api::errc::none;
            h->attached(std::move(r));
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
    },
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

void console_attachment::reattach(console_mode m) const {
  caf::anon_send(caf::actor_cast<bridge_actor>(bridge_), attach_atom::value,
                 std::string{console_mode_name(m)});
}

std::unique_ptr<console_attachment> attach_console(caf::actor_system& sys, console_actor console,
                                                   console_attach req, console_handlers h) {
  auto node = req.node;
  auto bridge = sys.spawn(bridge_impl, console, std::move(req),
                          std::make_shared<console_handlers>(std::move(h)));
  return std::make_unique<console_attachment>(
    std::move(console), caf::actor_cast<console_watcher>(bridge), std::move(node));
}

} // namespace cws::actors
