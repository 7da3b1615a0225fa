#include "virt/console_streams.hpp"

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace cws::virt {

namespace {

std::string last_error() {
  const char* msg = virGetLastErrorMessage();
  return msg != nullptr ? msg : "unknown libvirt error";
}

/// libvirt prints every error on stderr unless told otherwise: errors go into events here.
void quiet(void*, virErrorPtr) {
  // nop
}

/// libvirt's default event loop, registered once per process and run by one thread for good.
/// Every console_streams of the process (and every libvirt connection opened after this:
/// their keepalives and close notices) shares it. Its callbacks never block: connecting and
/// opening run on the console_streams' opener threads.
void ensure_loop() {
  static std::once_flag once;
  std::call_once(once, [] {
    virInitialize();
    virSetErrorFunc(nullptr, quiet);
    virEventRegisterDefaultImpl();
    std::thread([] {
      for (;;) {
        if (virEventRunDefaultImpl() < 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
      }
    }).detach();
  });
}

constexpr int base_events
  = VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_HANGUP | VIR_STREAM_EVENT_ERROR;

std::string close_reason(int reason) {
  switch (reason) {
    case VIR_CONNECT_CLOSE_REASON_EOF: return "the hypervisor closed it";
    case VIR_CONNECT_CLOSE_REASON_KEEPALIVE: return "no keepalive answer";
    case VIR_CONNECT_CLOSE_REASON_CLIENT: return "closed here";
    default: return "an error";
  }
}

} // namespace

console_event::kind open_failure_kind(std::string_view message) {
  return message.find("Active console session exists") != std::string_view::npos
           ? console_event::kind::already_active
           : console_event::kind::error;
}

namespace {

/// A hypervisor connection, shared by the consoles on it.
struct link {
  std::string uri;
  virConnectPtr conn = nullptr;
  int users = 0;     // under impl::mu
  bool dead = false; // under impl::mu: closed under us; new consoles open another
  /// What the close callback is given: owned here, since not every driver calls libvirt's
  /// free callback (the test driver's registration leaked it under LeakSanitizer).
  std::shared_ptr<void> close_ref;
};

/// One console: made by open(), filled by the opener, then the loop's.
struct stream {
  uint64_t id = 0;
  std::string uri;
  std::string domain;
  bool force = false;
  std::atomic<bool> closing{false};
  std::shared_ptr<link> l;
  virDomainPtr dom = nullptr;
  virStreamPtr st = nullptr;
  bool registered = false; // its event callback is on the loop
  bool writable_wanted = false;
  std::string keys; // not yet taken by virStreamSend
};

} // namespace

struct console_streams::impl : std::enable_shared_from_this<impl> {
  callbacks cb;
  console_stream_config cfg;
  std::atomic<bool> stopping{false};

  mutable std::mutex mu;
  std::unordered_map<uint64_t, std::shared_ptr<stream>> streams; // opening or open
  std::unordered_map<std::string, std::shared_ptr<link>> links;  // live connections by URI
  size_t open_links = 0;

  std::deque<std::function<void()>> loop_tasks;
  int wake = -1; // a timer on the loop, set to 0 to run loop_tasks

  /// The calls that block (connect, look up, open, abort, close), per hypervisor in order,
  /// hypervisors side by side on at most cfg.max_openers threads: one that does not answer
  /// holds its own consoles back, not the others'.
  struct uri_queue {
    std::deque<std::function<void()>> tasks;
    bool running = false; // a thread works on it, or it waits in `waiting`
  };
  std::unordered_map<std::string, uri_queue> queues;
  std::deque<std::string> waiting; // URIs with tasks and no thread yet
  size_t openers = 0;              // threads working
  std::condition_variable openers_cv;

  struct stream_ref {
    std::weak_ptr<impl> p;
    uint64_t id;
  };
  struct link_ref {
    std::weak_ptr<impl> p;
    std::weak_ptr<link> l;
  };

  // -- posting ---------------------------------------------------------------------
  void post_loop(std::function<void()> t) {
    int timer = -1;
    {
      std::lock_guard lock{mu};
      if (stopping) {
        return;
      }
      loop_tasks.push_back(std::move(t));
      timer = wake;
    }
    virEventUpdateTimeout(timer, 0);
  }

  static void on_wake(int timer, void* opaque) {
    auto p = static_cast<std::weak_ptr<impl>*>(opaque)->lock();
    if (!p) {
      return;
    }
    virEventUpdateTimeout(timer, -1); // before taking: a post after this wakes us again
    std::deque<std::function<void()>> tasks;
    {
      std::lock_guard lock{p->mu};
      tasks.swap(p->loop_tasks);
    }
    for (auto& t : tasks) {
      t();
    }
  }

  void post_open(const std::string& uri, std::function<void()> t) {
    std::lock_guard lock{mu};
    auto& q = queues[uri];
    q.tasks.push_back(std::move(t));
    if (q.running) {
      return;
    }
    q.running = true;
    if (openers < cfg.max_openers) {
      ++openers;
      std::thread([p = shared_from_this(), uri] { p->run_opener(uri); }).detach();
    } else {
      waiting.push_back(uri);
    }
  }

  /// A thread's work: `uri`'s tasks, then a waiting URI's, until none is left.
  void run_opener(std::string uri) {
    for (;;) {
      std::function<void()> t;
      {
        std::lock_guard lock{mu};
        auto it = queues.find(uri);
        if (it->second.tasks.empty()) {
          queues.erase(it);
          if (waiting.empty()) {
            --openers;
            openers_cv.notify_all();
            return;
          }
          uri = waiting.front();
          waiting.pop_front();
          continue;
        }
        t = std::move(it->second.tasks.front());
        it->second.tasks.pop_front();
      }
      t();
    }
  }

  // -- reporting (loop thread) -------------------------------------------------------
  void emit(uint64_t id, console_event::kind k, std::string message, size_t count = 0) {
    if (!stopping && cb.event) {
      cb.event(id, console_event{k, std::move(message), count});
    }
  }

  std::shared_ptr<stream> find(uint64_t id) {
    std::lock_guard lock{mu};
    auto it = streams.find(id);
    return it == streams.end() ? nullptr : it->second;
  }

  /// Ends console `s` with `k`: no more callbacks, the stream freed on the opener (aborting
  /// it is a call to libvirtd).
  void teardown(const std::shared_ptr<stream>& s, console_event::kind k, std::string message) {
    {
      std::lock_guard lock{mu};
      auto it = streams.find(s->id);
      if (it == streams.end() || it->second != s) {
        return;
      }
      streams.erase(it);
    }
    if (s->registered) {
      virStreamEventRemoveCallback(s->st);
      s->registered = false;
    }
    emit(s->id, k, std::move(message));
    post_open(s->uri, [self = shared_from_this(), s] { self->free_stream(*s); });
  }

  // -- connections (opener thread) -----------------------------------------------------
  static void on_conn_close(virConnectPtr, int reason, void* opaque) {
    auto* r = static_cast<link_ref*>(opaque);
    auto p = r->p.lock();
    auto l = r->l.lock();
    if (!p || !l) {
      return;
    }
    {
      std::lock_guard lock{p->mu};
      l->dead = true;
    }
    p->post_loop([p, l, reason] { p->lose_link(l, reason); });
  }

  std::shared_ptr<link> acquire(const std::string& uri, std::string& error) {
    {
      std::lock_guard lock{mu};
      auto it = links.find(uri);
      if (it != links.end() && !it->second->dead) {
        ++it->second->users;
        return it->second;
      }
    }
    virConnectPtr c = virConnectOpen(uri.c_str());
    if (c == nullptr) {
      error = last_error();
      return nullptr;
    }
    // local drivers (test:///) have no keepalive: fine, they cannot go away under us
    virConnectSetKeepAlive(c, cfg.keepalive_interval_s, cfg.keepalive_count);
    auto l = std::make_shared<link>();
    l->uri = uri;
    l->conn = c;
    l->users = 1;
    auto ref = std::make_shared<link_ref>(link_ref{weak_from_this(), l});
    if (virConnectRegisterCloseCallback(c, on_conn_close, ref.get(), nullptr) == 0) {
      l->close_ref = std::move(ref); // unregistered in release(), before the link can go
    }
    std::lock_guard lock{mu};
    links[uri] = l; // a dead one it replaces lives on with its consoles until they end
    ++open_links;
    return l;
  }

  void release(const std::shared_ptr<link>& l) {
    {
      std::lock_guard lock{mu};
      if (--l->users > 0) {
        return;
      }
      auto it = links.find(l->uri);
      if (it != links.end() && it->second == l) {
        links.erase(it);
      }
      --open_links;
    }
    virConnectUnregisterCloseCallback(l->conn, on_conn_close);
    virConnectClose(l->conn);
  }

  void free_stream(stream& s) {
    if (s.st != nullptr) {
      virStreamAbort(s.st); // fails on a stream already ended: nothing to do then
      virStreamFree(s.st);
      s.st = nullptr;
    }
    if (s.dom != nullptr) {
      virDomainFree(s.dom);
      s.dom = nullptr;
    }
    if (s.l) {
      release(s.l);
      s.l.reset();
    }
  }

  void do_open(const std::shared_ptr<stream>& s) {
    if (stopping) {
      return;
    }
    auto self = shared_from_this();
    auto fail = [&](console_event::kind k, std::string message) {
      post_loop([self, s, k, message = std::move(message)]() mutable {
        self->teardown(s, k, std::move(message));
      });
    };
    if (s->closing) {
      fail(console_event::kind::closed, {});
      return;
    }
    std::string error;
    auto l = acquire(s->uri, error);
    if (!l) {
      fail(console_event::kind::error, "Cannot connect to the hypervisor " + s->uri + ": " + error);
      return;
    }
    virDomainPtr dom = virDomainLookupByName(l->conn, s->domain.c_str());
    if (dom == nullptr) {
      // rpower's words (virt/hypervisors), libvirt's after them
      auto message
        = "The virtual machine " + s->domain + " was not found on " + s->uri + ": " + last_error();
      release(l);
      fail(console_event::kind::error, std::move(message));
      return;
    }
    virStreamPtr st = virStreamNew(l->conn, VIR_STREAM_NONBLOCK);
    if (st == nullptr) {
      auto message = last_error();
      virDomainFree(dom);
      release(l);
      fail(console_event::kind::error, message);
      return;
    }
    if (virDomainOpenConsole(dom, nullptr, st, s->force ? VIR_DOMAIN_CONSOLE_FORCE : 0) < 0) {
      auto message = last_error();
      virStreamFree(st);
      virDomainFree(dom);
      release(l);
      fail(open_failure_kind(message), message);
      return;
    }
    s->l = std::move(l);
    s->dom = dom;
    s->st = st;
    post_loop([self, s] { self->attach(s); });
  }

  // -- the loop ------------------------------------------------------------------------
  void attach(const std::shared_ptr<stream>& s) {
    if (stopping) {
      return; // the destructor frees it
    }
    bool dead = false;
    {
      std::lock_guard lock{mu};
      dead = s->l->dead;
    }
    if (s->closing) {
      teardown(s, console_event::kind::closed, {});
      return;
    }
    if (dead) {
      teardown(s, console_event::kind::lost,
               "The connection to the hypervisor " + s->uri + " closed");
      return;
    }
    auto* ref = new stream_ref{weak_from_this(), s->id};
    if (virStreamEventAddCallback(s->st, base_events, on_stream, ref,
                                  [](void* o) { delete static_cast<stream_ref*>(o); })
        < 0) {
      delete ref;
      teardown(s, console_event::kind::error, last_error());
      return;
    }
    s->registered = true;
    emit(s->id, console_event::kind::up, {});
  }

  static void on_stream(virStreamPtr st, int events, void* opaque) {
    auto* r = static_cast<stream_ref*>(opaque);
    if (auto p = r->p.lock()) {
      p->stream_events(r->id, st, events);
    }
  }

  void stream_events(uint64_t id, virStreamPtr st, int events) {
    auto s = find(id);
    if (!s || s->st != st || !s->registered) {
      return;
    }
    if ((events & VIR_STREAM_EVENT_WRITABLE) != 0 && !flush(s)) {
      return;
    }
    if ((events & VIR_STREAM_EVENT_READABLE) != 0) {
      char buf[16384];
      size_t taken = 0;
      while (taken < cfg.max_read_per_wake) {
        int n = virStreamRecv(st, buf, sizeof buf);
        if (n > 0) {
          taken += static_cast<size_t>(n);
          if (!stopping && cb.output) {
            cb.output(id, std::string(buf, static_cast<size_t>(n)));
          }
          continue;
        }
        if (n == -2) {
          break; // nothing more now
        }
        teardown(s, console_event::kind::lost,
                 n == 0 ? std::string{"The console stream ended"}
                        : "The console stream failed: " + last_error());
        return;
      }
    }
    if ((events & (VIR_STREAM_EVENT_HANGUP | VIR_STREAM_EVENT_ERROR)) != 0) {
      teardown(s, console_event::kind::lost,
               (events & VIR_STREAM_EVENT_ERROR) != 0 ? "The console stream failed"
                                                      : "The console stream was hung up");
    }
  }

  /// Sends what the stream takes of `s->keys`; false when that ended the console.
  bool flush(const std::shared_ptr<stream>& s) {
    while (!s->keys.empty()) {
      int n = virStreamSend(s->st, s->keys.data(), s->keys.size());
      if (n > 0) {
        s->keys.erase(0, static_cast<size_t>(n));
        continue;
      }
      if (n == -2) {
        break; // the stream is full: WRITABLE tells when it takes more
      }
      teardown(s, console_event::kind::lost, "The console stream failed: " + last_error());
      return false;
    }
    bool want = !s->keys.empty();
    if (want != s->writable_wanted) {
      s->writable_wanted = want;
      virStreamEventUpdateCallback(s->st, base_events | (want ? VIR_STREAM_EVENT_WRITABLE : 0));
    }
    return true;
  }

  void lose_link(const std::shared_ptr<link>& l, int reason) {
    std::vector<std::shared_ptr<stream>> on;
    {
      std::lock_guard lock{mu};
      for (auto& [id, s] : streams) {
        if (s->l == l && s->registered) {
          on.push_back(s);
        }
      }
    }
    for (auto& s : on) {
      teardown(s, console_event::kind::lost,
               "The connection to the hypervisor " + l->uri + " closed (" + close_reason(reason)
                 + ")");
    }
  }
};

console_streams::console_streams(callbacks cb, console_stream_config cfg)
    : p_(std::make_shared<impl>()) {
  ensure_loop();
  p_->cb = std::move(cb);
  p_->cfg = cfg;
  p_->wake = virEventAddTimeout(-1, impl::on_wake, new std::weak_ptr<impl>(p_),
                                [](void* o) { delete static_cast<std::weak_ptr<impl>*>(o); });
}

console_streams::~console_streams() {
  auto p = p_;
  // 1. the loop: every stream's callback and the wake timer removed, on the loop's thread
  auto done = std::make_shared<std::promise<void>>();
  auto finished = done->get_future();
  int timer = -1;
  {
    std::lock_guard lock{p->mu};
    p->stopping = true; // no callback from here on; new posts are refused
    p->loop_tasks.push_back([p, done] {
      std::vector<std::shared_ptr<stream>> all;
      {
        std::lock_guard lock{p->mu};
        for (auto& [id, s] : p->streams) {
          all.push_back(s);
        }
      }
      for (auto& s : all) {
        if (s->registered) {
          virStreamEventRemoveCallback(s->st);
          s->registered = false;
        }
      }
      virEventRemoveTimeout(p->wake);
      done->set_value();
    });
    timer = p->wake;
  }
  virEventUpdateTimeout(timer, 0);
  finished.wait_for(std::chrono::seconds(5));
  // 2. the openers: what they were given ends (opens return at once now, frees run)
  {
    std::unique_lock lock{p->mu};
    if (!p->openers_cv.wait_for(lock, p->cfg.stop_wait, [&] { return p->openers == 0; })) {
      return; // one is blocked in libvirt: it ends with the process, holding `p`
    }
  }
  // 3. what is still open
  std::vector<std::shared_ptr<stream>> left;
  {
    std::lock_guard lock{p->mu};
    for (auto& [id, s] : p->streams) {
      left.push_back(s);
    }
    p->streams.clear();
  }
  for (auto& s : left) {
    p->free_stream(*s);
  }
}

void console_streams::open(uint64_t id, std::string uri, std::string domain, bool force) {
  auto s = std::make_shared<stream>();
  s->id = id;
  s->uri = std::move(uri);
  s->domain = std::move(domain);
  s->force = force;
  bool taken = false;
  {
    std::lock_guard lock{p_->mu};
    taken = !p_->streams.emplace(id, s).second;
  }
  if (taken) {
    p_->post_loop([p = p_, id] {
      p->emit(id, console_event::kind::error, "Console " + std::to_string(id) + " is open already");
    });
    return;
  }
  p_->post_open(s->uri, [p = p_, s] { p->do_open(s); });
}

void console_streams::write(uint64_t id, std::string keys) {
  p_->post_loop([p = p_, id, keys = std::move(keys)]() mutable {
    auto s = p->find(id);
    if (!s || !s->registered) {
      p->emit(id, console_event::kind::dropped, "the console is not up", keys.size());
      return;
    }
    size_t room = p->cfg.max_keystrokes - std::min(p->cfg.max_keystrokes, s->keys.size());
    if (keys.size() > room) {
      p->emit(id, console_event::kind::dropped, "too many keystrokes waiting", keys.size() - room);
      keys.resize(room);
    }
    s->keys += keys;
    p->flush(s);
  });
}

void console_streams::close(uint64_t id) {
  if (auto s = p_->find(id)) {
    s->closing = true;
  }
  p_->post_loop([p = p_, id] {
    auto s = p->find(id);
    if (s && s->registered) {
      p->teardown(s, console_event::kind::closed, {});
    }
    // still opening: attach sees `closing` and ends it with `closed`
  });
}

size_t console_streams::connections() const {
  std::lock_guard lock{p_->mu};
  return p_->open_links;
}

} // namespace cws::virt
