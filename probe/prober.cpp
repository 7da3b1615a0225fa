#include "probe/prober.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <stdexcept>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <unordered_map>
#include <utility>

#include "base/event_loop.hpp"
#include "base/fanout.hpp"
#include "base/task_thread.hpp"

namespace cws::probe {

bool outcome::alive() const {
  return std::any_of(ports.begin(), ports.end(),
                     [](port_state s) { return s == port_state::open || s == port_state::closed; });
}

namespace {

using clock = std::chrono::steady_clock;
using base::node_errc;
namespace node_message = base::node_message;
using probe_run = base::basic_fanout_run<outcome>;

/// One call of prober::run: its targets, their addresses, and their bookkeeping.
struct batch {
  std::vector<target> targets;
  /// Filled by the resolver thread: each target's socket address (family 0: did not resolve).
  std::vector<sockaddr_storage> addrs;
  std::chrono::milliseconds timeout{0};
  std::shared_ptr<probe_run> run;
};

/// A node being probed: one non-blocking socket per port.
struct node_probe {
  std::shared_ptr<batch> b;
  size_t index = 0;
  std::vector<int> fds; // -1 once the port has its answer
  size_t pending = 0;
  outcome res;
  bool query_sent = false;
};

/// The outcome of a target that was not probed to its end (cancel, stop): its ports silent.
probe_run::failure_fn failures(const std::vector<target>& targets) {
  std::vector<size_t> ports;
  ports.reserve(targets.size());
  for (const auto& t : targets) {
    ports.push_back(t.ports.size());
  }
  return [ports = std::move(ports)](size_t index, node_errc why, std::string_view message) {
    outcome o;
    o.ports.assign(index < ports.size() ? ports[index] : 0, port_state::silent);
    o.error = to_string(why);
    o.message = message;
    return o;
  };
}

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

/// The prober on the fan-out kit (base/): each port's socket is base::event_loop work under
/// (probe id, port), each node's deadline under its probe id, each run a fanout_run of
/// outcomes in a base::run_registry.
struct prober::impl {
  prober_config cfg;
  base::run_registry runs;

  // -- loop thread only -------------------------------------------------------------
  std::unordered_map<uint64_t, node_probe> probes;
  uint64_t next_probe = 1;

  /// Looks names up, one batch after another, and hands each batch to the loop.
  base::task_thread resolver;
  /// Last: its thread starts once everything it calls is built.
  base::event_loop loop{handlers()};

  explicit impl(prober_config c) : cfg(c) {
    // nop
  }

  ~impl() {
    // the resolver hands every batch it holds to the loop (cancelled: no lookups) before it
    // ends; then the loop ends them all, so every node still gets its result
    runs.cancel_all();
    resolver.stop();
    loop.stop();
  }

  base::event_loop::handlers handlers() {
    base::event_loop::handlers h;
    h.ready = [this](uint64_t key, uint32_t events) {
      on_event(key, events);
    };
    h.deadline = [this](uint64_t id) {
      if (probes.count(id) != 0) {
        finish(id, node_errc::none, {}); // ports without an answer stay silent
      }
    };
    h.stopped = [this] {
      stop();
    };
    return h;
  }

  // -- resolver thread ----------------------------------------------------------------

  /// Looks the batch's names up (none once it is cancelled), then hands it to the loop.
  void resolve_batch(const std::shared_ptr<batch>& b) {
    b->addrs.resize(b->targets.size());
    for (size_t i = 0; i < b->targets.size() && !b->run->cancel_requested(); ++i) {
      const auto& t = b->targets[i];
      b->addrs[i] = {};
      resolve(t.address.empty() ? t.node : t.address, b->addrs[i]);
    }
    loop.post([this, b] { fill(b); });
  }

  // -- loop thread --------------------------------------------------------------------

  static uint64_t key(uint64_t probe, size_t port) {
    return (probe << 8) | port;
  }

  /// Starts nodes of `b` while its fanout has a free slot.
  void fill(const std::shared_ptr<batch>& b) {
    while (auto index = b->run->next_to_start()) {
      start_node(b, *index);
    }
  }

