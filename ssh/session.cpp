#include "ssh/session.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "base/node_errc.hpp"

namespace cws::ssh {

using base::node_errc;

namespace {

using clock = std::chrono::steady_clock;

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

/// The marker line a command without a pty starts with: the remote shell's pid, which is its
/// process group (sshd makes every session's shell a session leader).
constexpr const char marker[] = "\036cws-pid:";
constexpr size_t marker_max = 32; // the marker, a pid and the newline

/// `data` in base64 without padding, as OpenSSH prints key fingerprints.
std::string base64_unpadded(const unsigned char* data, size_t n) {
  static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = static_cast<uint32_t>(data[i]) << 16;
    v |= i + 1 < n ? static_cast<uint32_t>(data[i + 1]) << 8 : 0;
    v |= i + 2 < n ? static_cast<uint32_t>(data[i + 2]) : 0;
    size_t chars = std::min<size_t>(4, (n - i) * 4 / 3 + ((n - i) % 3 != 0 ? 1 : 0));
    for (size_t c = 0; c < chars; ++c) {
      out += digits[(v >> (18 - 6 * c)) & 63];
    }
  }
  return out;
}

const char* host_key_type(int type) {
  switch (type) {
    case LIBSSH2_HOSTKEY_TYPE_RSA: return "RSA";
    case LIBSSH2_HOSTKEY_TYPE_DSS: return "DSA";
    case LIBSSH2_HOSTKEY_TYPE_ED25519: return "ED25519";
    default: return "ECDSA";
  }
}

std::string session_error(LIBSSH2_SESSION* s) {
  char* msg = nullptr;
  libssh2_session_last_error(s, &msg, nullptr, 0);
  return msg != nullptr ? msg : "unknown error";
}

} // namespace

session::session(uint64_t id, const job& j, session_context& ctx)
    : id_(id), j_(j), ctx_(ctx), command_(j.command) {
  res_.name = j_.node;
  marker_done_ = wants_pty(); // a pty: closing the channel hangs it up
}

bool session::wants_pty() const noexcept {
  return j_.command_timeout.count() > 0 || ctx_.cfg.force_pty;
}

/// One line of `ssh -v`'s connection trace on the node's stderr (engine_config::trace).
void session::trace(const std::string& line) {
  if (ctx_.cfg.trace) {
    auto l = line + "\n";
    append(1, l.data(), l.size());
  }
}

/// After the handshake: the versions, what the key exchange chose, the server's host key.
void session::trace_handshake(LIBSSH2_SESSION* s) {
  if (!ctx_.cfg.trace) {
    return;
  }
  std::string banner
    = libssh2_session_banner_get(s) != nullptr ? libssh2_session_banner_get(s) : "";
  // SSH-2.0-OpenSSH_9.2p1 Debian-2: the software after the protocol version
  auto dash = banner.find('-', banner.find('-') + 1);
  std::string software = dash == std::string::npos ? banner : banner.substr(dash + 1);
  // ssh -v starts with the software's versions: the node's sshd's, and this engine's
  trace(software + ", libssh2_" + libssh2_version(0) + " (clusterws SSH engine)");
  trace("debug1: Local version string SSH-2.0-libssh2_" + std::string{libssh2_version(0)});
  trace("debug1: Remote protocol version 2.0, remote software version " + software);
  auto method = [&](int m) {
    const char* v = libssh2_session_methods(s, m);
    return std::string{v != nullptr ? v : "none"};
  };
  trace("debug1: kex: algorithm: " + method(LIBSSH2_METHOD_KEX));
  trace("debug1: kex: host key algorithm: " + method(LIBSSH2_METHOD_HOSTKEY));
  trace("debug1: kex: server->client cipher: " + method(LIBSSH2_METHOD_CRYPT_SC) + " MAC: "
        + method(LIBSSH2_METHOD_MAC_SC) + " compression: " + method(LIBSSH2_METHOD_COMP_SC));
  trace("debug1: kex: client->server cipher: " + method(LIBSSH2_METHOD_CRYPT_CS) + " MAC: "
        + method(LIBSSH2_METHOD_MAC_CS) + " compression: " + method(LIBSSH2_METHOD_COMP_CS));
  size_t len = 0;
  int type = 0;
  const char* key = libssh2_session_hostkey(s, &len, &type);
  const char* hash = libssh2_hostkey_hash(s, LIBSSH2_HOSTKEY_HASH_SHA256);
  if (key != nullptr && hash != nullptr) {
    trace(std::string{"debug1: Server host key: "} + host_key_type(type)
          + " SHA256:" + base64_unpadded(reinterpret_cast<const unsigned char*>(hash), 32));
  }
}

