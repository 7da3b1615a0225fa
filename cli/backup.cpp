// clusterctl backup and restore: a hot, consistent copy of a home (database, configuration,
// PKI, SSH keys) and its return into an empty home.
//
// Both work on open directories (openat, O_NOFOLLOW, O_EXCL), never on names that another
// user could swap for a link: a backup may go into a shared directory, and a backup restored
// is untrusted input (docs/security.md, N6, N7, N12).

#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/settings.hpp"
#include "cli/backup_tree.hpp"
#include "cli/commands.hpp"
#include "cli/local_client.hpp"
#include "store/error.hpp"

namespace cws::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* manifest_name = "MANIFEST";

/// What a backup holds besides the database: the state directory's PKI and SSH keys, and
/// the configuration file (under the home, or /etc/clusterws in the installed layout).
std::vector<std::pair<fs::path, std::string>> home_parts(const store::home& h) {
  return {{h.config(), "clusterws.conf"}, {h.pki(), "pki"}, {h.dir / "ssh", "ssh"}};
}

std::string utc_now() {
  auto t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::runtime_error sys_error(const std::string& what, const fs::path& p) {
  return std::runtime_error(what + " '" + p.string() + "': " + std::strerror(errno));
}

/// True if `name` is in the open directory `dir` (as itself: a link counts, unfollowed).
bool present(int dir, const char* name) {
  struct stat st {};
  return ::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/// Writes the new file `name` (0600) under `dir` with `text`.
void write_new_file(int dir, const char* name, const std::string& text, const fs::path& shown) {
  fd_guard fd{::openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)};
  if (fd.get() < 0) {
    throw sys_error("cannot create", shown);
  }
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    throw sys_error("cannot write", shown);
  }
}

/// Makes the backup's directory `target`: mkdir 0700, which fails on anything already there
/// (a link planted in a shared directory included), then opened without following a link and
/// checked to be the directory this process just made.
int make_backup_directory(const fs::path& target) {
  if (::mkdir(target.c_str(), 0700) != 0) {
    if (errno == EEXIST) {
      throw usage_error("'" + target.string() + "' exists; a backup goes into a new directory.");
    }
    throw sys_error("cannot create the backup directory", target);
  }
  int fd = open_directory(target, false);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()
      || ::fchmod(fd, 0700) != 0) {
    ::close(fd);
    throw std::runtime_error("'" + target.string() + "' changed while it was being created");
  }
  return fd;
}

} // namespace

