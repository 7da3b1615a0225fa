#include "ssh/engine.hpp"

#include <libssh2.h>

#include <arpa/inet.h>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdexcept>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <utility>

namespace cws::ssh {

namespace {

using clock = std::chrono::steady_clock;

/// libssh2_init is global and not thread-safe: once, before any engine thread runs.
void init_libssh2() {
  static const int once = [] {
    libssh2_init(0);
    return 0;
  }();
  (void)once;
}

enum class phase { connect, handshake, auth, open, pty, exec, read, close, wait_closed };

struct batch {
  std::vector<job> jobs;
  size_t fanout = 1;
  size_t next = 0;
  size_t active = 0;
  size_t remaining = 0;
  engine::result_fn on_result;
  std::function<void()> on_done;
  uint64_t id = 0;
  /// Set by engine::cancel on another thread; the engine thread ends the batch's jobs.
  std::atomic<bool> cancelled{false};
};

/// An SSH connection: a socket and its libssh2 session, owned by the engine thread.
struct connection {
  int fd = -1;
  LIBSSH2_SESSION* session = nullptr;
  std::string key;
  clock::time_point idle_since;

  ~connection() {
    if (session != nullptr) {
      // best effort goodbye, then free with the socket closed so nothing can block
      libssh2_session_disconnect(session, "bye");
    }
    if (fd >= 0) {
      ::close(fd);
    }
    if (session != nullptr) {
      libssh2_session_set_blocking(session, 1);
      libssh2_session_free(session);
    }
  }
};

struct task {
  uint64_t id = 0;
  std::shared_ptr<batch> b;
  size_t index = 0;
  const job* j = nullptr;
  std::unique_ptr<connection> conn;
  LIBSSH2_CHANNEL* channel = nullptr;
  phase ph = phase::connect;
  bool has_deadline = false;
  clock::time_point deadline;
  bool retried = false;
  bool reused = false;
  base::node_result res;
};

std::string pool_key(const job& j) {
  return j.user + '\0' + j.node + '\0' + j.address + '\0' + std::to_string(j.port) + '\0'
         + j.private_key.string();
}

int knownhost_key_type(int hostkey_type) {
  switch (hostkey_type) {
    case LIBSSH2_HOSTKEY_TYPE_RSA: return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
    case LIBSSH2_HOSTKEY_TYPE_DSS: return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_256: return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_384: return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_521: return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
    case LIBSSH2_HOSTKEY_TYPE_ED25519: return LIBSSH2_KNOWNHOST_KEY_ED25519;
    default: return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
  }
}

/// Sets a method preference from the wanted names this libssh2 supports. (libssh2 1.10 drops
/// unsupported names with an overlapping memcpy, which ASan rightly flags: never give it any.)
void prefer(LIBSSH2_SESSION* s, int method, std::initializer_list<const char*> wanted) {
  const char** algs = nullptr;
  int n = libssh2_session_supported_algs(s, method, &algs);
  std::string pref;
  for (const char* w : wanted) {
    for (int i = 0; i < n; ++i) {
      if (std::strcmp(algs[i], w) == 0) {
        pref += (pref.empty() ? "" : ",") + std::string{w};
      }
    }
  }
  if (n > 0) {
    libssh2_free(s, algs);
  }
  if (!pref.empty()) {
    libssh2_session_method_pref(s, method, pref.c_str());
  }
}

std::string session_error(LIBSSH2_SESSION* s) {
  char* msg = nullptr;
  libssh2_session_last_error(s, &msg, nullptr, 0);
  return msg != nullptr ? msg : "unknown error";
}

} // namespace

host_key_policy parse_host_key_policy(const std::string& text) {
  if (text == "strict") {
    return host_key_policy::strict;
  }
  if (text == "accept-new") {
    return host_key_policy::accept_new;
  }
  if (text == "off") {
    return host_key_policy::off;
  }
  throw std::invalid_argument("ssh_host_key_policy must be strict, accept-new or off, not '" + text
                              + "'");
}

struct engine::impl {
  engine_config cfg;
  int epfd = -1;
  int evfd = -1;
  std::thread loop_thread;
  std::thread resolver_thread;

