#include "probe/prober.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <netdb.h>
#include <netinet/in.h>
#include <set>
#include <stdexcept>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <utility>

#include "base/task_thread.hpp"

namespace cws::probe {

bool outcome::alive() const {
  return std::any_of(ports.begin(), ports.end(),
                     [](port_state s) { return s == port_state::open || s == port_state::closed; });
}

namespace {

using clock = std::chrono::steady_clock;

/// One call of prober::run.
struct batch {
  uint64_t id = 0;
  std::vector<target> targets;
  /// Filled by the resolver thread: each target's socket address (family 0: did not resolve).
  std::vector<sockaddr_storage> addrs;
  size_t fanout = 1;
  std::chrono::milliseconds timeout{0};
  prober::result_fn on_result;
  std::function<void()> on_done;
  size_t next = 0;
  size_t active = 0;
  size_t remaining = 0;
  /// Set by prober::cancel on any thread; the loop ends the batch's nodes.
  std::atomic<bool> cancelled{false};
};

/// A node being probed: one non-blocking socket per port.
struct node_probe {
  std::shared_ptr<batch> b;
  size_t index = 0;
  std::vector<int> fds; // -1 once the port has its answer
  size_t pending = 0;
  outcome res;
  clock::time_point deadline;
  bool query_sent = false;
};

/// Fills `out` with the address of `host` (numeric or a name); false if it does not resolve.
bool resolve(const std::string& host, sockaddr_storage& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) {
    return false;
  }
  std::memcpy(&out, res->ai_addr, std::min<size_t>(res->ai_addrlen, sizeof out));
  freeaddrinfo(res);
  return true;
}

/// What a failed (or finished) connect means for the port.
port_state state_of(int err) {
  switch (err) {
    case 0: return port_state::open;
    case ECONNREFUSED: return port_state::closed;
    case ETIMEDOUT: return port_state::silent;
    default: return port_state::unreachable; // EHOSTUNREACH, ENETUNREACH, EHOSTDOWN, ...
  }
}

/// Errors of our own side (no file descriptor, no local port): not the node's state.
bool local_shortage(int err) {
  return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM || err == EADDRNOTAVAIL;
}

} // namespace

struct prober::impl {
  prober_config cfg;
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  int evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

  // -- shared with other threads (under mu) -----------------------------------------
  std::mutex mu;
  std::deque<std::shared_ptr<batch>> incoming;
  std::unordered_map<uint64_t, std::weak_ptr<batch>> runs;
  uint64_t next_run = 1;
  bool stopping = false;
  /// Some batch was cancelled: the loop looks for its nodes.
  std::atomic<bool> cancel_requested{false};

  // -- loop thread only -------------------------------------------------------------
  std::deque<std::shared_ptr<batch>> waiting; // batches with nodes not started yet
  std::unordered_map<uint64_t, node_probe> probes;
  std::set<std::pair<clock::time_point, uint64_t>> deadlines;
  uint64_t next_probe = 1;

  /// Looks names up, one batch after another, and hands each batch to the loop.
  base::task_thread resolver;
  std::thread loop_thread;

  explicit impl(prober_config c) : cfg(c) {
    if (epfd < 0 || evfd < 0) {
      throw std::runtime_error(std::string{"prober: "} + std::strerror(errno));
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = 0; // probe ids start at 1
    epoll_ctl(epfd, EPOLL_CTL_ADD, evfd, &ev);
    loop_thread = std::thread([this] { loop(); });
  }

  ~impl() {
    {
      std::lock_guard<std::mutex> g{mu};
      stopping = true;
      for (auto& [id, w] : runs) {
        if (auto b = w.lock()) {
          b->cancelled = true;
        }
      }
    }
    // the resolver hands every batch it holds to the loop before it ends; then the loop
    // ends them all (cancelled), so every node still gets its result
    resolver.stop();
    wake();
    loop_thread.join();
    ::close(epfd);
    ::close(evfd);
  }

  void wake() {
    uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(evfd, &one, sizeof one);
  }

  // -- resolver thread ----------------------------------------------------------------

  /// Looks the batch's names up (none once it is cancelled), then hands it to the loop.
  void resolve_batch(const std::shared_ptr<batch>& b) {
    b->addrs.resize(b->targets.size());
    for (size_t i = 0; i < b->targets.size() && !b->cancelled.load(); ++i) {
      const auto& t = b->targets[i];
      b->addrs[i] = {};
      resolve(t.address.empty() ? t.node : t.address, b->addrs[i]);
    }
    {
      std::lock_guard<std::mutex> g{mu};
      incoming.push_back(b);
    }
    wake();
  }

  // -- loop thread --------------------------------------------------------------------

  void loop() {
    std::vector<epoll_event> events(256);
    for (;;) {
      int wait_ms = -1;
      if (!deadlines.empty()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadlines.begin()->first
                                                                          - clock::now())
                      .count();
        wait_ms = static_cast<int>(std::clamp<long long>(left + 1, 0, 60000));
      }
      int n = epoll_wait(epfd, events.data(), static_cast<int>(events.size()), wait_ms);
      bool stop = false;
      for (int i = 0; i < n; ++i) {
        if (events[i].data.u64 == 0) {
          uint64_t drained;
          [[maybe_unused]] auto r = ::read(evfd, &drained, sizeof drained);
          stop = take_incoming() || stop;
        } else {
          on_event(events[i].data.u64, events[i].events);
        }
      }
      if (stop) {
        end_everything();
        return;
      }
      handle_cancels();
      expire(clock::now());
      start_waiting();
    }
  }

