#include "ipmi/console_session.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <unordered_map>
#include <utility>

#include "base/event_loop.hpp"

namespace cws::ipmi {

namespace {

using clk = base::event_loop::clock;

/// A UDP socket connected to `t`, non-blocking. @returns -1 when the address is not numeric.
int connect_udp(const console_target& t) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto* a4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, t.address.c_str(), &a4->sin_addr) == 1) {
    a4->sin_family = AF_INET;
    a4->sin_port = htons(t.port);
    len = sizeof *a4;
  } else if (inet_pton(AF_INET6, t.address.c_str(), &a6->sin6_addr) == 1) {
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(t.port);
    len = sizeof *a6;
  } else {
    return -1;
  }
  int fd = ::socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool ends(sol_event::kind k) {
  return k == sol_event::kind::already_active || k == sol_event::kind::error
         || k == sol_event::kind::lost || k == sol_event::kind::closed;
}

} // namespace

struct console_sessions::impl {
  struct console {
    int fd = -1;
    sol_options options;
    std::optional<session_setup> setup;
    unsigned setup_sent = 0;
    std::optional<sol> c;
  };

  callbacks cb;
  std::unordered_map<uint64_t, console> consoles; // the loop's thread only
  std::optional<base::event_loop> loop;

  explicit impl(callbacks c) : cb(std::move(c)) {
    base::event_loop::handlers h;
    h.ready = [this](uint64_t id, uint32_t) {
      ready(id);
    };
    h.deadline = [this](uint64_t id) {
      due(id);
    };
    h.stopped = [this] {
      stopped();
    };
    loop.emplace(std::move(h));
  }

  void event(uint64_t id, const sol_event& e) {
    if (cb.event) {
      cb.event(id, e);
    }
  }

  void end(uint64_t id) {
    auto it = consoles.find(id);
    if (it == consoles.end()) {
      return;
    }
    loop->clear_deadline(id);
    loop->unwatch(it->second.fd);
    ::close(it->second.fd);
    consoles.erase(it);
  }

  void send(const console& k, const bytes& b) {
    (void)::send(k.fd, b.data(), b.size(), MSG_NOSIGNAL);
  }

  /// Sends, hands over and schedules what console `id`'s state machine has; ends it when done.
  void flush(uint64_t id, console& k) {
    for (const auto& d : k.c->take_datagrams()) {
      send(k, d);
    }
    auto out = k.c->take_output();
    if (!out.empty() && cb.output) {
      cb.output(id, std::move(out));
    }
    bool over = false;
    for (const auto& e : k.c->take_events()) {
      over = over || ends(e.what);
      event(id, e);
    }
    if (over || k.c->at() == sol::phase::done) {
      end(id);
      return;
    }
    auto d = k.c->deadline();
    if (d != clk::time_point::max()) {
      loop->set_deadline(id, d);
    }
  }

  void fail(uint64_t id, sol_event::kind kind, std::string message) {
    end(id);
    event(id, sol_event{kind, std::move(message), 0});
  }

  void open(uint64_t id, console_target t) {
    if (consoles.count(id) != 0) {
      event(id, sol_event{sol_event::kind::error, "The console is already open", 0});
      return;
    }
    int fd = connect_udp(t);
    if (fd < 0) {
      event(id, sol_event{sol_event::kind::error, "Not a numeric address: " + t.address, 0});
      return;
    }
    auto& k = consoles[id];
    k.fd = fd;
    k.options = t.options;
    k.setup.emplace(std::move(t.user), std::move(t.password));
    loop->watch(fd, EPOLLIN, id);
    send(k, k.setup->packet());
    k.setup_sent = 1;
    loop->set_deadline(id, clk::now() + setup_interval);
  }

  void ready(uint64_t id) {
    auto it = consoles.find(id);
    if (it == consoles.end()) {
      return;
    }
    auto& k = it->second;
    uint8_t buf[2048];
    ssize_t n;
    while ((n = ::recv(k.fd, buf, sizeof buf, 0)) > 0) {
      auto now = clk::now();
      if (k.c) {
        k.c->feed(buf, static_cast<size_t>(n), now);
        continue;
      }
      switch (k.setup->feed(buf, static_cast<size_t>(n))) {
        case session_setup::progress::ignored: break;
        case session_setup::progress::next:
          send(k, k.setup->packet());
          k.setup_sent = 1;
          loop->set_deadline(id, now + setup_interval);
          break;
        case session_setup::progress::established:
          k.c.emplace(k.setup->take(), k.options, now);
          k.setup.reset();
          break;
        case session_setup::progress::failed:
          fail(id, sol_event::kind::error, k.setup->message());
          return;
      }
    }
    if (k.c) {
      flush(id, k);
    }
  }

  void due(uint64_t id) {
    auto it = consoles.find(id);
    if (it == consoles.end()) {
      return;
    }
    auto& k = it->second;
    if (k.c) {
      k.c->tick(clk::now());
      flush(id, k);
      return;
    }
    if (k.setup_sent >= setup_tries) {
      fail(id, sol_event::kind::lost, "The BMC did not answer");
      return;
    }
    ++k.setup_sent;
    send(k, k.setup->packet());
    loop->set_deadline(id, clk::now() + setup_interval);
  }

  void stopped() {
    for (auto& [id, k] : consoles) {
      if (k.c) {
        k.c->close(clk::now()); // Deactivate Payload; its answer is not awaited
        for (const auto& d : k.c->take_datagrams()) {
          send(k, d);
        }
      }
      ::close(k.fd);
    }
    consoles.clear();
  }
};

console_sessions::console_sessions(callbacks cb) : p_(std::make_unique<impl>(std::move(cb))) {
  // nop
}

console_sessions::~console_sessions() {
  p_->loop->stop();
}

void console_sessions::open(uint64_t id, console_target t) {
  p_->loop->post([p = p_.get(), id, t = std::move(t)]() mutable { p->open(id, std::move(t)); });
}

void console_sessions::write(uint64_t id, std::string keys) {
  p_->loop->post([p = p_.get(), id, keys = std::move(keys)] {
    auto it = p->consoles.find(id);
    if (it == p->consoles.end()) {
      return;
    }
    auto& k = it->second;
    auto now = clk::now();
    size_t n = 0;
    if (k.c) {
      n = k.c->write(reinterpret_cast<const uint8_t*>(keys.data()), keys.size(), now);
      if (n < keys.size()) {
        p->event(
          id, sol_event{sol_event::kind::dropped, "the keystroke queue is full", keys.size() - n});
      }
      p->flush(id, k);
    } else {
      p->event(id,
               sol_event{sol_event::kind::dropped, "the console is not active yet", keys.size()});
    }
  });
}

void console_sessions::send_break(uint64_t id) {
  p_->loop->post([p = p_.get(), id] {
    auto it = p->consoles.find(id);
    if (it != p->consoles.end() && it->second.c) {
      it->second.c->send_break(clk::now());
      p->flush(id, it->second);
    }
  });
}

void console_sessions::close(uint64_t id) {
  p_->loop->post([p = p_.get(), id] {
    auto it = p->consoles.find(id);
    if (it == p->consoles.end()) {
      return;
    }
    if (it->second.c) {
      it->second.c->close(clk::now());
      p->flush(id, it->second);
    } else {
      p->end(id);
      p->event(id, sol_event{sol_event::kind::closed, {}, 0});
    }
  });
}

} // namespace cws::ipmi
