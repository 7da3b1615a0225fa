#include "http/local_listener.hpp"

#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "base/log.hpp"
#include "http/session.ipp" // basic_session<unix_stream>, instantiated here as it is used

namespace cws::http {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& why) {
  throw std::runtime_error("local socket " + path.string() + ": " + why);
}

std::string errno_text(int e) {
  return std::strerror(e);
}

/// The socket's directory: made 0755 if missing; else it must be a real directory of this
/// user (or root) that nobody else can write to, or someone could put their own socket there.
void check_directory(const std::filesystem::path& path) {
  auto dir = path.parent_path();
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      fail(path, "cannot create " + dir.string() + ": " + ec.message());
    }
    ::chmod(dir.c_str(), 0755);
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    fail(path, "cannot read " + dir.string() + ": " + errno_text(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    fail(path, dir.string() + " is not a directory");
  }
  if ((st.st_uid != ::geteuid() && st.st_uid != 0) || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    fail(path, dir.string()
                 + " may be written by other users: the socket needs a directory only its owner "
                   "can change");
  }
}

/// A file left at `path`: a socket nobody accepts on (a crashed daemon's) is removed; a live
/// one or anything that is not a socket is refused.
void clear_stale(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return;
    }
    fail(path, errno_text(errno));
  }
  if (!S_ISSOCK(st.st_mode)) {
    fail(path, "exists and is not a socket; remove it or set local_socket");
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    fail(path, errno_text(errno));
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  int e = errno;
  ::close(fd);
  if (rc == 0) {
    fail(path, "another clusterwsd is listening there");
  }
  if (e != ECONNREFUSED) {
    fail(path, "cannot tell whether it is in use: " + errno_text(e));
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    fail(path, "cannot remove the stale socket: " + errno_text(errno));
  }
  base::log(base::log_level::notice, "removed the stale local socket " + path.string());
}

} // namespace

namespace {

/// The peer's uid (SO_PEERCRED), if the kernel names one.
std::optional<uid_t> peer_uid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
    return std::nullopt;
  }
  return cred.uid;
}

} // namespace

std::string peer_user_name(int fd) {
  auto uid = peer_uid(fd);
  if (!uid) {
    return {};
  }
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(*uid, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return {};
  }
  return pw.pw_name;
}

local_listener::local_listener(std::vector<net::io_context*> iocs, std::filesystem::path path,
                               std::shared_ptr<session_context> ctx)
    : iocs_(std::move(iocs)), path_(std::move(path)), acceptor_(iocs_.front()->get_executor()),
      ctx_(std::move(ctx)) {
  if (path_.empty() || path_.is_relative()) {
    fail(path_, "local_socket must be an absolute path");
  }
  if (path_.native().size() >= sizeof(sockaddr_un{}.sun_path)) {
    fail(path_, "the path is longer than a Unix socket address may be");
  }
  check_directory(path_);
  clear_stale(path_);
  beast::error_code ec;
  acceptor_.open(unix_protocol{}, ec);
  if (!ec) {
    acceptor_.bind(unix_protocol::endpoint{path_.string()}, ec);
  }
  if (ec) {
    fail(path_, ec.message());
  }
  made_ = true;
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }
  // anyone may connect: the kernel names the caller and policy decides what they may do
  if (::chmod(path_.c_str(), 0666) != 0) {
    auto why = errno_text(errno);
    remove_socket();
    fail(path_, "cannot set its mode: " + why);
  }
  acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    remove_socket();
    fail(path_, ec.message());
  }
}

local_listener::~local_listener() {
  remove_socket();
}

void local_listener::run() {
  do_accept();
}

void local_listener::stop() {
  net::post(acceptor_.get_executor(), [self = shared_from_this()] {
    beast::error_code ignored;
    self->acceptor_.close(ignored);
    self->remove_socket();
  });
}

void local_listener::remove_socket() noexcept {
  if (!made_) {
    return;
  }
  made_ = false;
  // only ours: a daemon started since may have put its own socket there
  struct stat st {};
  if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_) {
    ::unlink(path_.c_str());
  }
}

void local_listener::do_accept() {
  auto& ioc = *iocs_[next_++ % iocs_.size()];
  acceptor_.async_accept(ioc.get_executor(),
                         beast::bind_front_handler(&local_listener::on_accept, shared_from_this()));
}

void local_listener::on_accept(beast::error_code ec, unix_socket socket) {
  if (ec == net::error::operation_aborted || !acceptor_.is_open()) {
    return;
  }
  if (!ec) {
    // a budget of its own, apart from the HTTPS port's, and a share of it per uid: one
    // local user holding connections locks out neither the others nor HTTPS clients
    auto uid = peer_uid(socket.native_handle());
    auto key = uid ? "uid " + std::to_string(*uid) : std::string{"uid ?"};
    if (ctx_->local_connections.load() >= ctx_->cfg.local_max_connections
        || !ctx_->peers.take(key, ctx_->cfg.local_max_connections_per_user)) {
      beast::error_code ignored;
      socket.close(ignored);
      ctx_->mon.refused_connections.add();
    } else {
      // (a name service lookup: cached by nscd/sssd on a cluster's head node)
      auto user = peer_user_name(socket.native_handle());
      auto s = std::make_shared<basic_session<unix_stream>>(unix_stream{std::move(socket)}, ctx_,
                                                            std::move(user));
      s->count_peer(std::move(key));
      s->run();
    }
  }
  do_accept();
}

} // namespace cws::http