session::~session() = default;

void session::start(std::unique_ptr<connection> pooled) {
  if (!pooled) {
    connect_fresh();
    return;
  }
  conn_ = std::move(pooled);
  reused_ = true;
  res_.reused = true;
  trace("debug1: Reusing the authenticated connection to " + j_.node + " port "
        + std::to_string(j_.port) + ".");
  ph_ = phase::open;
  watch(EPOLLIN);
  step();
}

void session::connect_fresh() {
  reused_ = false;
  res_.reused = false;
  ctx_.loop.set_deadline(id_, clock::now() + ctx_.cfg.connect_timeout);
  if (j_.address.empty()) {
    fail(node_errc::resolve,
         "ssh: Could not resolve hostname " + j_.node + ": Name or service not known");
    return;
  }
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, j_.address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(j_.port);
    len = sizeof *v4;
  } else if (inet_pton(AF_INET6, j_.address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(j_.port);
    len = sizeof *v6;
  } else {
    fail(node_errc::resolve, "ssh: invalid address '" + j_.address + "' for " + j_.node);
    return;
  }
  conn_ = std::make_unique<connection>();
  conn_->key = pool_key(j_);
  conn_->fd = ::socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (conn_->fd < 0) {
    fail(node_errc::unreachable, std::string{"ssh: socket: "} + std::strerror(errno));
    return;
  }
  int one = 1;
  setsockopt(conn_->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ph_ = phase::connect;
  trace("debug1: Connecting to " + j_.node + " [" + j_.address + "] port " + std::to_string(j_.port)
        + ".");
  int rc = ::connect(conn_->fd, reinterpret_cast<sockaddr*>(&ss), len);
  if (rc != 0 && errno != EINPROGRESS) {
    connect_failed(errno);
    return;
  }
  watch(EPOLLOUT);
}

void session::connect_failed(int err) {
  std::string prefix
    = "ssh: connect to host " + j_.node + " port " + std::to_string(j_.port) + ": ";
  if (err == ECONNREFUSED) {
    fail(node_errc::refused, prefix + "Connection refused");
  } else if (err == ETIMEDOUT) {
    fail(node_errc::connect_timeout, prefix + "Connection timed out");
  } else {
    fail(node_errc::unreachable, prefix + std::strerror(err));
  }
}

void session::watch(uint32_t events) {
  ctx_.loop.watch(conn_->fd, events, id_);
}

/// libssh2 returned EAGAIN: wait for the direction it is blocked on.
void session::wait_for_session() {
  int dirs = libssh2_session_block_directions(conn_->session);
  uint32_t ev = 0;
  if (dirs & LIBSSH2_SESSION_BLOCK_INBOUND) {
    ev |= EPOLLIN;
  }
  if (dirs & LIBSSH2_SESSION_BLOCK_OUTBOUND) {
    ev |= EPOLLOUT;
  }
  watch(ev == 0 ? EPOLLIN : ev);
}

bool session::start_session() {
  auto* s = libssh2_session_init();
  if (s == nullptr) {
    fail(node_errc::handshake, "ssh: cannot create a session");
    return false;
  }
  conn_->session = s;
  libssh2_session_set_blocking(s, 0);
  // curve25519 first: a cheap key exchange is the biggest lever on fan-out CPU
  prefer(s, LIBSSH2_METHOD_KEX,
         {"curve25519-sha256", "curve25519-sha256@libssh.org", "ecdh-sha2-nistp256",
          "diffie-hellman-group14-sha256"});
  prefer(s, LIBSSH2_METHOD_HOSTKEY,
         {"ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"});
  return true;
}

/// The pooled connection broke before the command started: connect again, once.
bool session::retry_fresh() {
  if (!reused_ || retried_) {
    return false;
  }
  retried_ = true;
  channel_ = nullptr; // freed with the session
  if (conn_ && conn_->fd >= 0) {
    ctx_.loop.unwatch(conn_->fd);
  }
  conn_.reset();
  connect_fresh();
  return true;
}

void session::append(int stream, const char* buf, size_t n) {
  const auto max = ctx_.cfg.output_max;
  size_t room = max - std::min(max, res_.out.size() + res_.err.size());
  auto take = std::min(room, n);
  (stream == 0 ? res_.out : res_.err).append(buf, take);
  if (take < n) {
    res_.truncated = true; // keep reading: an unread window would stall the channel
  }
  if (on_output_ && take > 0) {
    on_output_(stream, buf, take);
  }
}

/// Takes the pid marker off the start of stdout; whatever is not the marker is output.
void session::take_pid_marker(const char* buf, size_t n) {
  head_.append(buf, n);
  auto nl = head_.find('\n');
  const size_t mlen = sizeof marker - 1;
  bool matches
    = head_.compare(0, std::min(head_.size(), mlen), marker, 0, std::min(head_.size(), mlen)) == 0;
  if (matches && nl == std::string::npos && head_.size() < marker_max) {
    return; // not complete yet
  }
  marker_done_ = true;
  std::string rest = std::move(head_);
  if (matches && nl != std::string::npos) {
    remote_pid_ = std::strtol(rest.c_str() + mlen, nullptr, 10);
    rest.erase(0, nl + 1);
  }
  if (!rest.empty()) {
    append(0, rest.data(), rest.size());
  }
}

void session::step() {
  auto* s = conn_ ? conn_->session : nullptr;
  for (;;) {
    switch (ph_) {
      case phase::connect: {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(conn_->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
          connect_failed(err);
          return;
        }
        trace("debug1: Connection established.");
        if (!start_session()) {
          return;
        }
        s = conn_->session;
        ph_ = phase::handshake;
        break;
      }
      case phase::handshake: {
        int rc = libssh2_session_handshake(s, conn_->fd);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          wait_for_session();
          return;
        }
        if (rc != 0) {
          fail(node_errc::handshake,
               "ssh: handshake with " + j_.node + " failed: " + session_error(s));
          return;
        }
        trace_handshake(s);
        if (auto refused = ctx_.hosts.check(s, j_.node, j_.port); !refused.empty()) {
          fail(node_errc::host_key, refused);
          return;
        }
        trace("debug1: Host '" + j_.node + "' host key accepted (known_hosts "
              + ctx_.cfg.known_hosts.string() + ", ssh_host_keys "
              + (ctx_.cfg.host_keys == host_key_policy::strict       ? "strict"
                 : ctx_.cfg.host_keys == host_key_policy::accept_new ? "accept-new"
                                                                     : "off")
              + ").");
        trace("debug1: Authenticating to " + j_.address + ":" + std::to_string(j_.port) + " as '"
              + j_.user + "'");
        trace("debug1: Offering public key: " + j_.private_key.string());
        ph_ = phase::auth;
        break;
      }
      case phase::auth: {
        std::string pub = j_.public_key.empty() ? std::string{} : j_.public_key.string();
        int rc = libssh2_userauth_publickey_fromfile_ex(
          s, j_.user.c_str(), static_cast<unsigned>(j_.user.size()),
          pub.empty() ? nullptr : pub.c_str(), j_.private_key.c_str(), nullptr);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          wait_for_session();
          return;
        }
        if (rc != 0) {
          fail(node_errc::auth, j_.user + "@" + j_.node + ": Permission denied (publickey).");
          return;
        }
        ++ctx_.connects;
        trace("debug1: Authentication succeeded (publickey).");
        trace("Authenticated to " + j_.node + " ([" + j_.address + "]:" + std::to_string(j_.port)
              + ") using \"publickey\".");
        ph_ = phase::open;
        break;
      }
      case phase::copy: {
        auto st = copy_->step();
        if (st == transfer::status::again) {
          wait_for_session();
          return;
        }
        if (st == transfer::status::failed) {
          if (!copy_->untouched() || !retry_fresh()) {
            fail(copy_->error(), copy_->message());
          } else {
            copy_.reset();
          }
          return;
        }
        retried_ = true; // files were written: never copy twice
        command_ = copy_->command(j_.command);
        if (command_.empty()) {
          res_.rc = 0;
          finish(true);
          return;
        }
        ph_ = phase::open;
        break;
      }
      case phase::open: {
        if (j_.copy && !copy_) {
          copy_ = std::make_unique<transfer>(*j_.copy, j_.node, s);
          set_command_deadline();
          ph_ = phase::copy;
          break;
        }
        channel_ = libssh2_channel_open_session(s);
        if (channel_ == nullptr) {
          if (libssh2_session_last_errno(s) == LIBSSH2_ERROR_EAGAIN) {
            wait_for_session();
            return;
          }
          if (!retry_fresh()) {
            fail(node_errc::channel,
                 "ssh: cannot open a channel on " + j_.node + ": " + session_error(s));
          }
          return;
        }
        if (!copy_) {
          set_command_deadline(); // connected: the connect deadline ends
        }
        ph_ = wants_pty() ? phase::pty : phase::exec;
        break;
      }
      case phase::pty: {
        // ECHO off (53), ONLCR off (72): output as the command wrote it
        static const char modes[] = {53, 0, 0, 0, 0, 72, 0, 0, 0, 0, 0};
        int rc
          = libssh2_channel_request_pty_ex(channel_, "dumb", 4, modes, sizeof modes, 200, 24, 0, 0);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          wait_for_session();
          return;
        }
        if (rc != 0) {
          fail(node_errc::channel, "ssh: pty request refused by " + j_.node);
          return;
        }
        trace("debug1: Requested a pseudo-terminal.");
        ph_ = phase::exec;
        break;
      }
      case phase::exec: {
        auto sent = marker_done_ ? command_ : "printf '\\036cws-pid:%d\\n' $$; " + command_;
        int rc = libssh2_channel_exec(channel_, sent.c_str());
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          wait_for_session();
          return;
        }
        if (rc != 0) {
          if (!retry_fresh()) {
            fail(node_errc::channel,
                 "ssh: cannot run the command on " + j_.node + ": " + session_error(s));
          }
          return;
        }
        retried_ = true; // the command may have started: never run it twice
        trace("debug1: Sending command: " + command_);
        ph_ = phase::read;
        break;
      }
      case phase::read: {
        char buf[32768];
        bool progressed = false;
        for (int stream = 0; stream < 2; ++stream) {
          ssize_t n = libssh2_channel_read_ex(channel_, stream, buf, sizeof buf);
          if (n > 0) {
            if (stream == 0 && !marker_done_) {
              take_pid_marker(buf, static_cast<size_t>(n));
              if (marker_done_ && cancel_pending_) {
                start_kill(); // the pid a cancel waited for is known now
                return;
              }
            } else {
              append(stream, buf, static_cast<size_t>(n));
            }
            progressed = true;
          } else if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
            fail(node_errc::disconnected,
                 "ssh: connection to " + j_.node + " lost: " + session_error(s));
            return;
          }
        }
        if (progressed) {
          break;
        }
        if (libssh2_channel_eof(channel_) != 0) {
          if (cancel_pending_) {
            fail(node_errc::cancelled, base::node_message::cancelled);
            return;
          }
          if (!marker_done_) { // output shorter than a marker: it was output
            marker_done_ = true;
            std::string rest = std::move(head_);
            append(0, rest.data(), rest.size());
          }
          ph_ = phase::close;
          break;
        }
        wait_for_session();
        return;
      }
      case phase::close: {
        int rc = libssh2_channel_close(channel_);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          wait_for_session();
          return;
        }
        ph_ = phase::wait_closed;
        break;
      }
      case phase::wait_closed: {
        int rc = libssh2_channel_wait_closed(channel_);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          wait_for_session();
          return;
        }
        res_.rc = libssh2_channel_get_exit_status(channel_);
        char* sig = nullptr;
        size_t siglen = 0;
        libssh2_channel_get_exit_signal(channel_, &sig, &siglen, nullptr, nullptr, nullptr,
                                        nullptr);
        if (sig != nullptr) {
          res_.rc = -1;
          res_.error = to_string(node_errc::signal);
          res_.message
            = "the command on " + j_.node + " was ended by signal " + std::string{sig, siglen};
          libssh2_free(s, sig);
        }
        trace("debug1: Exit status " + std::to_string(res_.rc));
        libssh2_channel_free(channel_);
        channel_ = nullptr;
        finish(true);
        return;
      }
      case phase::kill_open:
      case phase::kill_exec:
      case phase::kill_wait:
        if (!step_kill(s)) {
          return;
        }
        break;
    }
  }
}

