#include "api/copy.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <optional>
#include <pwd.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>

namespace cws::api {

namespace {

namespace fs = std::filesystem;

api_result refuse(const std::string& message) {
  return api_result::failure(errc::bad_request, message + " Nothing was copied.");
}

/// Closes a descriptor unless released.
struct fd_guard {
  int fd = -1;
  ~fd_guard() {
    if (fd >= 0) {
      ::close(fd);
    }
  }
  int release() {
    return std::exchange(fd, -1);
  }
};

/// The Unix account whose rights a confined copy reads with.
struct reader {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

/// `user`'s account, or `nobody`'s (no groups) when the cluster user has no local account:
/// then only what everyone may read is copied.
reader reader_for(const std::string& user) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  reader r;
  if (::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    r.name = user;
    r.uid = pw.pw_uid;
    r.gid = pw.pw_gid;
    int n = 64;
    r.groups.resize(static_cast<size_t>(n));
    if (::getgrouplist(user.c_str(), pw.pw_gid, r.groups.data(), &n) < 0) {
      r.groups.resize(static_cast<size_t>(n));
      ::getgrouplist(user.c_str(), pw.pw_gid, r.groups.data(), &n);
    }
    r.groups.resize(static_cast<size_t>(std::max(n, 0)));
    return r;
  }
  r.name = "nobody";
  r.uid = 65534;
  r.gid = 65534;
  if (::getpwnam_r("nobody", &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    r.uid = pw.pw_uid;
    r.gid = pw.pw_gid;
  }
  r.groups = {r.gid};
  return r;
}

/// For its life the calling thread opens files with `r`'s rights: its file-system uid and
/// gid and its groups. The raw system calls change this thread only (glibc's setgroups would
/// change every thread of the daemon); the destructor restores them.
class as_reader {
 public:
  explicit as_reader(const reader& r) {
    old_uid_ = static_cast<uid_t>(::syscall(SYS_setfsuid, -1)); // -1 changes nothing
    old_gid_ = static_cast<gid_t>(::syscall(SYS_setfsgid, -1));
    if (r.uid == old_uid_) {
      ok_ = true; // the caller is this process's user (root over the socket, the CLI)
      return;
    }
    int n = ::getgroups(0, nullptr);
    old_groups_.resize(static_cast<size_t>(std::max(n, 0)));
    if (n < 0 || ::getgroups(n, old_groups_.data()) != n
        || ::syscall(SYS_setgroups, r.groups.size(), r.groups.data()) != 0) {
      return;
    }
    changed_ = true;
    ::syscall(SYS_setfsgid, r.gid);
    ::syscall(SYS_setfsuid, r.uid);
    ok_ = static_cast<uid_t>(::syscall(SYS_setfsuid, -1)) == r.uid
          && static_cast<gid_t>(::syscall(SYS_setfsgid, -1)) == r.gid;
  }

  ~as_reader() {
    if (changed_) {
      ::syscall(SYS_setfsuid, old_uid_);
      ::syscall(SYS_setfsgid, old_gid_);
      ::syscall(SYS_setgroups, old_groups_.size(), old_groups_.data());
    }
  }

  as_reader(const as_reader&) = delete;
  as_reader& operator=(const as_reader&) = delete;

  /// False if the rights could not be taken (a daemon not running as root): nothing is read.
  bool ok() const noexcept {
    return ok_;
  }