  /// Moves new batches to `waiting`. @returns true when the prober is stopping.
  bool take_incoming() {
    std::lock_guard<std::mutex> g{mu};
    for (auto& b : incoming) {
      waiting.push_back(std::move(b));
    }
    incoming.clear();
    return stopping;
  }

  static uint64_t key(uint64_t probe, size_t port) {
    return (probe << 8) | port;
  }

  void start_waiting() {
    for (auto it = waiting.begin(); it != waiting.end();) {
      auto b = *it; // (a copy: finishing the batch's last node may drop it from `waiting`)
      while (b->next < b->targets.size() && b->active < b->fanout) {
        start_node(b, b->next++);
      }
      it = b->next < b->targets.size() ? std::next(it) : waiting.erase(it);
    }
  }

  void start_node(const std::shared_ptr<batch>& b, size_t index) {
    ++b->active;
    auto id = next_probe++;
    auto& p = probes[id];
    p.b = b;
    p.index = index;
    const auto& t = b->targets[index];
    p.res.ports.assign(t.ports.size(), port_state::silent);
    p.fds.assign(t.ports.size(), -1);
    const auto& addr = b->addrs[index];
    if (b->cancelled.load()) {
      return finish(id, "cancelled", "cancelled");
    }
    if (addr.ss_family != AF_INET && addr.ss_family != AF_INET6) {
      return finish(id, "resolve", "Could not resolve " + (t.address.empty() ? t.node : t.address));
    }
    p.deadline = clock::now() + b->timeout;
    for (size_t i = 0; i < t.ports.size(); ++i) {
      sockaddr_storage sa = addr;
      socklen_t len;
      if (sa.ss_family == AF_INET) {
        reinterpret_cast<sockaddr_in&>(sa).sin_port = htons(t.ports[i]);
        len = sizeof(sockaddr_in);
      } else {
        reinterpret_cast<sockaddr_in6&>(sa).sin6_port = htons(t.ports[i]);
        len = sizeof(sockaddr_in6);
      }
      int fd = ::socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      int err = fd < 0 ? errno : 0;
      if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&sa), len) != 0) {
        err = errno;
      }
      if (local_shortage(err) || fd < 0) {
        if (fd >= 0) {
          ::close(fd);
        }
        return finish(id, "resources", std::string{"No socket for a probe: "} + std::strerror(err));
      }
      p.fds[i] = fd;
      ++p.pending;
      if (err == EINPROGRESS) {
        epoll_event ev{};
        ev.events = EPOLLOUT;
        ev.data.u64 = key(id, i);
        epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
      } else {
        port_answered(id, p, i, err, false);
      }
    }
    if (p.pending == 0) {
      return finish(id, {}, {});
    }
    deadlines.emplace(p.deadline, id);
  }

  /// Port `i` of probe `id` connected (err 0) or failed. `registered`: its fd is in epoll.
  void port_answered(uint64_t id, node_probe& p, size_t i, int err, bool registered) {
    const auto& t = p.b->targets[p.index];
    p.res.ports[i] = state_of(err);
    if (err == 0 && i == t.query_index) {
      // xCAT's installer protocol: send the question, read the answer until the peer closes
      ::send(p.fds[i], t.query.data(), t.query.size(), MSG_NOSIGNAL);
      p.query_sent = true;
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = key(id, i);
      epoll_ctl(epfd, registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, p.fds[i], &ev);
      return;
    }
    close_port(p, i, err == 0);
  }

  void close_port(node_probe& p, size_t i, bool connected) {
    if (p.fds[i] < 0) {
      return;
    }
    if (connected) {
      // end with a reset: no TIME_WAIT left on the management node per probe
      linger l{1, 0};
      setsockopt(p.fds[i], SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    ::close(p.fds[i]); // (also leaves epoll)
    p.fds[i] = -1;
    --p.pending;
  }

  void on_event(uint64_t k, uint32_t events) {
    auto id = k >> 8;
    size_t i = k & 0xff;
    auto it = probes.find(id);
    if (it == probes.end() || i >= it->second.fds.size() || it->second.fds[i] < 0) {
      return; // a node that ended in this batch of events
    }
    auto& p = it->second;
    const auto& t = p.b->targets[p.index];
    if (p.query_sent && i == t.query_index) {
      read_answer(p, i);
    } else if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(p.fds[i], SOL_SOCKET, SO_ERROR, &err, &len);
      port_answered(id, p, i, err, true);
    }
    if (p.pending == 0) {
      finish(id, {}, {});
    }
  }

  void read_answer(node_probe& p, size_t i) {
    char buf[1024];
    for (;;) {
      auto n = ::recv(p.fds[i], buf, sizeof buf, 0);
      if (n > 0) {
        auto room = cfg.answer_max - std::min(cfg.answer_max, p.res.answer.size());
        p.res.answer.append(buf, std::min<size_t>(room, static_cast<size_t>(n)));
        if (p.res.answer.size() >= cfg.answer_max) {
          return close_port(p, i, true);
        }
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        return;
      }
      return close_port(p, i, false); // the peer closed (or reset): the answer is whole
    }
  }

  /// Ends probe `id`: ports without an answer stay silent.
  void finish(uint64_t id, const std::string& error, const std::string& message) {
    auto it = probes.find(id);
    auto& p = it->second;
    for (size_t i = 0; i < p.fds.size(); ++i) {
      close_port(p, i, p.res.ports[i] == port_state::open);
    }
    deadlines.erase({p.deadline, id});
    p.res.error = error;
    p.res.message = message;
    auto b = std::move(p.b);
    auto index = p.index;
    auto res = std::move(p.res);
    probes.erase(it);
    --b->active;
    b->on_result(index, std::move(res));
    if (--b->remaining == 0) {
      {
        std::lock_guard<std::mutex> g{mu};
        runs.erase(b->id);
      }
      b->on_done();
    }
  }

  void expire(clock::time_point now) {
    while (!deadlines.empty() && deadlines.begin()->first <= now) {
      finish(deadlines.begin()->second, {}, {});
    }
  }

  /// Ends the running and waiting nodes of cancelled batches.
  void handle_cancels() {
    if (!cancel_requested.exchange(false)) {
      return;
    }
    std::vector<uint64_t> ids;
    for (const auto& [id, p] : probes) {
      if (p.b->cancelled.load()) {
        ids.push_back(id);
      }
    }
    for (auto id : ids) {
      finish(id, "cancelled", "cancelled");
    }
    for (auto it = waiting.begin(); it != waiting.end();) {
      auto b = *it;
      if (!b->cancelled.load()) {
        ++it;
        continue;
      }
      it = waiting.erase(it);
      while (b->next < b->targets.size()) {
        start_node(b, b->next++); // ends at once, cancelled
      }
    }
  }

  /// The prober is going away: every node still probing or waiting ends, cancelled.
  void end_everything() {
    take_incoming();
    cancel_requested = true;
    handle_cancels();
  }
};

