// clusterctl backup and restore: a hot, consistent copy of a home (database, configuration,
// PKI, SSH keys) and its return into an empty home.

#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/local_client.hpp"
#include "store/error.hpp"

namespace cws::cli {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view manifest_name = "MANIFEST";
constexpr std::string_view manifest_header = "clusterws backup";

/// What a backup holds besides the database: the state directory's PKI and SSH keys, and
/// the configuration file (under the home, or /etc/clusterws in the installed layout).
std::vector<std::pair<fs::path, std::string>> home_parts(const store::home& h) {
  return {{h.config(), "clusterws.conf"}, {h.pki(), "pki"}, {h.dir / "ssh", "ssh"}};
}

/// Copies `from` (a file or a directory tree) to `to`, keeping permissions (keys stay 0600).
void copy_part(const fs::path& from, const fs::path& to) {
  if (!fs::exists(from)) {
    return;
  }
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  if (fs::is_directory(from)) {
    for (const auto& e : fs::recursive_directory_iterator(from)) {
      fs::permissions(to / fs::relative(e.path(), from), e.status().permissions());
    }
  }
  fs::permissions(to, fs::status(from).permissions());
}

std::string utc_now() {
  auto t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// The value of `key=` in a manifest, or "".
std::string manifest_value(const fs::path& dir, std::string_view key) {
  std::ifstream in{dir / manifest_name};
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size() + 1, std::string{key} + "=") == 0) {
      return line.substr(key.size() + 1);
    }
  }
  return {};
}

} // namespace

int backup(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "", {"home"}, {}, {}});
  if (args.has("help")) {
    streams.out << "Usage: clusterctl backup [--home DIR] BACKUPDIR\n"
                   "Copies the home into the new directory BACKUPDIR while the daemon runs:\n"
                   "the database as one consistent, compacted snapshot, clusterws.conf, pki/\n"
                   "and ssh/ (keys included: keep the backup as safe as the home). The audit\n"
                   "log is not copied. 'clusterctl restore' puts it back.\n";
    return 0;
  }
  if (args.positional.size() != 1) {
    throw usage_error("Give one backup directory (it must not exist yet).");
  }
  fs::path target = args.positional.front();
  if (fs::exists(target)) {
    throw usage_error("'" + target.string() + "' exists; a backup goes into a new directory.");
  }
  auto s = session::open(args);
  fs::create_directories(target / "db");
  fs::permissions(target, fs::perms::owner_all);
  try {
    s.db->env().copy_to(target / "db");
    for (const auto& [from, name] : home_parts(s.home)) {
      copy_part(from, target / name);
    }
    size_t nodes = s.db->read().names(store::object_type::node).size();
    std::ofstream{target / manifest_name}
      << manifest_header << "\nformat.version=" << store::database::format_version
      << "\ncreated=" << utc_now() << "\nhome=" << s.home.dir.string() << "\nnodes=" << nodes
      << '\n';
    streams.out << "Backed up " << s.home.dir.string() << " (" << nodes << " nodes) to "
                << target.string() << '\n';
    return 0;
  } catch (...) {
    fs::remove_all(target); // never leave half a backup that looks whole
    throw;
  }
}

int restore(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "", {"home"}, {}, {}});
  if (args.has("help")) {
    streams.out << "Usage: clusterctl restore [--home DIR] BACKUPDIR\n"
                   "Puts a backup made by 'clusterctl backup' into a home that is not\n"
                   "initialized (stop the daemon and move the old home away first). In the\n"
                   "installed layout /etc/clusterws/clusterws.conf is left as it is (the\n"
                   "backup's copy is BACKUPDIR/clusterws.conf).\n";
    return 0;
  }
  if (args.positional.size() != 1) {
    throw usage_error("Give the backup directory.");
  }
  fs::path source = args.positional.front();
  std::ifstream manifest{source / manifest_name};
  std::string header;
  std::getline(manifest, header);
  if (header != manifest_header || !fs::exists(source / "db" / "data.mdb")) {
    throw usage_error("'" + source.string() + "' is not a clusterws backup (no MANIFEST or db).");
  }
  auto format = manifest_value(source, "format.version");
  if (format != std::to_string(store::database::format_version)) {
    throw std::runtime_error("The backup has database format " + format + "; this clusterws "
                             + "reads format " + std::to_string(store::database::format_version)
                             + ". Restore it with the clusterws that made it.");
  }
  auto home = store::home::resolve(args.value("home"));
  if (daemon_socket(home)) {
    throw needs_root{};
  }
  if (home.initialized()) {
    throw usage_error("The clusterws home '" + home.dir.string()
                      + "' is already initialized; stop the daemon and move it away first.");
  }
  fs::create_directories(home.dir);
  fs::permissions(home.dir, fs::perms::owner_all);
  // the configuration file of an installed home stays as the package put it there
  auto parts = home_parts(home);
  if (home.installed) {
    parts.erase(parts.begin());
  }
  for (const auto& [to, name] : parts) {
    if (fs::exists(to)) {
      throw usage_error("'" + to.string() + "' exists; restore into an empty home.");
    }
  }
  // the database last: a home counts as initialized once it has one
  for (const auto& [to, name] : parts) {
    copy_part(source / name, to);
  }
  fs::create_directories(home.db());
  fs::copy_file(source / "db" / "data.mdb", home.db() / "data.mdb");
  fs::permissions(home.db() / "data.mdb", fs::perms::owner_read | fs::perms::owner_write);
  store::database db{home.db()}; // refuses a database it cannot read
  streams.out << "Restored " << db.read().names(store::object_type::node).size() << " nodes from "
              << source.string() << " into " << home.dir.string() << '\n';
  return 0;
}

} // namespace cws::cli