void session::cancel() {
  if (ph_ >= phase::kill_open || cancel_pending_) {
    return; // hanging up already
  }
  ctx_.loop.set_deadline(id_, clock::now() + ctx_.cfg.connect_timeout);
  if (ph_ == phase::read && !marker_done_) {
    // the command runs, but its pid marker (its first output) has not been read yet: wait
    // for it, within the connect timeout, rather than leave a pty-less command running
    cancel_pending_ = true;
    step();
    return;
  }
  start_kill();
}

/// Ends the running command's process group over a second channel, or, without its pid
/// (no command yet, or a pty: closing hangs it up), ends the job at once.
void session::start_kill() {
  cancel_pending_ = false;
  if (ph_ != phase::read || remote_pid_ <= 1) {
    fail(node_errc::cancelled, base::node_message::cancelled);
    return;
  }
  ph_ = phase::kill_open;
  step();
}

/// One step of cancel's second channel. @returns false when it waits or has ended the job.
bool session::step_kill(LIBSSH2_SESSION* s) {
  if (ph_ == phase::kill_open) {
    kill_channel_ = libssh2_channel_open_session(s);
    if (kill_channel_ == nullptr) {
      if (libssh2_session_last_errno(s) == LIBSSH2_ERROR_EAGAIN) {
        wait_for_session();
      } else {
        fail(node_errc::cancelled, base::node_message::cancelled_may_run);
      }
      return false;
    }
    ph_ = phase::kill_exec;
  }
  if (ph_ == phase::kill_exec) {
    auto pid = std::to_string(remote_pid_);
    // `-PID` after the signal is the group in every shell's kill; dash (Debian's sh, a
    // user's login shell) refuses `--` ("Illegal number"), and the fallback to the shell
    // alone then left its children running
    auto cmd = "kill -HUP -" + pid + " 2>/dev/null || kill -HUP -- -" + pid
               + " 2>/dev/null || kill -HUP " + pid;
    int rc = libssh2_channel_exec(kill_channel_, cmd.c_str());
    if (rc == LIBSSH2_ERROR_EAGAIN) {
      wait_for_session();
      return false;
    }
    if (rc != 0) {
      fail(node_errc::cancelled, base::node_message::cancelled_may_run);
      return false;
    }
    ph_ = phase::kill_wait;
  }
  // kill_wait: until `kill` has run; the command's own channel is read and dropped meanwhile
  char buf[16384];
  for (int i = 0; i < 64; ++i) { // bounded: a command may write faster than this reads
    bool more = libssh2_channel_read_ex(channel_, 0, buf, sizeof buf) > 0;
    more = libssh2_channel_read_ex(channel_, 1, buf, sizeof buf) > 0 || more;
    more = libssh2_channel_read_ex(kill_channel_, 0, buf, sizeof buf) > 0 || more;
    if (!more) {
      break;
    }
  }
  if (libssh2_channel_eof(kill_channel_) == 0) {
    wait_for_session();
    return false;
  }
  fail(node_errc::cancelled, base::node_message::cancelled);
  return false;
}