prober::prober(prober_config cfg) : impl_(std::make_unique<impl>(cfg)) {
  // nop
}

prober::~prober() = default;

uint64_t prober::run(std::vector<target> targets, size_t fanout, std::chrono::milliseconds timeout,
                     result_fn on_result, std::function<void()> on_done) {
  if (targets.empty()) {
    on_done();
    return 0;
  }
  for (const auto& t : targets) {
    if (t.ports.size() > max_ports) {
      throw std::invalid_argument("prober: more than 64 ports for one node");
    }
  }
  // (counted: the metrics page; a node is `ok` once probed, whatever its ports said)
  meter_->wrap(targets.size(), on_result, on_done, [](const outcome& o) {
    return o.error.empty() ? std::string_view{"ok"} : std::string_view{o.error};
  });
  auto b = std::make_shared<batch>();
  b->targets = std::move(targets);
  b->fanout = std::max<size_t>(fanout, 1);
  b->timeout = timeout;
  b->remaining = b->targets.size();
  b->on_result = std::move(on_result);
  b->on_done = std::move(on_done);
  uint64_t id;
  {
    std::lock_guard<std::mutex> g{impl_->mu};
    id = impl_->next_run++;
    b->id = id;
    impl_->runs[id] = b;
  }
  impl_->resolver.post([i = impl_.get(), b = std::move(b)] { i->resolve_batch(b); });
  return id;
}

void prober::cancel(uint64_t id) {
  {
    std::lock_guard<std::mutex> g{impl_->mu};
    auto it = impl_->runs.find(id);
    if (it == impl_->runs.end()) {
      return;
    }
    if (auto b = it->second.lock()) {
      b->cancelled = true;
      impl_->cancel_requested = true;
    }
  }
  impl_->wake();
}

} // namespace cws::probe
