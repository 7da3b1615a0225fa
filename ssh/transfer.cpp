#include "ssh/transfer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <optional>
#include <string_view>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace cws::ssh {

namespace {

/// A mkdir failed because the directory is there: OpenSSH answers plain "failure".
bool exists_already(LIBSSH2_SFTP* sftp, int rc) {
  return rc == LIBSSH2_ERROR_SFTP_PROTOCOL
         && (libssh2_sftp_last_error(sftp) == LIBSSH2_FX_FAILURE
             || libssh2_sftp_last_error(sftp) == LIBSSH2_FX_FILE_ALREADY_EXISTS);
}

/// Eight random hex digits: temporary names never collide, even between nodes that share a
/// file system.
std::string random_suffix() {
  unsigned char b[4] = {};
  if (getrandom(b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) {
    static unsigned counter = 0;
    std::memcpy(b, &++counter, sizeof b);
  }
  static const char hex[] = "0123456789abcdef";
  std::string s;
  for (auto c : b) {
    s += hex[c >> 4];
    s += hex[c & 15];
  }
  return s;
}

/// The words OpenSSH's scp prints for an SFTP status.
const char* status_text(unsigned long code) {
  switch (code) {
    case LIBSSH2_FX_NO_SUCH_FILE:
    case LIBSSH2_FX_NO_SUCH_PATH: return "No such file or directory";
    case LIBSSH2_FX_PERMISSION_DENIED: return "Permission denied";
    case LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM: return "No space left on device";
    case LIBSSH2_FX_QUOTA_EXCEEDED: return "Disk quota exceeded";
    case LIBSSH2_FX_FILE_ALREADY_EXISTS: return "File exists";
    case LIBSSH2_FX_WRITE_PROTECT: return "Read-only file system";
    case LIBSSH2_FX_NOT_A_DIRECTORY: return "Not a directory";
    case LIBSSH2_FX_OP_UNSUPPORTED: return "Operation unsupported";
    default: return "Failure";
  }
}

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) {
    return ".";
  }
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty()) {
    return name;
  }
  return dir.back() == '/' ? dir + name : dir + '/' + name;
}

/// Most bytes of an exec step's stdout or stderr kept (its answer, or its error's words).
constexpr size_t exec_output_max = 64 * 1024;

/// `seconds` as touch -t's `CCYYMMDDhhmm.SS`, in UTC (the command sets TZ=UTC0): POSIX, so
/// busybox's touch takes it too, where `-d @N` is GNU's.
std::string touch_time(long long seconds) {
  auto t = static_cast<time_t>(seconds);
  tm u{};
  gmtime_r(&t, &u);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d%02d%02d%02d%02d.%02d", u.tm_year + 1900, u.tm_mon + 1,
                u.tm_mday, u.tm_hour, u.tm_min, u.tm_sec);
  return buf;
}

std::string octal(unsigned mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

/// What libssh2 leaves in the attributes when a listing ends: an entry always overwrites
/// them, so a zero-length name that is an entry (a hostile server's) is told from the end.
constexpr unsigned long no_entry = ~0UL;

} // namespace

source_file::~source_file() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

unsigned pulled_mode(unsigned long remote, bool directory) {
  auto mode = static_cast<unsigned>(remote & 0777);
  return directory ? mode & ~0002u : mode;
}

std::string shell_quote(const std::string& text) {
  std::string q = "'";
  for (char c : text) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

transfer::transfer(const copy_spec& spec, std::string node, LIBSSH2_SESSION* s)
    : spec_(spec), node_(std::move(node)), s_(s) {
  // nop
}

transfer::~transfer() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
  std::error_code ec;
  if (!local_tmp_.empty()) {
    std::filesystem::remove(local_tmp_, ec);
  }
  if (!tree_tmp_.empty()) {
    std::filesystem::remove_all(tree_tmp_, ec);
  }
  // An SFTP subsystem still open (the job failed on the connection) goes with the session.
}

transfer::status transfer::fail(const std::string& what, int rc) {
  if (rc != 0 && rc != LIBSSH2_ERROR_SFTP_PROTOCOL) {
    char* msg = nullptr;
    libssh2_session_last_error(s_, &msg, nullptr, 0);
    error_ = base::node_errc::disconnected;
    message_ = "ssh: connection to " + node_ + " lost: " + (msg != nullptr ? msg : "?");
    failed_ = true;
    ph_ = phase::finished; // the connection is gone: nothing can be cleaned up on the node
    return status::failed;
  }
  if (!failed_) {
    error_ = base::node_errc::copy;
    message_ = what;
    failed_ = true;
  }
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  std::error_code ec;
  if (!local_tmp_.empty()) {
    std::filesystem::remove(local_tmp_, ec);
    local_tmp_.clear();
  }
  if (!tree_tmp_.empty()) {
    std::filesystem::remove_all(tree_tmp_, ec); // a pulled tree comes whole or not at all
    tree_tmp_.clear();
  }
  unlink_ = 0;
  if (exec_) {
    // a push whose input failed half way: its `cat` gets EOF and ends before the temporaries
    // are removed (else it could create its file after the `rm`); a pull's channel goes with
    // the connection, which the failed job closes (its cleanup is local)
    xdrain_ = ch_ != nullptr && spec_.pull.empty();
    if (xdrain_ && xs_ == xstage::input) {
      xs_ = xstage::eof;
    }
    if (!xdrain_) {
      ch_ = nullptr;
      xrunning_ = false;
    }
    ph_ = phase::x_cleanup;
    return step();
  }
  ph_ = handle_ != nullptr ? phase::cleanup_close : phase::cleanup_unlink;
  return step();
}