 private:
  uid_t old_uid_ = 0;
  gid_t old_gid_ = 0;
  std::vector<gid_t> old_groups_;
  bool changed_ = false;
  bool ok_ = false;
};

constexpr int source_flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC; // a fifo never blocks

/// Opens `rel` beneath the directory `dir`: no `..` out of it, no symbolic link anywhere
/// (ELOOP), no magic link. openat2 where the kernel has it, else one component at a time.
int open_beneath(int dir, const fs::path& rel) {
  open_how how{};
  how.flags = source_flags;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  auto fd = static_cast<int>(::syscall(SYS_openat2, dir, rel.c_str(), &how, sizeof how));
  if (fd >= 0 || errno != ENOSYS) {
    return fd;
  }
  fd_guard cur{::fcntl(dir, F_DUPFD_CLOEXEC, 0)};
  std::vector<std::string> parts;
  for (const auto& c : rel) {
    if (c == "..") {
      errno = EXDEV;
      return -1;
    }
    if (!c.empty() && c != "." && c != "/") {
      parts.push_back(c.string());
    }
  }
  if (parts.empty()) {
    return ::openat(cur.fd, ".", source_flags);
  }
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    fd_guard next{
      ::openat(cur.fd, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    if (next.fd < 0) {
      return -1;
    }
    std::swap(cur.fd, next.fd);
  }
  return ::openat(cur.fd, parts.back().c_str(), source_flags | O_NOFOLLOW);
}

/// `p` below `root`, component by component (no resolving): empty if it is not.
std::optional<fs::path> below(const fs::path& p, const fs::path& root) {
  auto a = p.begin();
  for (auto b = root.begin(); b != root.end(); ++b) {
    if (b->empty()) {
      continue; // a trailing slash
    }
    if (a == p.end() || *a != *b) {
      return std::nullopt;
    }
    ++a;
  }
  fs::path rel;
  for (; a != p.end(); ++a) {
    rel /= *a;
  }
  return rel.empty() ? fs::path{"."} : rel;
}

/// The name of what `fd` is open on (its last path component).
std::string name_of(int fd) {
  std::error_code ec;
  return fs::read_symlink("/proc/self/fd/" + std::to_string(fd), ec).filename().string();
}

/// Reads the builder's sources: one file or directory tree at a time, each opened once.
class builder {
 public:
  builder(const copy_request& req, const copy_config& cfg, ssh::copy_spec& spec)
      : req_(req), cfg_(cfg), spec_(spec) {
    if (req.confined) {
      std::error_code ec;
      root_ = fs::canonical(cfg.root, ec);
      if (!root_.empty()) {
        // the service's own directory, opened with its rights; the sources beneath it with
        // the caller's
        root_fd_.fd = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      }
    }
  }

  /// Whose rights a confined request reads with (for messages).
  void read_as(std::string name) {
    reader_ = std::move(name);
  }

  /// Adds `source` (as named) to `g`.
  api_result add(const std::string& source, ssh::copy_group& g) {
    if (source.empty() || source.find('\n') != std::string::npos) {
      return refuse("A source path is empty or has a line break.");
    }
    fs::path p{source};
    fd_guard fd;
    if (req_.confined) {
      if (root_.empty() || root_fd_.fd < 0) {
        return refuse("Copies are not possible: copy_root (" + cfg_.root.string()
                      + ") does not exist.");
      }
      auto rel = p.is_absolute() ? below(p, root_) : std::nullopt;
      if (!rel && p.is_absolute()) {
        rel = below(p, cfg_.root.lexically_normal());
      }
      if (!rel) {
        return outside(source);
      }
      fd.fd = open_beneath(root_fd_.fd, *rel);
      if (fd.fd < 0) {
        return open_failed(source);
      }
    } else {
      fd.fd = ::open(p.c_str(), source_flags);
      if (fd.fd < 0) {
        return refuse(source + ": " + std::strerror(errno) + ".");
      }
    }
    auto name = p.filename().string();
    if (name.empty() || name == "." || name == "..") {
      name = name_of(fd.fd);
    }
    if (name.empty() || name == "/") {
      return refuse("The source " + source + " names no file.");
    }
    return add_fd(fd, name, source, g);
  }

 private:
  api_result outside(const std::string& shown) const {
    return refuse("The source " + shown + " is not inside " + root_.string() + " (copy_root).");
  }

  /// A confined open failed: a link or `..` out is "not inside" (no link is followed under
  /// copy_root); Unix's refusal names whose rights it was read with.
  api_result open_failed(const std::string& shown) const {
    if (errno == EXDEV || errno == ELOOP) {
      return outside(shown);
    }
    if (errno == EACCES || errno == EPERM) {
      return refuse(shown + ": " + std::strerror(errno) + " (read as " + reader_ + ").");
    }
    return refuse(shown + ": " + std::strerror(errno) + ".");
  }

  api_result add_fd(fd_guard& fd, const std::string& name, const std::string& shown,
                    ssh::copy_group& g) {
    struct stat st {};
    if (::fstat(fd.fd, &st) != 0) {
      return refuse(shown + ": " + std::strerror(errno) + ".");
    }
    if (++count_ > cfg_.files_max) {
      return refuse("More than " + std::to_string(cfg_.files_max)
                    + " files and directories (copy_files_max).");
    }
    ssh::copy_file f;
    f.name = name;
    f.mode = st.st_mode & 07777;
    f.local = shown;
    if (req_.preserve) {
      f.atime = st.st_atime;
      f.mtime = st.st_mtime;
    }
    if (S_ISDIR(st.st_mode)) {
      if (!req_.recursive) {
        return refuse(shown + " is a directory: -R copies directories.");
      }
      f.directory = true;
      f.mode |= 0700; // the copy must be able to fill it
      g.files.push_back(std::move(f));
      return add_children(fd, name, shown, g);
    }
    if (!S_ISREG(st.st_mode)) {
      return refuse(shown + " is not a regular file.");
    }
    int fl = ::fcntl(fd.fd, F_GETFL);
    ::fcntl(fd.fd, F_SETFL, fl & ~O_NONBLOCK);
    auto size = static_cast<size_t>(st.st_size);
    if (size <= cfg_.memory_max - std::min(cfg_.memory_max, in_memory_)) {
      auto data = std::make_shared<std::string>(size, '\0');
      size_t got = 0;
      while (got < size) {
        auto n = ::pread(fd.fd, data->data() + got, size - got, static_cast<off_t>(got));
        if (n < 0 && errno == EINTR) {
          continue;
        }
        if (n <= 0) {
          return refuse(shown + ": cannot be read.");
        }
        got += static_cast<size_t>(n);
      }
      in_memory_ += size;
      f.data = std::move(data);
    } else {
      f.source = std::make_shared<ssh::source_file>(fd.release());
    }
    g.files.push_back(std::move(f));
    return {};
  }

  /// The entries of the directory open as `fd`, each opened from it (never by path; under
  /// copy_root never through a link).
  api_result add_children(fd_guard& fd, const std::string& name, const std::string& shown,
                          ssh::copy_group& g) {
    DIR* d = ::fdopendir(fd.fd);
    if (d == nullptr) {
      return refuse(shown + ": " + std::strerror(errno) + ".");
    }
    int dir = fd.release();
    std::unique_ptr<DIR, int (*)(DIR*)> own{d, ::closedir};
    std::vector<std::string> children;
    errno = 0;
    while (auto* e = ::readdir(d)) {
      std::string c = e->d_name;
      if (c != "." && c != "..") {
        children.push_back(std::move(c));
      }
      if (children.size() > cfg_.files_max) {
        break; // refused below, once counted
      }
    }
    if (errno != 0) {
      return refuse(shown + ": " + std::strerror(errno) + ".");
    }
    std::sort(children.begin(), children.end());
    for (const auto& c : children) {
      auto child_shown = (fs::path{shown} / c).string();
      fd_guard child{::openat(dir, c.c_str(), source_flags | (req_.confined ? O_NOFOLLOW : 0))};
      if (child.fd < 0) {
        if (req_.confined) {
          return open_failed(child_shown);
        }
        return refuse(child_shown + ": " + std::strerror(errno) + ".");
      }
      auto r = add_fd(child, name + "/" + c, child_shown, g);
      if (!r.ok()) {
        return r;
      }
    }
    return {};
  }

  const copy_request& req_;
  const copy_config& cfg_;
  ssh::copy_spec& spec_;
  fs::path root_;
  fd_guard root_fd_;
  std::string reader_;
  size_t count_ = 0;
  size_t in_memory_ = 0;
};

} // namespace

std::string describe(const copy_request& req, const std::string& command) {
  std::string s = req.execute ? "xdsh -e" : "xdcp";
  s += req.recursive ? " -R" : "";
  s += req.preserve ? " -p" : "";
  s += req.pull ? " -P" : "";
  for (const auto& e : req.entries) {
    for (const auto& src : e.sources) {
      s += " " + src;
    }
    s += req.execute ? "" : (req.entries.size() > 1 ? " ->" : "") + std::string{" "} + e.target;
  }
  return req.execute && !command.empty() ? s + " " + command : s;
}

std::string parse_synclist(const std::string& text, std::vector<copy_entry>& out) {
  std::istringstream in{text};
  std::string line;
  size_t number = 0;
  std::vector<copy_entry> entries;
  while (std::getline(in, line)) {
    ++number;
    auto where = "line " + std::to_string(number) + ": ";
    std::istringstream words{line};
    std::vector<std::string> w;
    for (std::string word; words >> word;) {
      if (word.front() == '#') {
        break;
      }
      w.push_back(word);
    }
    if (w.empty()) {
      continue;
    }
    if (w.size() == 1 && w.front().back() == ':') {
      return where + "the " + w.front()
             + " section is not supported (only `source... -> destination` lines are).";
    }
    auto arrow = std::find(w.begin(), w.end(), "->");
    if (arrow != w.end() && arrow + 1 != w.end() && arrow[1].front() == '(') {
      return where + "node lists in a synclist line are not supported.";
    }
    if (arrow == w.end() || arrow == w.begin() || arrow + 2 != w.end() || arrow[1] == "->") {
      return where + "expected `source... -> destination`.";
    }
    copy_entry e;
    e.sources.assign(w.begin(), arrow);
    e.target = arrow[1];
    entries.push_back(std::move(e));
  }
  if (entries.empty()) {
    return "the synclist has no `source -> destination` line.";
  }
  out = std::move(entries);
  return {};
}

bool inside_root(const fs::path& path, const fs::path& root) {
  std::error_code ec;
  auto real = fs::canonical(path, ec);
  if (ec) {
    return false;
  }
  auto r = root.string();
  auto s = real.string();
  if (r == "/") {
    return true;
  }
  return s == r || (s.size() > r.size() && s.compare(0, r.size(), r) == 0 && s[r.size()] == '/');
}

api_result build_copy(const copy_request& req, const copy_config& cfg,
                      std::shared_ptr<const ssh::copy_spec>& out, const std::string& caller) {
  auto spec = std::make_shared<ssh::copy_spec>();
  spec->chunk = cfg.chunk;
  spec->preserve = req.preserve;
  spec->execute = req.execute;
  if (req.entries.empty() || req.entries.front().sources.empty()) {
    return api_result::failure(errc::missing_data, "Lack of operation data.");
  }
  if (req.pull) {
    const auto& e = req.entries.front();
    if (req.entries.size() != 1 || e.sources.size() != 1) {
      return refuse("-P pulls one file per run.");
    }
    auto remote = e.sources.front();
    // `dir/` names `dir`: the local name is its last component
    while (remote.size() > 1 && remote.back() == '/') {
      remote.pop_back();
    }
    if (remote.empty() || remote.find('\n') != std::string::npos) {
      return refuse("The remote file name is empty or has a line break.");
    }
    if (remote == "/" || remote == "." || remote == ".."
        || (remote.size() > 2 && remote.compare(remote.size() - 3, 3, "/..") == 0)
        || (remote.size() > 1 && remote.compare(remote.size() - 2, 2, "/.") == 0)) {
      return refuse("The remote path " + remote + " has no name to pull it as.");
    }
    std::error_code ec;
    if (!fs::is_directory(e.target, ec)) {
      return refuse("The target " + e.target + " must be an existing directory for -P.");
    }
    spec->pull = remote;
    spec->pull_dir = fs::absolute(e.target);
    spec->pull_tree = req.recursive;
    spec->pull_entries_max = cfg.files_max;
    spec->pull_node_max = cfg.pull_node_max;
    spec->pull_run_max = cfg.pull_run_max;
    spec->pull_free_min = cfg.pull_free_min;
    out = std::move(spec);
    return {};
  }
  builder b{req, cfg, *spec};
  // the sources are opened with the caller's rights (this thread only, until the end)
  std::optional<as_reader> rights;
  if (req.confined && !caller.empty()) {
    auto r = reader_for(caller);
    b.read_as(r.name);
    rights.emplace(r);
    if (!rights->ok()) {
      return refuse("The sources cannot be read as " + r.name
                    + " (the service cannot take "
                      "that user's rights).");
    }
  }
  for (const auto& e : req.entries) {
    if (e.target.empty() || e.target.find('\n') != std::string::npos) {
      return refuse("The target path is empty or has a line break.");
    }
    ssh::copy_group g;
    g.target = e.target;
    g.into = e.sources.size() > 1 || e.target.back() == '/';
    for (const auto& s : e.sources) {
      if (auto r = b.add(s, g); !r.ok()) {
        return r;
      }
    }
    if (g.target.size() > 1 && g.target.back() == '/') {
      g.target.pop_back();
    }
    spec->push.push_back(std::move(g));
  }
  if (req.execute) {
    if (spec->push.size() != 1 || spec->push.front().files.size() != 1
        || spec->push.front().files.front().directory) {
      return refuse("-e runs one script file.");
    }
    spec->push.front().files.front().mode |= 0700;
    spec->push.front().files.front().atime = -1;
    spec->push.front().files.front().mtime = -1;
  }
  out = std::move(spec);
  return {};
}

} // namespace cws::api