int backup(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "", {"home"}, {}, {}});
  if (args.has("help")) {
    streams.out << "Usage: clusterctl backup [--home DIR] BACKUPDIR\n"
                   "Copies the home into the new directory BACKUPDIR (created 0700; its\n"
                   "parent must exist) while the daemon runs: the database as one consistent,\n"
                   "compacted snapshot (0600), clusterws.conf, pki/ and ssh/ (keys included:\n"
                   "keep the backup as safe as the home). The audit log is not copied.\n"
                   "'clusterctl restore' puts it back.\n";
    return 0;
  }
  if (args.positional.size() != 1) {
    throw usage_error("Give one backup directory (it must not exist yet).");
  }
  fs::path target = args.positional.front();
  std::error_code ec;
  if (fs::symlink_status(target, ec).type() != fs::file_type::not_found) {
    throw usage_error("'" + target.string() + "' exists; a backup goes into a new directory.");
  }
  auto s = session::open(args);
  fd_guard dir{make_backup_directory(target)};
  try {
    if (::mkdirat(dir.get(), "db", 0700) != 0) {
      throw sys_error("cannot create", target / "db");
    }
    fd_guard db_dir{::openat(dir.get(), "db", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    fd_guard db_file{::openat(db_dir.get(), "data.mdb",
                              O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)};
    if (db_dir.get() < 0 || db_file.get() < 0) {
      throw sys_error("cannot create", target / "db" / "data.mdb");
    }
    s.db->env().copy_to(db_file.get()); // 0600: the BMC passwords are in it
    copy_budget budget;
    budget.unlimited = true; // the home's own files: the limits are for what restore reads
    for (const auto& [from, name] : home_parts(s.home)) {
      if (fs::symlink_status(from, ec).type() == fs::file_type::not_found) {
        continue;
      }
      fd_guard parent{open_directory(from.parent_path(), true)};
      copy_entry(parent.get(), from.filename(), dir.get(), name, from.string(), budget);
    }
    size_t nodes = s.db->read().names(store::object_type::node).size();
    write_new_file(dir.get(), manifest_name,
                   std::string{backup_manifest_header} + "\nformat.version="
                     + std::to_string(store::database::format_version) + "\ncreated=" + utc_now()
                     + "\nhome=" + s.home.dir.string() + "\nnodes=" + std::to_string(nodes) + '\n',
                   target / manifest_name);
    streams.out << "Backed up " << s.home.dir.string() << " (" << nodes << " nodes) to "
                << target.string() << '\n';
    return 0;
  } catch (...) {
    fs::remove_all(target, ec); // never leave half a backup that looks whole
    throw;
  }
}

namespace {

/// A restore staged in `<home>/.restore-XXXXXX`: what was copied there is checked, then
/// moved into place; on any failure the home is left as it was before.
class staged_restore {
 public:
  explicit staged_restore(const store::home& home) : home_(home) {
    std::error_code ec;
    created_home_ = !fs::exists(home.dir, ec);
    fs::create_directories(home.dir);
    fs::permissions(home.dir, fs::perms::owner_all);
    auto templ = (home.dir / ".restore-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) {
      throw sys_error("cannot create a staging directory in", home.dir);
    }
    path_ = templ;
    fd_ = open_directory(path_, false);
  }

  ~staged_restore() {
    std::error_code ec;
    if (!done_) {
      for (auto it = moved_.rbegin(); it != moved_.rend(); ++it) {
        fs::remove_all(*it, ec);
      }
    }
    ::close(fd_);
    fs::remove_all(path_, ec);
    if (!done_ && created_home_) {
      fs::remove(home_.dir, ec); // only if empty
    }
  }

  staged_restore(const staged_restore&) = delete;
  staged_restore& operator=(const staged_restore&) = delete;

  int fd() const noexcept {
    return fd_;
  }
  const fs::path& path() const noexcept {
    return path_;
  }

  /// Moves the staged `name` to `to`, never over something there.
  void move(const std::string& name, const fs::path& to) {
    if (::renameat2(fd_, name.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) != 0) {
      throw sys_error("cannot move the restored " + name + " to", to);
    }
    moved_.push_back(to);
  }

  void commit() {
    done_ = true;
  }

 private:
  const store::home& home_;
  fs::path path_;
  int fd_ = -1;
  bool created_home_ = false;
  bool done_ = false;
  std::vector<fs::path> moved_;
};

} // namespace

namespace {

/// Copies the backup's `parts` (names under the home: clusterws.conf, pki, ssh) and its
/// database into the open directory `to` (at `to_path`), then checks them there: the database
/// opens, the configuration is one the daemon takes. Returns the node count.
/// @throws std::runtime_error (nothing of the home was touched).
size_t stage_backup(int src, const fs::path& source,
                    const std::vector<std::pair<fs::path, std::string>>& parts, int to,
                    const fs::path& to_path,
                    std::vector<std::pair<fs::path, std::string>>& staged) {
  copy_budget budget;
  for (const auto& [home_path, name] : parts) {
    if (present(src, name.c_str())) {
      copy_entry(src, name, to, name, (source / name).string(), budget);
      staged.emplace_back(home_path, name);
    }
  }
  fd_guard from_db{::openat(src, "db", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
  if (from_db.get() < 0) {
    throw std::runtime_error("'" + (source / "db").string()
                             + "' is not a directory (a link is refused); nothing was restored.");
  }
  if (::mkdirat(to, "db", 0700) != 0) {
    throw sys_error("cannot create", to_path / "db");
  }
  fd_guard to_db{::openat(to, "db", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
  copy_budget db_budget;
  db_budget.unlimited = true; // LMDB checks the database itself
  db_budget.mode_mask = 0600;
  copy_entry(from_db.get(), "data.mdb", to_db.get(), "data.mdb",
             (source / "db" / "data.mdb").string(), db_budget);
  // checked where it is staged: a database LMDB cannot read, or a configuration the daemon
  // would refuse, stops the restore here with the home as it was
  size_t nodes = 0;
  try {
    store::database db{to_path / "db"};
    nodes = db.read().names(store::object_type::node).size();
  } catch (const std::exception& e) {
    throw std::runtime_error("The backup's database cannot be read (" + std::string{e.what()}
                             + "); nothing was restored.");
  }
  std::error_code ec;
  fs::remove(to_path / "db" / "lock.mdb", ec);
  for (const auto& [home_path, name] : staged) {
    if (name == "clusterws.conf") {
      try {
        api::load_settings(to_path / name);
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error("The backup's clusterws.conf is refused (" + std::string{e.what()}
                                 + "); nothing was restored.");
      }
    }
  }
  return nodes;
}

/// The pid of the daemon listening on the local socket `path` (the kernel's word,
/// SO_PEERCRED), or 0 when nothing listens there.
pid_t daemon_on(const fs::path& path) {
  sockaddr_un addr{};
  if (path.empty() || path.native().size() >= sizeof addr.sun_path) {
    return 0;
  }
  fd_guard fd{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ucred cred{};
  socklen_t len = sizeof cred;
  if (fd.get() < 0 || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0
      || ::getsockopt(fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    return 0;
  }
  return cred.pid;
}

/// The systemd service `pid` runs in (`clusterwsd.service`), from its cgroup; "" if none.
std::string service_of(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/cgroup"};
  std::string line;
  while (std::getline(in, line)) {
    auto slash = line.rfind('/');
    if (slash == std::string::npos || line.size() <= slash + 9
        || line.compare(line.size() - 8, 8, ".service") != 0) {
      continue;
    }
    auto unit = line.substr(slash + 1);
    bool plain = true; // a unit name, nothing a shell would read
    for (char c : unit) {
      plain = plain
              && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'
                  || c == '@' || c == ':');
    }
    if (plain) {
      return unit;
    }
  }
  return {};
}

/// `<home>.replaced-<UTC time>`: where --replace keeps the home it replaces.
fs::path aside_name(const fs::path& dir) {
  auto t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  auto d = dir;
  if (!d.has_filename()) {
    d = d.parent_path(); // (a home given as "DIR/")
  }
  return d.string() + ".replaced-" + buf;
}

/// restore --replace into an initialized home: the backup is staged whole in a new directory
/// beside the home, checked there, and exchanged with the home by one rename
/// (RENAME_EXCHANGE): a tool or the daemon sees the old home or the new one, never a mix.
/// The directory then holds the old home, kept. A daemon on the home is told to reopen it.
int restore_replacing(int src, const fs::path& source, const store::home& home,
                      const std::vector<std::pair<fs::path, std::string>>& parts, io& streams) {
  // the daemon serving the home, asked before the swap (the socket may be the old home's)
  pid_t daemon = daemon_on(local_socket_path(home));
  auto aside = aside_name(home.dir);
  if (::mkdir(aside.c_str(), 0700) != 0) {
    throw sys_error("cannot create the directory for the new home", aside);
  }
  bool swapped = false;
  size_t nodes = 0;
  try {
    fd_guard to{open_directory(aside, false)};
    std::vector<std::pair<fs::path, std::string>> staged;
    nodes = stage_backup(src, source, parts, to.get(), aside, staged);
    if (::fsync(to.get()) != 0
        || ::renameat2(AT_FDCWD, aside.c_str(), AT_FDCWD, home.dir.c_str(), RENAME_EXCHANGE) != 0) {
      throw sys_error("cannot swap the restored home with", home.dir);
    }
    swapped = true;
    fd_guard parent{
      ::open(fs::absolute(home.dir).parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    if (parent.get() >= 0) {
      ::fsync(parent.get()); // (the swap itself on disk)
    }
  } catch (...) {
    if (!swapped) {
      std::error_code ec;
      fs::remove_all(aside, ec);
    }
    throw;
  }
  streams.out << "Restored " << nodes << " nodes from " << source.string() << " into "
              << home.dir.string() << "; the home it replaced is " << aside.string() << '\n';
  if (daemon <= 0) {
    return 0;
  }
  // under systemd a restart (a new sandbox, whose mounts show the new directory); otherwise
  // SIGHUP, on which the daemon sees the new database and starts again on the new home
  auto unit = service_of(daemon);
  if (!unit.empty()) {
    auto cmd = "systemctl try-restart '" + unit + "'";
    if (std::system(cmd.c_str()) != 0) {
      throw std::runtime_error("The home is restored, but '" + cmd
                               + "' failed: restart clusterwsd yourself.");
    }
    streams.out << "Restarted " << unit << " on the restored home\n";
  } else if (::kill(daemon, SIGHUP) == 0) {
    streams.out << "Told clusterwsd (pid " << daemon << ") to reopen the home\n";
  } else {
    throw sys_error("The home is restored, but clusterwsd (pid " + std::to_string(daemon)
                      + ") could not be told to reopen it: restart it yourself; kill",
                    home.dir);
  }
  return 0;
}

} // namespace

int restore(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "", {"home"}, {"replace"}, {}});
  if (args.has("help")) {
    streams.out << "Usage: clusterctl restore [--home DIR] [--replace] BACKUPDIR\n"
                   "Puts a backup made by 'clusterctl backup' into a home that is not\n"
                   "initialized. With --replace the home may be initialized: the backup is\n"
                   "staged whole beside it, checked, and swapped in by one rename; the old\n"
                   "home is kept as HOME.replaced-<UTC time>, and a running clusterwsd is told\n"
                   "to reopen the home (under systemd it is restarted). In the installed\n"
                   "layout /etc/clusterws/clusterws.conf is left as it is (the backup's copy\n"
                   "is BACKUPDIR/clusterws.conf). The backup's database and configuration are\n"
                   "checked before anything moves: a refused backup leaves the home as it was.\n"
                   "A backup holds only regular files and directories.\n";
    return 0;
  }
  if (args.positional.size() != 1) {
    throw usage_error("Give the backup directory.");
  }
  fs::path source = args.positional.front();
  fd_guard src{::open(source.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  backup_manifest manifest;
  try {
    if (src.get() < 0) {
      throw std::runtime_error(std::strerror(errno));
    }
    manifest = parse_backup_manifest(read_regular_file(
      src.get(), manifest_name, backup_limits::manifest_bytes, (source / manifest_name).string()));
    struct stat st {};
    if (::fstatat(src.get(), "db/data.mdb", &st, AT_SYMLINK_NOFOLLOW) != 0
        || !S_ISREG(st.st_mode)) {
      throw std::runtime_error("no db/data.mdb");
    }
  } catch (const std::exception& e) {
    throw usage_error("'" + source.string() + "' is not a clusterws backup (" + e.what() + ").");
  }
  auto format = manifest.value("format.version");
  if (format != std::to_string(store::database::format_version)) {
    throw std::runtime_error("The backup has database format " + format + "; this clusterws "
                             + "reads format " + std::to_string(store::database::format_version)
                             + ". Restore it with the clusterws that made it.");
  }
  auto home = store::home::resolve(args.value("home"));
  if (daemon_socket(home)) {
    throw needs_root{};
  }
  // the configuration file of an installed home stays as the package put it there
  auto parts = home_parts(home);
  if (home.installed) {
    parts.erase(parts.begin());
  }
  if (home.initialized()) {
    if (args.has("replace")) {
      return restore_replacing(src.get(), source, home, parts, streams);
    }
    throw usage_error("The clusterws home '" + home.dir.string()
                      + "' is already initialized; 'clusterctl restore --replace' keeps it aside "
                        "and puts the backup in its place.");
  }
  std::error_code ec;
  for (const auto& [to, name] : parts) {
    if (fs::symlink_status(to, ec).type() != fs::file_type::not_found) {
      throw usage_error("'" + to.string() + "' exists; restore into an empty home.");
    }
  }
  staged_restore stage{home};
  std::vector<std::pair<fs::path, std::string>> staged;
  size_t nodes = stage_backup(src.get(), source, parts, stage.fd(), stage.path(), staged);
  // into place, the database last: a home counts as initialized once it has one
  for (const auto& [to, name] : staged) {
    stage.move(name, to);
  }
  stage.move("db", home.db());
  stage.commit();
  streams.out << "Restored " << nodes << " nodes from " << source.string() << " into "
              << home.dir.string() << '\n';
  return 0;
}

} // namespace cws::cli