  // -- shared with other threads (under mu) --
  std::mutex mu;
  std::condition_variable resolver_cv;
  std::deque<std::shared_ptr<batch>> to_resolve;
  std::deque<std::shared_ptr<batch>> incoming;
  bool stopping = false;
  bool clear_requested = false;
  bool cancel_requested = false;
  /// Batches not finished yet, by id (for cancel).
  std::unordered_map<uint64_t, std::weak_ptr<batch>> runs;
  uint64_t next_run = 1;
  std::atomic<uint64_t> connects{0};
  std::atomic<uint64_t> reuses{0};
  std::atomic<uint64_t> pooled{0};

  // -- engine thread only --
  LIBSSH2_SESSION* kh_session = nullptr;
  LIBSSH2_KNOWNHOSTS* known = nullptr;
  bool known_dirty = false;
  std::multimap<std::string, std::unique_ptr<connection>> pool;
  std::unordered_map<uint64_t, std::unique_ptr<task>> tasks;
  std::deque<std::shared_ptr<batch>> waiting; // batches with jobs not yet started
  uint64_t next_id = 1;

  explicit impl(engine_config c) : cfg(std::move(c)) {
    init_libssh2();
    epfd = epoll_create1(EPOLL_CLOEXEC);
    evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epfd < 0 || evfd < 0) {
      throw std::runtime_error("ssh engine: cannot create epoll/eventfd");
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = 0; // id 0: the wakeup eventfd
    epoll_ctl(epfd, EPOLL_CTL_ADD, evfd, &ev);
    kh_session = libssh2_session_init();
    known = libssh2_knownhost_init(kh_session);
    if (!cfg.known_hosts.empty()) {
      libssh2_knownhost_readfile(known, cfg.known_hosts.c_str(), LIBSSH2_KNOWNHOST_FILE_OPENSSH);
    }
    loop_thread = std::thread([this] { loop(); });
    resolver_thread = std::thread([this] { resolve_loop(); });
  }

  ~impl() {
    {
      std::lock_guard<std::mutex> guard{mu};
      stopping = true;
    }
    resolver_cv.notify_all();
    wake();
    resolver_thread.join();
    loop_thread.join();
    libssh2_knownhost_free(known);
    libssh2_session_free(kh_session);
    ::close(evfd);
    ::close(epfd);
  }

  void wake() {
    uint64_t one = 1;
    (void)!::write(evfd, &one, sizeof one);
  }

  // -- resolver thread ------------------------------------------------------------

  /// Resolves names without an address off the engine thread (getaddrinfo blocks).
  void resolve_loop() {
    for (;;) {
      std::shared_ptr<batch> b;
      {
        std::unique_lock<std::mutex> lock{mu};
        resolver_cv.wait(lock, [this] { return stopping || !to_resolve.empty(); });
        if (stopping) {
          return;
        }
        b = std::move(to_resolve.front());
        to_resolve.pop_front();
      }
      std::map<std::string, std::string> cache;
      for (auto& j : b->jobs) {
        if (!j.address.empty()) {
          continue;
        }
        auto it = cache.find(j.node);
        if (it == cache.end()) {
          addrinfo hints{};
          hints.ai_socktype = SOCK_STREAM;
          addrinfo* res = nullptr;
          std::string addr;
          if (getaddrinfo(j.node.c_str(), nullptr, &hints, &res) == 0 && res != nullptr) {
            char buf[INET6_ADDRSTRLEN] = {};
            const void* src = res->ai_family == AF_INET6
                                ? static_cast<const void*>(
                                  &reinterpret_cast<sockaddr_in6*>(res->ai_addr)->sin6_addr)
                                : &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr;
            inet_ntop(res->ai_family, src, buf, sizeof buf);
            addr = buf;
            freeaddrinfo(res);
          }
          it = cache.emplace(j.node, addr).first;
        }
        j.address = it->second;
      }
      {
        std::lock_guard<std::mutex> guard{mu};
        incoming.push_back(std::move(b));
      }
      wake();
    }
  }

  // -- engine thread --------------------------------------------------------------