  void start_node(const std::shared_ptr<batch>& b, size_t index) {
    auto id = next_probe++;
    auto& p = probes[id];
    p.b = b;
    p.index = index;
    const auto& t = b->targets[index];
    p.res.ports.assign(t.ports.size(), port_state::silent);
    p.fds.assign(t.ports.size(), -1);
    const auto& addr = b->addrs[index];
    if (addr.ss_family != AF_INET && addr.ss_family != AF_INET6) {
      return finish(id, node_errc::resolve,
                    "Could not resolve " + (t.address.empty() ? t.node : t.address));
    }
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
        return finish(id, node_errc::resources,
                      std::string{"No socket for a probe: "} + std::strerror(err));
      }
      p.fds[i] = fd;
      ++p.pending;
      if (err == EINPROGRESS) {
        loop.watch(fd, EPOLLOUT, key(id, i));
      } else {
        port_answered(id, p, i, err);
      }
    }
    if (p.pending == 0) {
      return finish(id, node_errc::none, {});
    }
    loop.set_deadline(id, clock::now() + b->timeout);
  }

  /// Port `i` of probe `id` connected (err 0) or failed.
  void port_answered(uint64_t id, node_probe& p, size_t i, int err) {
    const auto& t = p.b->targets[p.index];
    p.res.ports[i] = state_of(err);
    if (err == 0 && i == t.query_index) {
      // xCAT's installer protocol: send the question, read the answer until the peer closes
      ::send(p.fds[i], t.query.data(), t.query.size(), MSG_NOSIGNAL);
      p.query_sent = true;
      loop.watch(p.fds[i], EPOLLIN, key(id, i));
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
      port_answered(id, p, i, err);
    }
    if (p.pending == 0) {
      finish(id, node_errc::none, {});
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

  /// Ends probe `id`: ports without an answer stay silent. Its run may start its next node
  /// (posted: a node that fails at once must not recurse into the next one).
  void finish(uint64_t id, node_errc why, std::string_view message) {
    auto it = probes.find(id);
    auto& p = it->second;
    for (size_t i = 0; i < p.fds.size(); ++i) {
      close_port(p, i, p.res.ports[i] == port_state::open);
    }
    loop.clear_deadline(id);
    p.res.error = to_string(why);
    p.res.message = message;
    auto b = std::move(p.b);
    auto index = p.index;
    auto res = std::move(p.res);
    probes.erase(it);
    b->run->finished(index, std::move(res));
    if (b->run->unstarted() > 0) {
      loop.post([this, b] { fill(b); });
    }
  }

  /// The ids of the nodes being probed for `run` (all with null; a copy: ending one
  /// erases it).
  std::vector<uint64_t> probe_ids(const base::fanout_state* run) const {
    std::vector<uint64_t> ids;
    for (const auto& [id, p] : probes) {
      if (run == nullptr || p.b->run.get() == run) {
        ids.push_back(id);
      }
    }
    return ids;
  }

  /// Ends the nodes of `run` being probed, then those waiting.
  void end_cancelled(base::fanout_state& run) {
    for (auto id : probe_ids(&run)) {
      finish(id, node_errc::cancelled, node_message::cancelled);
    }
    run.end_unstarted(node_errc::cancelled, node_message::cancelled_unstarted);
  }

  /// The prober is going away: every node still probing or waiting ends, cancelled.
  void stop() {
    for (auto id : probe_ids(nullptr)) {
      finish(id, node_errc::cancelled, node_message::stopping);
    }
    for (auto& run : runs.cancel_all()) {
      run->end_unstarted(node_errc::cancelled, node_message::stopped_unstarted);
    }
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
  b->run = std::make_shared<probe_run>(targets.size(), fanout, std::move(on_result),
                                       std::move(on_done), failures(targets));
  b->targets = std::move(targets);
  b->timeout = timeout;
  auto id = impl_->runs.add(b->run);
  impl_->resolver.post([i = impl_.get(), b = std::move(b)] { i->resolve_batch(b); });
  return id;
}

void prober::cancel(uint64_t id) {
  if (auto run = impl_->runs.cancel(id)) {
    impl_->loop.post([i = impl_.get(), run] { i->end_cancelled(*run); });
  }
}

} // namespace cws::probe