/// The command's deadline (if any) replaces the connect deadline; with a copy it covers the
/// copy too.
void session::set_command_deadline() {
  if (j_.command_timeout.count() > 0) {
    ctx_.loop.set_deadline(id_, clock::now() + j_.command_timeout);
  } else {
    ctx_.loop.clear_deadline(id_);
  }
}

void session::fail(node_errc code, std::string_view message) {
  res_.error = to_string(code);
  res_.message = message;
  finish(false);
}

void session::time_out() {
  if (ph_ >= phase::kill_open || cancel_pending_) {
    fail(node_errc::cancelled, base::node_message::cancelled_may_run);
  } else if (ph_ <= phase::auth) {
    fail(node_errc::connect_timeout, "ssh: connect to host " + j_.node + " port "
                                       + std::to_string(j_.port) + ": Connection timed out");
  } else {
    // closing the connection hangs up the command's pty: the node ends it (SIGHUP)
    fail(node_errc::timeout,
         "Timed out waiting for response from " + j_.node + ". The command was terminated.");
  }
}

void session::finish(bool keep_connection) {
  if (conn_ && conn_->fd >= 0) {
    ctx_.loop.unwatch(conn_->fd);
  }
  ctx_.loop.clear_deadline(id_);
  if (!keep_connection) {
    channel_ = nullptr; // freed with the session
    kill_channel_ = nullptr;
    conn_.reset();
  }
  done_ = true;
}

} // namespace cws::ssh