  void loop() {
    std::vector<epoll_event> events(1024);
    for (;;) {
      bool cancel = false;
      {
        std::lock_guard<std::mutex> guard{mu};
        cancel = std::exchange(cancel_requested, false);
        if (stopping) {
          break;
        }
        for (auto& b : incoming) {
          cancel = cancel || b->cancelled; // cancelled while its names were resolved
          waiting.push_back(std::move(b));
        }
        incoming.clear();
        if (clear_requested) {
          pool.clear();
          pooled = 0;
          clear_requested = false;
        }
      }
      if (cancel) {
        end_cancelled();
      }
      start_waiting();
      int timeout = next_timeout_ms();
      int n = epoll_wait(epfd, events.data(), static_cast<int>(events.size()), timeout);
      for (int i = 0; i < n; ++i) {
        auto id = events[static_cast<size_t>(i)].data.u64;
        if (id == 0) {
          uint64_t drained;
          (void)!::read(evfd, &drained, sizeof drained);
          continue;
        }
        if (auto it = tasks.find(id); it != tasks.end()) {
          step(*it->second);
        }
      }
      expire();
      if (known_dirty && !cfg.known_hosts.empty()) {
        libssh2_knownhost_writefile(known, cfg.known_hosts.c_str(), LIBSSH2_KNOWNHOST_FILE_OPENSSH);
        known_dirty = false;
      }
    }
    // shutting down: end what runs
    std::vector<uint64_t> ids;
    for (auto& [id, t] : tasks) {
      ids.push_back(id);
    }
    for (auto id : ids) {
      if (auto it = tasks.find(id); it != tasks.end()) {
        fail(*it->second, "disconnected", "the service is stopping");
      }
    }
    pool.clear();
  }

