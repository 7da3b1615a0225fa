#pragma once

// Compiled install templates kept between fetches (docs/provisioning.md, "Templates"): a
// template is parsed once and rendered per node until it, or a file it includes, changes.
// Shared by the boot listener's store readers.
//
// An entry is keyed by the template's path (and the limits it was parsed under) and holds
// the identity of every file read to build it, the template and each #INCLUDE#d file, as
// stat(2) gave it just before the read: device, inode, size, modification and change times.
// A lookup stats those files again (no byte is read) and re-parses when any differs, so an
// edit in place, an atomic replace (a new inode) and a removed include are all seen on the
// next fetch. A file modified within `racy_window` of the lookup is not trusted to be
// complete (a second write within the file system's timestamp granularity would leave its
// times unchanged, as git's "racy" entries): such a template is rendered from a fresh parse
// and not kept.
//
// Bounded by entries and bytes (settings `template_cache_entries`, `template_cache_bytes`):
// the least recently used entries go first. Lookups share a reader lock and mark use with an
// atomic; only an insert takes the lock exclusively.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "api/template.hpp"

namespace cws::api {

/// The cache's bounds (settings `template_cache_entries`, `template_cache_bytes`).
struct template_cache_limits {
  /// Templates kept; 0: none (every fetch parses).
  size_t max_entries = 64;
  /// Bytes of the compiled templates kept, together (a larger template is not kept).
  size_t max_bytes = 16 << 20;
  /// Files modified this recently are not trusted to stay as read (not a setting).
  std::chrono::nanoseconds racy_window = std::chrono::seconds(1);
};

/// Compiled templates by path, revalidated by stat(2) on every lookup. Thread-safe.
class template_cache {
 public:
  explicit template_cache(template_cache_limits limits = {});

  /// The compiled template of `file` (read with its includes under `limits`): the kept one
  /// when none of its files changed, else a fresh parse (kept when it fits the bounds).
  /// @throws template_error as compiled_template::parse does, or naming an unreadable file.
  std::shared_ptr<const compiled_template> get(const std::filesystem::path& file,
                                               const template_limits& limits);

  /// What the cache did so far (tests, diagnostics).
  struct counters {
    uint64_t hits = 0;
    uint64_t parses = 0;
    uint64_t evictions = 0;
    size_t entries = 0;
    size_t bytes = 0;
  };
  counters stats() const;

  /// A file as stat(2) identifies it.
  struct file_id {
    std::string path;
    uint64_t dev = 0;
    uint64_t ino = 0;
    int64_t size = 0;
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
    bool operator==(const file_id& o) const {
      return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns
             && ctime_ns == o.ctime_ns;
    }
  };

 private:
  struct entry {
    std::shared_ptr<const compiled_template> compiled;
    std::vector<file_id> files;
    size_t bytes = 0;
    std::atomic<uint64_t> used{0};
  };

  void keep(const std::string& key, std::shared_ptr<entry> e);

  template_cache_limits limits_;
  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<entry>> entries_;
  size_t bytes_ = 0;
  std::atomic<uint64_t> tick_{0};
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> parses_{0};
  std::atomic<uint64_t> evictions_{0};
};

} // namespace cws::api