transfer::status transfer::sftp_fail(const std::string& what) {
  int rc = libssh2_session_last_errno(s_);
  if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL && sftp_ != nullptr) {
    return fail(what + ": " + status_text(libssh2_sftp_last_error(sftp_)), rc);
  }
  return fail(what, rc == 0 ? LIBSSH2_ERROR_SOCKET_RECV : rc);
}

std::string transfer::final_path(const copy_file& f) const {
  const auto& g = spec_.push[group_];
  if (target_dir_) {
    return join(g.target, f.name);
  }
  auto slash = f.name.find('/');
  return g.target + (slash == std::string::npos ? std::string{} : f.name.substr(slash));
}

bool transfer::refill(int fd) {
  while (!eof_ && buf_.size() < spec_.chunk) {
    auto have = buf_.size();
    buf_.resize(spec_.chunk);
    // every node reads the one descriptor at its own offset
    auto n = ::pread(fd, &buf_[have], spec_.chunk - have, static_cast<off_t>(read_));
    buf_.resize(have + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    eof_ = n == 0;
    read_ += static_cast<uint64_t>(n);
  }
  return true;
}

transfer::status transfer::step() {
  if (ph_ == phase::init) {
    sftp_ = libssh2_sftp_init(s_);
    if (sftp_ == nullptr) {
      if (libssh2_session_last_errno(s_) == LIBSSH2_ERROR_EAGAIN) {
        return status::again;
      }
      int rc = libssh2_session_last_errno(s_);
      if ((rc == LIBSSH2_ERROR_CHANNEL_FAILURE || rc == LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED)
          && !spec_.pull_tree) {
        // the node's sshd has no SFTP subsystem: the copy goes over exec channels
        exec_ = true;
        ph_ = !spec_.pull.empty()  ? (spec_.preserve ? phase::x_pull_stat : phase::x_pull)
              : spec_.push.empty() ? phase::finished
                                   : phase::x_stat;
        return exec_step();
      }
      char* msg = nullptr;
      libssh2_session_last_error(s_, &msg, nullptr, 0);
      error_
        = rc == LIBSSH2_ERROR_CHANNEL_FAILURE ? base::node_errc::channel : base::node_errc::copy;
      message_ = "ssh: cannot start SFTP on " + node_ + ": " + (msg != nullptr ? msg : "?")
                 + (spec_.pull_tree ? " (a pulled directory needs the node's SFTP subsystem)" : "");
      failed_ = true;
      ph_ = phase::finished;
      return status::failed;
    }
    started_ = true;
    ph_ = !spec_.pull.empty()  ? (spec_.pull_tree ? phase::pull_root : phase::pull_open)
          : spec_.push.empty() ? phase::shutdown
                               : phase::stat_target;
  }
  if (exec_) {
    return exec_step();
  }
  for (;;) {
    handoff_ = false;
    auto st = spec_.pull.empty() ? push_step() : pull_step();
    if (!handoff_) {
      return st;
    }
  }
}

transfer::status transfer::push_step() {
  for (;;) {
    switch (ph_) {
      case phase::stat_target: {
        const auto& g = spec_.push[group_];
        LIBSSH2_SFTP_ATTRIBUTES a{};
        int rc = libssh2_sftp_stat_ex(
          sftp_, g.target.c_str(), static_cast<unsigned>(g.target.size()), LIBSSH2_SFTP_STAT, &a);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        bool exists = rc == 0;
        if (rc != 0) {
          bool missing = rc == LIBSSH2_ERROR_SFTP_PROTOCOL
                         && (libssh2_sftp_last_error(sftp_) == LIBSSH2_FX_NO_SUCH_FILE
                             || libssh2_sftp_last_error(sftp_) == LIBSSH2_FX_NO_SUCH_PATH);
          if (!missing) {
            return sftp_fail(g.target);
          }
        }
        target_dir_ = exists && LIBSSH2_SFTP_S_ISDIR(a.permissions);
        size_t roots = static_cast<size_t>(
          std::count_if(g.files.begin(), g.files.end(),
                        [](const copy_file& f) { return f.name.find('/') == std::string::npos; }));
        if (exists && !target_dir_ && (g.into || roots > 1 || g.files.front().directory)) {
          return fail(g.target + ": Not a directory", LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        file_ = 0;
        ph_ = !exists && g.into ? phase::make_target : phase::next_file;
        break;
      }
      case phase::make_target: {
        const auto& g = spec_.push[group_];
        int rc = libssh2_sftp_mkdir_ex(sftp_, g.target.c_str(),
                                       static_cast<unsigned>(g.target.size()), 0755);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        // made meanwhile by someone else (another node on a shared file system): fine
        if (rc != 0 && !exists_already(sftp_, rc)) {
          return sftp_fail(g.target);
        }
        target_dir_ = true;
        ph_ = phase::next_file;
        break;
      }
      case phase::next_file: {
        const auto& g = spec_.push[group_];
        if (file_ == g.files.size()) {
          ph_ = ++group_ == spec_.push.size() ? phase::shutdown : phase::stat_target;
          break;
        }
        ph_ = g.files[file_].directory ? phase::mkdir : phase::open;
        break;
      }
      case phase::mkdir: {
        const auto& f = spec_.push[group_].files[file_];
        auto path = final_path(f);
        int rc
          = libssh2_sftp_mkdir_ex(sftp_, path.c_str(), static_cast<unsigned>(path.size()), f.mode);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        // OpenSSH answers "failure" for a directory that exists: that is fine (scp -r too)
        if (rc != 0 && !exists_already(sftp_, rc)) {
          return sftp_fail(path);
        }
        ++file_;
        ph_ = phase::next_file;
        break;
      }
      case phase::open: {
        const auto& f = spec_.push[group_].files[file_];
        auto path = final_path(f);
        if (tmp_.empty()) {
          tmp_ = join(parent_of(path), "." + base_of(path) + ".cws-" + random_suffix());
        }
        handle_ = libssh2_sftp_open_ex(sftp_, tmp_.c_str(), static_cast<unsigned>(tmp_.size()),
                                       LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_EXCL
                                         | LIBSSH2_FXF_TRUNC,
                                       static_cast<long>(f.mode), LIBSSH2_SFTP_OPENFILE);
        if (handle_ == nullptr) {
          if (libssh2_session_last_errno(s_) == LIBSSH2_ERROR_EAGAIN) {
            return status::again;
          }
          tmp_.clear();
          return sftp_fail(path);
        }
        renames_.emplace_back(std::move(tmp_), std::move(path));
        tmp_.clear();
        sent_ = 0;
        read_ = 0;
        buf_.clear();
        eof_ = false;
        if (!f.data && !f.source) {
          return fail(f.local.string() + ": not opened", LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        ph_ = phase::write;
        break;
      }
      case phase::write: {
        const auto& f = spec_.push[group_].files[file_];
        const char* p = nullptr;
        size_t n = 0;
        if (f.data) {
          p = f.data->data() + sent_;
          n = std::min<size_t>(spec_.chunk, f.data->size() - sent_);
        } else {
          if (!refill(f.source->fd())) {
            return fail(f.local.string() + ": " + std::strerror(errno),
                        LIBSSH2_ERROR_SFTP_PROTOCOL);
          }
          p = buf_.data();
          n = buf_.size();
        }
        if (n == 0) {
          ph_ = f.mtime >= 0 ? phase::setstat : phase::close;
          break;
        }
        auto rc = libssh2_sftp_write(handle_, p, n);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        if (rc < 0) {
          return sftp_fail(renames_.back().second);
        }
        sent_ += static_cast<uint64_t>(rc);
        if (!f.data) {
          buf_.erase(0, static_cast<size_t>(rc));
        }
        break;
      }
      case phase::setstat: {
        const auto& f = spec_.push[group_].files[file_];
        LIBSSH2_SFTP_ATTRIBUTES a{};
        a.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS | LIBSSH2_SFTP_ATTR_ACMODTIME;
        a.permissions = f.mode;
        a.atime = static_cast<unsigned long>(f.atime);
        a.mtime = static_cast<unsigned long>(f.mtime);
        int rc = libssh2_sftp_fstat_ex(handle_, &a, 1);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        if (rc != 0) {
          return sftp_fail(renames_.back().second);
        }
        ph_ = phase::close;
        break;
      }
      case phase::close: {
        int rc = libssh2_sftp_close_handle(handle_);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        handle_ = nullptr;
        if (fd_ >= 0) {
          ::close(fd_);
          fd_ = -1;
        }
        if (rc != 0) {
          return sftp_fail(renames_.back().second);
        }
        ++file_;
        ph_ = phase::next_file;
        break;
      }
      case phase::cleanup_close: {
        if (libssh2_sftp_close_handle(handle_) == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        handle_ = nullptr;
        ph_ = spec_.pull.empty() ? phase::cleanup_unlink : phase::shutdown;
        break;
      }
      case phase::cleanup_unlink: {
        if (unlink_ == renames_.size()) {
          ph_ = phase::shutdown;
          break;
        }
        const auto& tmp = renames_[unlink_].first;
        int rc = libssh2_sftp_unlink_ex(sftp_, tmp.c_str(), static_cast<unsigned>(tmp.size()));
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        ++unlink_;
        break;
      }
      case phase::shutdown: {
        if (libssh2_sftp_shutdown(sftp_) == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        sftp_ = nullptr;
        ph_ = phase::finished;
        break;
      }
      case phase::finished: return failed_ ? status::failed : status::done;
      default: return pull_step();
    }
  }
}

transfer::status transfer::pull_step() {
  for (;;) {
    switch (ph_) {
      case phase::pull_open: {
        if (remote_.empty()) {
          remote_ = spec_.pull;
        }
        handle_
          = libssh2_sftp_open_ex(sftp_, remote_.c_str(), static_cast<unsigned>(remote_.size()),
                                 LIBSSH2_FXF_READ, 0, LIBSSH2_SFTP_OPENFILE);
        if (handle_ == nullptr) {
          if (libssh2_session_last_errno(s_) == LIBSSH2_ERROR_EAGAIN) {
            return status::again;
          }
          return sftp_fail(remote_);
        }
        auto target = local_final_;
        if (tree_tmp_.empty()) {
          local_final_ = spec_.pull_dir / (base_of(spec_.pull) + "._" + node_);
          local_tmp_ = local_final_;
          local_tmp_ += ".cws-" + random_suffix();
          target = local_tmp_;
        }
        // in a tree, local_final_ is inside the temporary directory, made by this job: never
        // an existing file, never through a link
        fd_ = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd_ < 0) {
          auto why = std::string{std::strerror(errno)};
          local_tmp_.clear();
          return fail(local_final_.string() + ": " + why, LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        ph_ = spec_.preserve && tree_tmp_.empty() ? phase::pull_stat : phase::pull_read;
        break;
      }
      case phase::pull_stat: {
        int rc = libssh2_sftp_fstat_ex(handle_, &attrs_, 0);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        if (rc != 0) {
          return sftp_fail(remote_);
        }
        ph_ = phase::pull_read;
        break;
      }
      case phase::pull_read: {
        buf_.resize(spec_.chunk);
        auto n = libssh2_sftp_read(handle_, &buf_[0], buf_.size());
        if (n == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        if (n < 0) {
          return sftp_fail(remote_);
        }
        if (n == 0) {
          ph_ = phase::pull_close;
          break;
        }
        if (auto st = pull_write(n); failed_) {
          return st;
        }
        break;
      }
      case phase::pull_close: {
        if (libssh2_sftp_close_handle(handle_) == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        handle_ = nullptr;
        if (spec_.preserve) {
          if (attrs_.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) {
            ::fchmod(fd_, static_cast<mode_t>(pulled_mode(attrs_.permissions, false)));
          }
          if (attrs_.flags & LIBSSH2_SFTP_ATTR_ACMODTIME) {
            timespec t[2]
              = {{static_cast<time_t>(attrs_.atime), 0}, {static_cast<time_t>(attrs_.mtime), 0}};
            ::futimens(fd_, t);
          }
        }
        bool ok = ::close(fd_) == 0;
        fd_ = -1;
        if (!tree_tmp_.empty()) {
          if (!ok) {
            return fail(local_final_.string() + ": " + std::strerror(errno),
                        LIBSSH2_ERROR_SFTP_PROTOCOL);
          }
          ph_ = phase::tree_next;
          break;
        }
        std::error_code ec;
        if (ok) {
          std::filesystem::rename(local_tmp_, local_final_, ec);
        }
        if (!ok || ec) {
          return fail(local_final_.string() + ": "
                        + (ec ? ec.message() : std::string{std::strerror(errno)}),
                      LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        local_tmp_.clear();
        ph_ = phase::shutdown;
        break;
      }
      case phase::pull_root:
      case phase::tree_opendir:
      case phase::tree_readdir:
      case phase::tree_closedir:
      case phase::tree_next:
      case phase::tree_readlink: {
        auto st = tree_step();
        if (!handoff_) {
          return st;
        }
        handoff_ = false;
        break; // back in a pull phase
      }
      default: return push_step();
    }
  }
}

transfer::status transfer::tree_step() {
  for (;;) {
    switch (ph_) {
      case phase::pull_root: {
        int rc = libssh2_sftp_stat_ex(sftp_, spec_.pull.c_str(),
                                      static_cast<unsigned>(spec_.pull.size()), LIBSSH2_SFTP_STAT,
                                      &attrs_);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        if (rc != 0) {
          return sftp_fail(spec_.pull);
        }
        if (!LIBSSH2_SFTP_S_ISDIR(attrs_.permissions)) {
          ph_ = phase::pull_open; // a file: as without -R
          handoff_ = true;
          return status::again;
        }
        // built under a temporary name nobody else reads (0700 until done), swapped in whole
        auto final_name = base_of(spec_.pull) + "._" + node_;
        tree_tmp_ = spec_.pull_dir / (final_name + ".cws-" + random_suffix());
        if (::mkdir(tree_tmp_.c_str(), 0700) != 0) {
          auto why = std::string{std::strerror(errno)};
          tree_tmp_.clear();
          return fail((spec_.pull_dir / final_name).string() + ": " + why,
                      LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        tree_dirs_.push_back({"", attrs_});
        tree_dir_.clear();
        ph_ = phase::tree_opendir;
        break;
      }
      case phase::tree_opendir: {
        remote_ = tree_dir_.empty() ? spec_.pull : join(spec_.pull, tree_dir_);
        handle_
          = libssh2_sftp_open_ex(sftp_, remote_.c_str(), static_cast<unsigned>(remote_.size()), 0,
                                 0, LIBSSH2_SFTP_OPENDIR);
        if (handle_ == nullptr) {
          if (libssh2_session_last_errno(s_) == LIBSSH2_ERROR_EAGAIN) {
            return status::again;
          }
          return sftp_fail(remote_);
        }
        dot_seen_ = false;
        dotdot_seen_ = false;
        ph_ = phase::tree_readdir;
        break;
      }
      case phase::tree_readdir: {
        char name[1024];
        LIBSSH2_SFTP_ATTRIBUTES a{};
        a.flags = no_entry;
        int n = libssh2_sftp_readdir_ex(handle_, name, sizeof name, nullptr, 0, &a);
        if (n == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        if (n < 0) {
          return sftp_fail(remote_);
        }
        if (n == 0 && a.flags != no_entry) {
          // an empty name is no name: taken as the end it would cut the tree short silently
          return fail(remote_ + ": the node listed an empty name", LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        if (n == 0) {
          ph_ = phase::tree_closedir;
          break;
        }
        std::string entry{name, static_cast<size_t>(n)};
        bool& seen = entry == "." ? dot_seen_ : dotdot_seen_;
        if ((entry == "." || entry == "..") && !seen) {
          seen = true; // each listing's own `.` and `..` are not entries; repeats are
          break;
        }
        // every entry counts, skipped or not: a listing without end is bounded too
        if (++tree_count_ > spec_.pull_entries_max) {
          return fail(spec_.pull + ": more than " + std::to_string(spec_.pull_entries_max)
                        + " files and directories (copy_files_max)",
                      LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        if (entry == "." || entry == "..") {
          break;
        }
        // a name is one path component: anything else would write outside the tree
        if (entry.find('/') != std::string::npos || entry.find('\0') != std::string::npos) {
          return fail(remote_ + ": the node listed a bad name", LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        if (!(a.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS)) {
          break; // the type is unknown: skipped, as other special files
        }
        auto type = a.permissions & LIBSSH2_SFTP_S_IFMT;
        if (type != LIBSSH2_SFTP_S_IFDIR && type != LIBSSH2_SFTP_S_IFREG
            && type != LIBSSH2_SFTP_S_IFLNK) {
          break; // devices, fifos, sockets: skipped (rsync -r does too)
        }
        tree_entry e{tree_dir_.empty() ? entry : tree_dir_ + "/" + entry, a};
        if (type == LIBSSH2_SFTP_S_IFDIR) {
          // made now so that its entries can be; EEXIST (a name listed twice) is an error:
          // it may be a link made earlier
          auto local = tree_tmp_ / e.rel;
          if (::mkdir(local.c_str(), 0700) != 0) {
            return fail(local.string() + ": " + std::strerror(errno), LIBSSH2_ERROR_SFTP_PROTOCOL);
          }
          tree_dirs_.push_back(e);
        }
        tree_todo_.push_back(std::move(e));
        break;
      }
      case phase::tree_closedir: {
        if (libssh2_sftp_close_handle(handle_) == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        handle_ = nullptr;
        ph_ = phase::tree_next;
        break;
      }
      case phase::tree_next: {
        if (tree_todo_.empty()) {
          return tree_finish();
        }
        auto e = std::move(tree_todo_.back());
        tree_todo_.pop_back();
        auto type = e.attrs.permissions & LIBSSH2_SFTP_S_IFMT;
        remote_ = join(spec_.pull, e.rel);
        local_final_ = tree_tmp_ / e.rel;
        attrs_ = e.attrs;
        if (type == LIBSSH2_SFTP_S_IFDIR) {
          tree_dir_ = std::move(e.rel);
          ph_ = phase::tree_opendir;
        } else if (type == LIBSSH2_SFTP_S_IFLNK) {
          ph_ = phase::tree_readlink;
        } else {
          ph_ = phase::pull_open;
          handoff_ = true;
          return status::again;
        }
        break;
      }
      case phase::tree_readlink: {
        // a link is made as a link, never followed: it may point anywhere on the node
        char target[4096];
        int n
          = libssh2_sftp_symlink_ex(sftp_, remote_.c_str(), static_cast<unsigned>(remote_.size()),
                                    target, sizeof target - 1, LIBSSH2_SFTP_READLINK);
        if (n == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        if (n < 0) {
          return sftp_fail(remote_);
        }
        target[n] = '\0';
        if (::symlink(target, local_final_.c_str()) != 0) {
          return fail(local_final_.string() + ": " + std::strerror(errno),
                      LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        ph_ = phase::tree_next;
        break;
      }
      default: handoff_ = true; return status::again;
    }
  }
}

/// Every entry is fetched: the directories get their modes (and with -p times), deepest
/// first, and the tree replaces `<name>._<node>` in one rename (an exchange if one is there).
transfer::status transfer::tree_finish() {
  for (auto it = tree_dirs_.rbegin(); it != tree_dirs_.rend(); ++it) {
    auto local = it->rel.empty() ? tree_tmp_ : tree_tmp_ / it->rel;
    const auto& a = it->attrs;
    mode_t mode = spec_.preserve && (a.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS)
                    ? static_cast<mode_t>(pulled_mode(a.permissions, true))
                    : 0755;
    if (::chmod(local.c_str(), mode) != 0) {
      return fail(local.string() + ": " + std::strerror(errno), LIBSSH2_ERROR_SFTP_PROTOCOL);
    }
    if (spec_.preserve && (a.flags & LIBSSH2_SFTP_ATTR_ACMODTIME)) {
      timespec t[2] = {{static_cast<time_t>(a.atime), 0}, {static_cast<time_t>(a.mtime), 0}};
      ::utimensat(AT_FDCWD, local.c_str(), t, AT_SYMLINK_NOFOLLOW);
    }
  }
  auto final_path = spec_.pull_dir / (base_of(spec_.pull) + "._" + node_);
  if (::renameat2(AT_FDCWD, tree_tmp_.c_str(), AT_FDCWD, final_path.c_str(), RENAME_NOREPLACE)
      != 0) {
    // an earlier pull is there: swapped atomically, then removed
    if (errno != EEXIST
        || ::renameat2(AT_FDCWD, tree_tmp_.c_str(), AT_FDCWD, final_path.c_str(), RENAME_EXCHANGE)
             != 0) {
      return fail(final_path.string() + ": " + std::strerror(errno), LIBSSH2_ERROR_SFTP_PROTOCOL);
    }
    std::error_code ec;
    std::filesystem::remove_all(tree_tmp_, ec);
  }
  tree_tmp_.clear();
  ph_ = phase::shutdown;
  handoff_ = true;
  return status::again;
}

/// Writes `n` bytes read from the node to the local file, within the pull's limits.
transfer::status transfer::pull_write(ssize_t n) {
  auto bytes = static_cast<uint64_t>(n);
  pulled_ += bytes;
  auto run = spec_.pulled->fetch_add(bytes) + bytes;
  if (pulled_ > spec_.pull_node_max) {
    return fail(remote_ + ": more than " + std::to_string(spec_.pull_node_max)
                  + " bytes from this node (copy_pull_node_max); nothing was kept",
                LIBSSH2_ERROR_SFTP_PROTOCOL);
  }
  if (run > spec_.pull_run_max) {
    return fail(remote_ + ": more than " + std::to_string(spec_.pull_run_max)
                  + " bytes pulled from all nodes (copy_pull_run_max); nothing was kept",
                LIBSSH2_ERROR_SFTP_PROTOCOL);
  }
  struct statvfs fs {};
  if (::fstatvfs(fd_, &fs) == 0
      && static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize < spec_.pull_free_min + bytes) {
    return fail(spec_.pull_dir.string() + ": less than " + std::to_string(spec_.pull_free_min)
                  + " bytes would stay free (copy_pull_free_min); nothing was kept",
                LIBSSH2_ERROR_SFTP_PROTOCOL);
  }
  for (ssize_t off = 0; off < n;) {
    auto w = ::write(fd_, buf_.data() + off, static_cast<size_t>(n - off));
    if (w < 0 && errno != EINTR) {
      return fail(local_final_.string() + ": " + std::strerror(errno), LIBSSH2_ERROR_SFTP_PROTOCOL);
    }
    off += std::max<ssize_t>(w, 0);
  }
  return status::again;
}

void transfer::exec_start(std::string command, const copy_file* input, bool pull) {
  xcmd_ = std::move(command);
  xinput_ = input;
  xpull_ = pull;
  xout_.clear();
  xerr_.clear();
  xrc_ = 0;
  xs_ = xstage::open;
  xrunning_ = true;
  sent_ = 0;
  read_ = 0;
  buf_.clear();
  eof_ = false;
}

/// Drives the exec channel exec_start set up until its exit status is in `xrc_` (`done`).
transfer::status transfer::exec_run() {
  for (;;) {
    switch (xs_) {
      case xstage::open: {
        ch_ = libssh2_channel_open_session(s_);
        if (ch_ == nullptr) {
          int rc = libssh2_session_last_errno(s_);
          if (rc == LIBSSH2_ERROR_EAGAIN) {
            return status::again;
          }
          return fail("ssh: cannot open a channel on " + node_,
                      rc == 0 ? LIBSSH2_ERROR_CHANNEL_FAILURE : rc);
        }
        started_ = true;
        xs_ = xstage::exec;
        break;
      }
      case xstage::exec: {
        int rc = libssh2_channel_exec(ch_, xcmd_.c_str());
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        if (rc != 0) {
          return fail("ssh: cannot run a copy step on " + node_, rc);
        }
        unsigned long initial = 0;
        xwindow0_ = libssh2_channel_window_write_ex(ch_, &initial);
        // OpenSSH acknowledges (adjusts the window) once 3 packets (96 KiB) are consumed, so
        // 256 KiB in flight never stalls; a server that waits for half its window would, so
        // any other one gets its window unpaced
        const char* banner = libssh2_session_banner_get(s_);
        xpace_ = banner != nullptr && std::strstr(banner, "OpenSSH") != nullptr
                   ? std::max<size_t>(spec_.chunk, 256 * 1024)
                   : 0;
        xs_ = xinput_ != nullptr ? xstage::input : xstage::eof;
        break;
      }
      case xstage::input: {
        const auto& f = *xinput_;
        const char* p = nullptr;
        size_t n = 0;
        if (f.data) {
          p = f.data->data() + sent_;
          n = std::min<size_t>(spec_.chunk, f.data->size() - sent_);
        } else {
          if (!f.source) {
            return fail(f.local.string() + ": not opened", LIBSSH2_ERROR_SFTP_PROTOCOL);
          }
          if (!refill(f.source->fd())) {
            return fail(f.local.string() + ": " + std::strerror(errno),
                        LIBSSH2_ERROR_SFTP_PROTOCOL);
          }
          p = buf_.data();
          n = buf_.size();
        }
        if (n == 0) {
          xs_ = xstage::eof;
          break;
        }
        // paced, as SFTP's writes: sshd holding its whole window costs it three times the
        // CPU (docs/performance.md, "xdcp"). libssh2 1.10 does not report the initial window:
        // its first reading is it.
        unsigned long initial = 0;
        auto window = libssh2_channel_window_write_ex(ch_, &initial);
        auto unacked = static_cast<size_t>(xwindow0_ > window ? xwindow0_ - window : 0);
        if (xpace_ != 0 && unacked >= xpace_) {
          char err[1024];
          auto got = libssh2_channel_read_ex(ch_, 1, err, sizeof err); // takes in the adjusts
          if (got > 0) {
            xerr_.append(err, std::min(static_cast<size_t>(got),
                                       exec_output_max - std::min(exec_output_max, xerr_.size())));
            break;
          }
          if (got < 0 && got != LIBSSH2_ERROR_EAGAIN) {
            return fail("", static_cast<int>(got));
          }
          if (libssh2_channel_window_write_ex(ch_, &initial) == window) {
            return status::again; // until sshd acknowledges
          }
          break;
        }
        if (xpace_ != 0) {
          n = std::min(n, xpace_ - unacked);
        }
        auto rc = libssh2_channel_write(ch_, p, n);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        if (rc < 0) {
          return fail("", static_cast<int>(rc));
        }
        sent_ += static_cast<uint64_t>(rc);
        if (!f.data) {
          buf_.erase(0, static_cast<size_t>(rc));
        }
        break;
      }
      case xstage::eof: {
        int rc = libssh2_channel_send_eof(ch_);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        if (rc != 0) {
          return fail("", rc);
        }
        xs_ = xstage::read;
        break;
      }
      case xstage::read: {
        bool progressed = false;
        for (int stream = 0; stream < 2; ++stream) {
          if (xpull_ && stream == 0) {
            buf_.resize(spec_.chunk);
          } else {
            buf_.resize(16384);
          }
          auto n = libssh2_channel_read_ex(ch_, stream, &buf_[0], buf_.size());
          if (n == LIBSSH2_ERROR_EAGAIN || n == 0) {
            continue;
          }
          if (n < 0) {
            return fail("", static_cast<int>(n));
          }
          progressed = true;
          if (xpull_ && stream == 0) {
            if (auto st = pull_write(n); failed_) {
              return st;
            }
            continue;
          }
          auto& keep = stream == 0 ? xout_ : xerr_;
          keep.append(buf_.data(),
                      std::min(static_cast<size_t>(n),
                               exec_output_max - std::min(exec_output_max, keep.size())));
        }
        if (progressed) {
          break;
        }
        if (libssh2_channel_eof(ch_) == 0) {
          return status::again;
        }
        xs_ = xstage::close;
        break;
      }
      case xstage::close: {
        int rc = libssh2_channel_close(ch_);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        xs_ = xstage::wait;
        break;
      }
      case xstage::wait: {
        int rc = libssh2_channel_wait_closed(ch_);
        if (rc == LIBSSH2_ERROR_EAGAIN) {
          return status::again;
        }
        xrc_ = libssh2_channel_get_exit_status(ch_);
        char* sig = nullptr;
        size_t siglen = 0;
        libssh2_channel_get_exit_signal(ch_, &sig, &siglen, nullptr, nullptr, nullptr, nullptr);
        if (sig != nullptr) {
          xrc_ = xrc_ == 0 ? 128 : xrc_;
          libssh2_free(s_, sig);
        }
        libssh2_channel_free(ch_);
        ch_ = nullptr;
        xrunning_ = false;
        return status::done;
      }
    }
  }
}

/// The words of a failed exec step, as SFTP's status words: the end of the last line the
/// node's tools wrote (`mkdir: cannot create directory 'x': Permission denied`).
std::string transfer::exec_why() const {
  auto text = xerr_;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.pop_back();
  }
  text = text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  auto colon = text.rfind(": ");
  if (colon != std::string::npos) {
    text = text.substr(colon + 2);
  }
  return text.empty() ? "Failure (exit status " + std::to_string(xrc_) + ")" : text;
}

/// A pulled file is complete: its mode and times (-p), then renamed into place.
transfer::status transfer::pull_done() {
  if (spec_.preserve) {
    if (attrs_.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) {
      ::fchmod(fd_, static_cast<mode_t>(pulled_mode(attrs_.permissions, false)));
    }
    if (attrs_.flags & LIBSSH2_SFTP_ATTR_ACMODTIME) {
      timespec t[2]
        = {{static_cast<time_t>(attrs_.atime), 0}, {static_cast<time_t>(attrs_.mtime), 0}};
      ::futimens(fd_, t);
    }
  }
  bool ok = ::close(fd_) == 0;
  fd_ = -1;
  std::error_code ec;
  if (ok) {
    std::filesystem::rename(local_tmp_, local_final_, ec);
  }
  if (!ok || ec) {
    return fail(local_final_.string() + ": "
                  + (ec ? ec.message() : std::string{std::strerror(errno)}),
                LIBSSH2_ERROR_SFTP_PROTOCOL);
  }
  local_tmp_.clear();
  ph_ = phase::finished;
  return status::again;
}

/// The copy over exec channels, step by step as push_step and pull_step do it over SFTP.
transfer::status transfer::exec_step() {
  for (;;) {
    auto running = [&](std::string command, const copy_file* input = nullptr,
                       bool pull = false) -> std::optional<status> {
      if (!xrunning_) {
        exec_start(std::move(command), input, pull);
      }
      auto st = exec_run();
      if (st != status::done) {
        return st; // waiting, or failed (the connection)
      }
      return std::nullopt;
    };
    switch (ph_) {
      case phase::x_stat: {
        const auto& g = spec_.push[group_];
        auto t = shell_quote(g.target);
        if (auto st = running("if [ -d " + t + " ]; then echo d; elif [ -e " + t
                              + " ]; then echo f; else echo n; fi")) {
          return *st;
        }
        if (xrc_ != 0 || xout_.empty()) {
          return fail(g.target + ": " + exec_why(), LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        bool exists = xout_[0] != 'n';
        target_dir_ = xout_[0] == 'd';
        size_t roots = static_cast<size_t>(
          std::count_if(g.files.begin(), g.files.end(),
                        [](const copy_file& f) { return f.name.find('/') == std::string::npos; }));
        if (exists && !target_dir_ && (g.into || roots > 1 || g.files.front().directory)) {
          return fail(g.target + ": Not a directory", LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        file_ = 0;
        ph_ = !exists && g.into ? phase::x_make : phase::x_next_file;
        break;
      }
      case phase::x_make: {
        const auto& g = spec_.push[group_];
        auto t = shell_quote(g.target);
        // made meanwhile by someone else (another node on a shared file system): fine
        if (auto st = running("mkdir -m 0755 -- " + t + " || test -d " + t)) {
          return *st;
        }
        if (xrc_ != 0) {
          return fail(g.target + ": " + exec_why(), LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        target_dir_ = true;
        ph_ = phase::x_next_file;
        break;
      }
      case phase::x_next_file: {
        const auto& g = spec_.push[group_];
        if (file_ == g.files.size()) {
          ph_ = ++group_ == spec_.push.size() ? phase::finished : phase::x_stat;
          break;
        }
        ph_ = g.files[file_].directory ? phase::x_mkdir : phase::x_write;
        break;
      }
      case phase::x_mkdir: {
        const auto& f = spec_.push[group_].files[file_];
        auto path = final_path(f);
        auto q = shell_quote(path);
        if (auto st = running("test -d " + q + " || mkdir -m " + octal(f.mode) + " -- " + q)) {
          return *st;
        }
        if (xrc_ != 0) {
          return fail(path + ": " + exec_why(), LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        ++file_;
        ph_ = phase::x_next_file;
        break;
      }
      case phase::x_write: {
        const auto& f = spec_.push[group_].files[file_];
        if (!xrunning_) {
          auto path = final_path(f);
          auto tmp = join(parent_of(path), "." + base_of(path) + ".cws-" + random_suffix());
          auto q = shell_quote(tmp);
          // noclobber: the temporary is a new file (O_EXCL, as the SFTP open); 0600 until
          // it is whole, then its mode (and with -p its times)
          std::string cmd
            = "set -C; umask 077; cat > " + q + " && chmod " + octal(f.mode) + " " + q;
          if (f.mtime >= 0) {
            cmd += " && TZ=UTC0 touch -a -t " + touch_time(f.atime) + " " + q
                   + " && TZ=UTC0 touch -m -t " + touch_time(f.mtime) + " " + q;
          }
          renames_.emplace_back(tmp, path);
          exec_start(cmd, &f);
        }
        if (auto st = running({}, &f)) {
          return *st;
        }
        if (xrc_ != 0) {
          return fail(renames_.back().second + ": " + exec_why(), LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        ++file_;
        ph_ = phase::x_next_file;
        break;
      }
      case phase::x_pull_stat: {
        remote_ = spec_.pull;
        if (auto st = running("stat -L -c '%a %X %Y' -- " + shell_quote(remote_))) {
          return *st;
        }
        unsigned long mode = 0;
        unsigned long long atime = 0;
        unsigned long long mtime = 0;
        if (xrc_ != 0 || std::sscanf(xout_.c_str(), "%lo %llu %llu", &mode, &atime, &mtime) != 3) {
          return fail(remote_ + ": " + exec_why(), LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        attrs_.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS | LIBSSH2_SFTP_ATTR_ACMODTIME;
        attrs_.permissions = mode;
        attrs_.atime = static_cast<unsigned long>(atime);
        attrs_.mtime = static_cast<unsigned long>(mtime);
        ph_ = phase::x_pull;
        break;
      }
      case phase::x_pull: {
        if (!xrunning_) {
          remote_ = spec_.pull;
          local_final_ = spec_.pull_dir / (base_of(spec_.pull) + "._" + node_);
          local_tmp_ = local_final_;
          local_tmp_ += ".cws-" + random_suffix();
          fd_ = ::open(local_tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                       0644);
          if (fd_ < 0) {
            auto why = std::string{std::strerror(errno)};
            local_tmp_.clear();
            return fail(local_final_.string() + ": " + why, LIBSSH2_ERROR_SFTP_PROTOCOL);
          }
          exec_start("cat -- " + shell_quote(remote_), nullptr, true);
        }
        if (auto st = running({}, nullptr, true)) {
          return *st;
        }
        if (xrc_ != 0) {
          return fail(remote_ + ": " + exec_why(), LIBSSH2_ERROR_SFTP_PROTOCOL);
        }
        if (auto st = pull_done(); failed_) {
          return st;
        }
        break;
      }
      case phase::x_cleanup: {
        if (xdrain_) {
          auto st = exec_run();
          if (st != status::done) {
            return st;
          }
          xdrain_ = false;
        }
        if (renames_.empty() || !spec_.pull.empty()) {
          ph_ = phase::finished;
          break;
        }
        std::string cmd = "rm -f --";
        for (const auto& r : renames_) {
          cmd += " " + shell_quote(r.first);
        }
        if (auto st = running(cmd)) {
          return *st;
        }
        ph_ = phase::finished;
        break;
      }
      case phase::finished: return failed_ ? status::failed : status::done;
      default: return fail("ssh: bad copy step", LIBSSH2_ERROR_SFTP_PROTOCOL);
    }
  }
}

std::string transfer::command(const std::string& command) const {
  if (renames_.empty()) {
    return {};
  }
  if (spec_.execute) {
    const auto& script = shell_quote(renames_.front().first);
    std::string run = command;
    auto at = run.find(script_token);
    if (at == std::string::npos) {
      run = script + (command.empty() ? "" : " " + command);
    }
    for (; at != std::string::npos; at = run.find(script_token, at + script.size())) {
      run.replace(at, std::string_view{script_token}.size(), script);
    }
    return run + "; r=$?; rm -f -- " + script + "; exit $r";
  }
  // one command renames every file: `mv -T` never moves a file into a directory of the same
  // name; a failed rename removes its temporary
  std::string cmd = "r=0";
  for (const auto& [tmp, final] : renames_) {
    auto t = shell_quote(tmp);
    cmd += "; mv -f -T -- " + t + " " + shell_quote(final) + " || { r=1; rm -f -- " + t + "; }";
  }
  return cmd + "; exit $r";
}

} // namespace cws::ssh