  int next_timeout_ms() {
    auto now = clock::now();
    auto best = now + std::chrono::seconds(1);
    for (auto& [id, t] : tasks) {
      if (t->has_deadline && t->deadline < best) {
        best = t->deadline;
      }
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(best - now).count();
    return static_cast<int>(std::max<long long>(0, ms) + 1);
  }

  /// Starts jobs of waiting batches, each within its fanout.
  void start_waiting() {
    auto ready = std::move(waiting);
    waiting.clear();
    for (auto& b : ready) {
      while (b->active < b->fanout && b->next < b->jobs.size()) {
        auto idx = b->next++;
        ++b->active;
        start(b, idx); // may finish at once and queue `b` again
      }
      if (b->next < b->jobs.size()
          && std::find(waiting.begin(), waiting.end(), b) == waiting.end()) {
        waiting.push_back(b);
      }
    }
  }

  void start(const std::shared_ptr<batch>& b, size_t idx) {
    auto t = std::make_unique<task>();
    t->id = next_id++;
    t->b = b;
    t->index = idx;
    t->j = &b->jobs[idx];
    t->res.name = t->j->node;
    auto* raw = t.get();
    tasks.emplace(raw->id, std::move(t));
    auto key = pool_key(*raw->j);
    if (auto it = pool.find(key); it != pool.end()) {
      raw->conn = std::move(it->second);
      pool.erase(it);
      --pooled;
      ++reuses;
      raw->reused = true;
      raw->res.reused = true;
      raw->ph = phase::open;
      watch(*raw, EPOLL_CTL_ADD, EPOLLIN);
      step(*raw);
      return;
    }
    connect_fresh(*raw);
  }

  void connect_fresh(task& t) {
    const auto& j = *t.j;
    t.reused = false;
    t.res.reused = false;
    t.has_deadline = true;
    t.deadline = clock::now() + cfg.connect_timeout;
    if (j.address.empty()) {
      fail(t, "resolve",
           "ssh: Could not resolve hostname " + j.node + ": Name or service not known");
      return;
    }
    sockaddr_storage ss{};
    socklen_t len = 0;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (inet_pton(AF_INET, j.address.c_str(), &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      v4->sin_port = htons(j.port);
      len = sizeof *v4;
    } else if (inet_pton(AF_INET6, j.address.c_str(), &v6->sin6_addr) == 1) {
      v6->sin6_family = AF_INET6;
      v6->sin6_port = htons(j.port);
      len = sizeof *v6;
    } else {
      fail(t, "resolve", "ssh: invalid address '" + j.address + "' for " + j.node);
      return;
    }
    t.conn = std::make_unique<connection>();
    t.conn->key = pool_key(j);
    t.conn->fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (t.conn->fd < 0) {
      fail(t, "unreachable", std::string{"ssh: socket: "} + std::strerror(errno));
      return;
    }
    int one = 1;
    setsockopt(t.conn->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    t.ph = phase::connect;
    int rc = ::connect(t.conn->fd, reinterpret_cast<sockaddr*>(&ss), len);
    if (rc != 0 && errno != EINPROGRESS) {
      connect_failed(t, errno);
      return;
    }
    watch(t, EPOLL_CTL_ADD, EPOLLOUT);
  }

  void connect_failed(task& t, int err) {
    const auto& j = *t.j;
    std::string prefix
      = "ssh: connect to host " + j.node + " port " + std::to_string(j.port) + ": ";
    if (err == ECONNREFUSED) {
      fail(t, "refused", prefix + "Connection refused");
    } else if (err == ETIMEDOUT) {
      fail(t, "connect-timeout", prefix + "Connection timed out");
    } else {
      fail(t, "unreachable", prefix + std::strerror(err));
    }
  }

  void watch(task& t, int op, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = t.id;
    if (epoll_ctl(epfd, op, t.conn->fd, &ev) != 0 && op == EPOLL_CTL_ADD) {
      epoll_ctl(epfd, EPOLL_CTL_MOD, t.conn->fd, &ev);
    }
  }

  /// libssh2 returned EAGAIN: wait for the direction it is blocked on.
  void wait_for_session(task& t) {
    int dirs = libssh2_session_block_directions(t.conn->session);
    uint32_t ev = 0;
    if (dirs & LIBSSH2_SESSION_BLOCK_INBOUND) {
      ev |= EPOLLIN;
    }
    if (dirs & LIBSSH2_SESSION_BLOCK_OUTBOUND) {
      ev |= EPOLLOUT;
    }
    watch(t, EPOLL_CTL_MOD, ev == 0 ? EPOLLIN : ev);
  }

  bool start_session(task& t) {
    auto* s = libssh2_session_init();
    if (s == nullptr) {
      fail(t, "handshake", "ssh: cannot create a session");
      return false;
    }
    t.conn->session = s;
    libssh2_session_set_blocking(s, 0);
    // curve25519 first: a cheap key exchange is the biggest lever on fan-out CPU
    prefer(s, LIBSSH2_METHOD_KEX,
           {"curve25519-sha256", "curve25519-sha256@libssh.org", "ecdh-sha2-nistp256",
            "diffie-hellman-group14-sha256"});
    prefer(s, LIBSSH2_METHOD_HOSTKEY,
           {"ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"});
    return true;
  }

  /// Checks the server's host key; false (task failed) if refused.
  bool check_host_key(task& t) {
    if (cfg.host_keys == host_key_policy::off) {
      return true;
    }
    size_t len = 0;
    int type = 0;
    const char* key = libssh2_session_hostkey(t.conn->session, &len, &type);
    const auto& j = *t.j;
    if (key == nullptr) {
      fail(t, "host-key", "ssh: no host key from " + j.node);
      return false;
    }
    int kt = knownhost_key_type(type);
    int rc = libssh2_knownhost_checkp(
      known, j.node.c_str(), j.port, key, len,
      LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | kt, nullptr);
    if (rc == LIBSSH2_KNOWNHOST_CHECK_MATCH) {
      return true;
    }
    if (rc == LIBSSH2_KNOWNHOST_CHECK_NOTFOUND && cfg.host_keys == host_key_policy::accept_new) {
      std::string host = j.port == 22 ? j.node : "[" + j.node + "]:" + std::to_string(j.port);
      libssh2_knownhost_addc(known, host.c_str(), nullptr, key, len, nullptr, 0,
                             LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | kt,
                             nullptr);
      known_dirty = true;
      return true;
    }
    fail(t, "host-key",
         rc == LIBSSH2_KNOWNHOST_CHECK_MISMATCH
           ? "ssh: REMOTE HOST IDENTIFICATION HAS CHANGED for " + j.node
               + "; host key verification failed."
           : "ssh: No host key is known for " + j.node + "; host key verification failed.");
    return false;
  }

  /// The pooled connection broke before the command started: connect again, once.
  bool retry_fresh(task& t) {
    if (!t.reused || t.retried) {
      return false;
    }
    t.retried = true;
    t.channel = nullptr; // freed with the session
    if (t.conn && t.conn->fd >= 0) {
      epoll_ctl(epfd, EPOLL_CTL_DEL, t.conn->fd, nullptr);
    }
    t.conn.reset();
    connect_fresh(t);
    return true;
  }

  void append(task& t, std::string& to, const char* buf, ssize_t n) {
    size_t room = cfg.output_max - std::min(cfg.output_max, t.res.out.size() + t.res.err.size());
    auto take = std::min(room, static_cast<size_t>(n));
    to.append(buf, take);
    if (take < static_cast<size_t>(n)) {
      t.res.truncated = true; // keep reading: an unread window would stall the channel
    }
  }

  /// Advances the task's state machine as far as it goes without blocking.
  void step(task& t) {
    auto* s = t.conn ? t.conn->session : nullptr;
    const auto& j = *t.j;
    for (;;) {
      switch (t.ph) {
        case phase::connect: {
          int err = 0;
          socklen_t len = sizeof err;
          getsockopt(t.conn->fd, SOL_SOCKET, SO_ERROR, &err, &len);
          if (err != 0) {
            connect_failed(t, err);
            return;
          }
          if (!start_session(t)) {
            return;
          }
          s = t.conn->session;
          t.ph = phase::handshake;
          break;
        }
        case phase::handshake: {
          int rc = libssh2_session_handshake(s, t.conn->fd);
          if (rc == LIBSSH2_ERROR_EAGAIN) {
            wait_for_session(t);
            return;
          }
          if (rc != 0) {
            fail(t, "handshake", "ssh: handshake with " + j.node + " failed: " + session_error(s));
            return;
          }
          if (!check_host_key(t)) {
            return;
          }
          t.ph = phase::auth;
          break;
        }
        case phase::auth: {
          std::string pub = j.public_key.empty() ? std::string{} : j.public_key.string();
          int rc = libssh2_userauth_publickey_fromfile_ex(
            s, j.user.c_str(), static_cast<unsigned>(j.user.size()),
            pub.empty() ? nullptr : pub.c_str(), j.private_key.c_str(), nullptr);
          if (rc == LIBSSH2_ERROR_EAGAIN) {
            wait_for_session(t);
            return;
          }
          if (rc != 0) {
            fail(t, "auth", j.user + "@" + j.node + ": Permission denied (publickey).");
            return;
          }
          ++connects;
          t.ph = phase::open;
          break;
        }
        case phase::open: {
          t.channel = libssh2_channel_open_session(s);
          if (t.channel == nullptr) {
            if (libssh2_session_last_errno(s) == LIBSSH2_ERROR_EAGAIN) {
              wait_for_session(t);
              return;
            }
            if (!retry_fresh(t)) {
              fail(t, "channel",
                   "ssh: cannot open a channel on " + j.node + ": " + session_error(s));
            }
            return;
          }
          t.has_deadline = false;
          if (j.command_timeout.count() > 0) {
            t.has_deadline = true;
            t.deadline = clock::now() + j.command_timeout;
          }
          t.ph = j.command_timeout.count() > 0 ? phase::pty : phase::exec;
          break;
        }
        case phase::pty: {
          // ECHO off (53), ONLCR off (72): output as the command wrote it
          static const char modes[] = {53, 0, 0, 0, 0, 72, 0, 0, 0, 0, 0};
          int rc = libssh2_channel_request_pty_ex(t.channel, "dumb", 4, modes, sizeof modes, 200,
                                                  24, 0, 0);
          if (rc == LIBSSH2_ERROR_EAGAIN) {
            wait_for_session(t);
            return;
          }
          if (rc != 0) {
            fail(t, "channel", "ssh: pty request refused by " + j.node);
            return;
          }
          t.ph = phase::exec;
          break;
        }
        case phase::exec: {
          int rc = libssh2_channel_exec(t.channel, j.command.c_str());
          if (rc == LIBSSH2_ERROR_EAGAIN) {
            wait_for_session(t);
            return;
          }
          if (rc != 0) {
            if (!retry_fresh(t)) {
              fail(t, "channel",
                   "ssh: cannot run the command on " + j.node + ": " + session_error(s));
            }
            return;
          }
          t.retried = true; // the command may have started: never run it twice
          t.ph = phase::read;
          break;
        }
        case phase::read: {
          char buf[32768];
          bool progressed = false;
          for (int stream = 0; stream < 2; ++stream) {
            ssize_t n = libssh2_channel_read_ex(t.channel, stream, buf, sizeof buf);
            if (n > 0) {
              append(t, stream == 0 ? t.res.out : t.res.err, buf, n);
              progressed = true;
            } else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
              fail(t, "disconnected",
                   "ssh: connection to " + j.node + " lost: " + session_error(s));
              return;
            }
          }
          if (progressed) {
            break;
          }
          if (libssh2_channel_eof(t.channel) != 0) {
            t.ph = phase::close;
            break;
          }
          wait_for_session(t);
          return;
        }
        case phase::close: {
          int rc = libssh2_channel_close(t.channel);
          if (rc == LIBSSH2_ERROR_EAGAIN) {
            wait_for_session(t);
            return;
          }
          t.ph = phase::wait_closed;
          break;
        }
        case phase::wait_closed: {
          int rc = libssh2_channel_wait_closed(t.channel);
          if (rc == LIBSSH2_ERROR_EAGAIN) {
            wait_for_session(t);
            return;
          }
          t.res.rc = libssh2_channel_get_exit_status(t.channel);
          char* sig = nullptr;
          size_t siglen = 0;
          libssh2_channel_get_exit_signal(t.channel, &sig, &siglen, nullptr, nullptr, nullptr,
                                          nullptr);
          if (sig != nullptr) {
            t.res.rc = -1;
            t.res.error = "signal";
            t.res.message
              = "the command on " + j.node + " was ended by signal " + std::string{sig, siglen};
            libssh2_free(s, sig);
          }
          libssh2_channel_free(t.channel);
          t.channel = nullptr;
          finish(t, true);
          return;
        }
      }
    }
  }

  void fail(task& t, const std::string& code, const std::string& message) {
    t.res.error = code;
    t.res.message = message;
    finish(t, false);
  }

  void finish(task& t, bool keep_connection) {
    if (t.conn && t.conn->fd >= 0) {
      epoll_ctl(epfd, EPOLL_CTL_DEL, t.conn->fd, nullptr);
    }
    if (keep_connection && t.conn) {
      t.conn->idle_since = clock::now();
      auto key = t.conn->key;
      pool.emplace(std::move(key), std::move(t.conn));
      ++pooled;
      trim_pool();
    } else {
      t.channel = nullptr; // freed with the session
      t.conn.reset();
    }
    auto b = t.b;
    auto idx = t.index;
    auto res = std::move(t.res);
    tasks.erase(t.id); // `t` is gone from here on
    --b->active;
    --b->remaining;
    b->on_result(idx, std::move(res));
    if (b->remaining == 0) {
      done(*b);
    } else if (b->next < b->jobs.size()
               && std::find(waiting.begin(), waiting.end(), b) == waiting.end()) {
      waiting.push_back(b);
    }
  }

  /// Ends the jobs of cancelled batches: running ones are closed (which hangs up their
  /// commands), waiting ones never start. Every job still gets its result.
  void end_cancelled() {
    std::vector<uint64_t> ids;
    for (auto& [id, t] : tasks) {
      if (t->b->cancelled) {
        ids.push_back(id);
      }
    }
    for (auto id : ids) {
      if (auto it = tasks.find(id); it != tasks.end()) {
        fail(*it->second, "cancelled", "The command was cancelled.");
      }
    }
    auto ready = std::move(waiting);
    waiting.clear();
    for (auto& b : ready) {
      if (!b->cancelled) {
        waiting.push_back(b);
        continue;
      }
      while (b->next < b->jobs.size()) {
        auto idx = b->next++;
        base::node_result r;
        r.name = b->jobs[idx].node;
        r.error = "cancelled";
        r.message = "The command was cancelled before it started.";
        --b->remaining;
        b->on_result(idx, std::move(r));
      }
      if (b->remaining == 0) {
        done(*b);
      }
    }
  }

  /// A batch has ended: its last callback.
  void done(batch& b) {
    {
      std::lock_guard<std::mutex> guard{mu};
      runs.erase(b.id);
    }
    b.on_done();
  }

  void trim_pool() {
    while (pool.size() > cfg.max_pooled) {
      auto oldest = pool.begin();
      for (auto it = pool.begin(); it != pool.end(); ++it) {
        if (it->second->idle_since < oldest->second->idle_since) {
          oldest = it;
        }
      }
      pool.erase(oldest);
      --pooled;
    }
  }

  /// Deadlines: connect timeouts, command timeouts, idle pooled connections.
  void expire() {
    auto now = clock::now();
    std::vector<uint64_t> late;
    for (auto& [id, t] : tasks) {
      if (t->has_deadline && t->deadline <= now) {
        late.push_back(id);
      }
    }
    for (auto id : late) {
      auto it = tasks.find(id);
      if (it == tasks.end()) {
        continue;
      }
      auto& t = *it->second;
      const auto& j = *t.j;
      if (t.ph <= phase::auth) {
        fail(t, "connect-timeout",
             "ssh: connect to host " + j.node + " port " + std::to_string(j.port)
               + ": Connection timed out");
      } else {
        // closing the connection hangs up the command's pty: the node ends it (SIGHUP)
        fail(t, "timeout",
             "Timed out waiting for response from " + j.node + ". The command was terminated.");
      }
    }
    for (auto it = pool.begin(); it != pool.end();) {
      if (now - it->second->idle_since >= cfg.pool_idle) {
        it = pool.erase(it);
        --pooled;
      } else {
        ++it;
      }
    }
  }
};

engine::engine(engine_config cfg) : impl_(std::make_unique<impl>(std::move(cfg))) {
  // nop
}

engine::~engine() = default;

uint64_t engine::run(std::vector<job> jobs, size_t fanout, result_fn on_result,
                     std::function<void()> on_done) {
  auto b = std::make_shared<batch>();
  b->jobs = std::move(jobs);
  b->fanout = std::max<size_t>(1, fanout);
  b->remaining = b->jobs.size();
  b->on_result = std::move(on_result);
  b->on_done = std::move(on_done);
  if (b->jobs.empty()) {
    b->on_done();
    return 0;
  }
  bool resolve
    = std::any_of(b->jobs.begin(), b->jobs.end(), [](const job& j) { return j.address.empty(); });
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> guard{impl_->mu};
    id = b->id = impl_->next_run++;
    impl_->runs.emplace(id, b);
    (resolve ? impl_->to_resolve : impl_->incoming).push_back(std::move(b));
  }
  if (resolve) {
    impl_->resolver_cv.notify_one();
  } else {
    impl_->wake();
  }
  return id;
}

void engine::cancel(uint64_t run) {
  {
    std::lock_guard<std::mutex> guard{impl_->mu};
    auto it = impl_->runs.find(run);
    auto b = it == impl_->runs.end() ? nullptr : it->second.lock();
    if (!b) {
      return; // ended already
    }
    b->cancelled = true;
    impl_->cancel_requested = true;
  }
  impl_->wake();
}

engine_stats engine::stats() const {
  return {impl_->connects.load(), impl_->reuses.load(), impl_->pooled.load()};
}

void engine::clear_pool() {
  {
    std::lock_guard<std::mutex> guard{impl_->mu};
    impl_->clear_requested = true;
  }
  impl_->wake();
}

} // namespace cws::ssh
