#pragma once

// What `clusterctl backup` writes and `clusterctl restore` reads: the MANIFEST and the copy of
// a tree, file descriptor by file descriptor, so that no name can be swapped for a link
// between a check and its use (docs/security.md, N6 and N7).

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace cws::cli {

/// The limits of a backup that restore reads (documented in docs/operations.md): a backup is
/// untrusted input, so neither its MANIFEST nor its tree can make restore run without end.
struct backup_limits {
  /// Largest MANIFEST; its lines (`key=value`) at most this many.
  static constexpr size_t manifest_bytes = 64 * 1024;
  static constexpr size_t manifest_lines = 256;
  /// Files and directories in a backup's tree (the database not counted).
  static constexpr size_t entries = 10000;
  /// Deepest directory level under the backup's top (pki/ and ssh/ are one or two deep).
  static constexpr size_t depth = 8;
  /// Largest file besides the database, and all of them together.
  static constexpr uint64_t file_bytes = 16ull << 20;
  static constexpr uint64_t total_bytes = 256ull << 20;
};

/// A parsed MANIFEST: its `key=value` lines.
struct backup_manifest {
  std::map<std::string, std::string, std::less<>> values;

  /// The value of `key`, or "".
  std::string value(std::string_view key) const;
};

/// The first line of every MANIFEST.
inline constexpr std::string_view backup_manifest_header = "clusterws backup";

/// Parses a MANIFEST: the header line, then `key=value` lines (key: lower-case letters,
/// digits, `.` and `_`; value: printable text), each key once, within backup_limits.
/// @throws std::invalid_argument naming the line and what is wrong with it.
backup_manifest parse_backup_manifest(std::string_view text);

/// Reads the file `name` under the open directory `dir_fd` whole: a regular file, never
/// through a link, at most `max` bytes. @throws std::runtime_error otherwise.
std::string read_regular_file(int dir_fd, const std::string& name, uint64_t max,
                              const std::string& shown);

/// Counts what a copy has taken so far against backup_limits.
struct copy_budget {
  size_t entries = 0;
  uint64_t bytes = 0;
  /// No per-file or total size limit (the database, which LMDB itself checks).
  bool unlimited = false;
  /// The permission bits kept from the source (never more than 0777).
  unsigned mode_mask = 0777;
};

/// Copies the entry `from_name` of the open directory `from_dir` to a new entry `to_name` of
/// `to_dir`: regular files and directories only (a link, device, FIFO or socket is refused
/// with an error naming `shown`), opened with O_NOFOLLOW, created with O_EXCL, and modes (the
/// source's permission bits, never set-id or sticky bits) set with fchmod on what was created.
/// @throws std::runtime_error on a refusal, a limit or a failing system call.
void copy_entry(int from_dir, const std::string& from_name, int to_dir, const std::string& to_name,
                const std::string& shown, copy_budget& budget, size_t depth = 0);

/// Opens the directory `path` (O_DIRECTORY, O_NOFOLLOW unless `follow`).
/// @throws std::runtime_error naming it.
int open_directory(const std::filesystem::path& path, bool follow);

/// Closes a file descriptor at the end of a scope.
class fd_guard {
 public:
  explicit fd_guard(int fd) : fd_(fd) {
  }
  ~fd_guard();
  fd_guard(const fd_guard&) = delete;
  fd_guard& operator=(const fd_guard&) = delete;
  int get() const noexcept {
    return fd_;
  }

 private:
  int fd_;
};

} // namespace cws::cli
