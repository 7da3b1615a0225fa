#pragma once

#include <lmdb.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <shared_mutex>
#include <string_view>

#include "store/error.hpp"

namespace cws::store {

/// Tuning of one LMDB environment. Every limit is explicit.
struct lmdb_options {
  /// Map size at open; the map grows by doubling when a write finds it full.
  size_t initial_map_size = size_t{256} << 20;
  /// The map never grows past this.
  size_t max_map_size = size_t{64} << 30;
  /// Concurrent reader slots shared by every process using the environment.
  unsigned max_readers = 1022;
  /// fsync on every commit. Only benchmarks and throwaway homes turn this off.
  bool durable = true;
  /// With `durable`: a commit flushes its data pages but leaves the meta page that makes it
  /// the current state to a later `sync` (LMDB's MDB_NOMETASYNC; integrity is kept, a crash
  /// before the sync undoes the commit). The daemon's writer then tells the writers their
  /// commit is durable only after `sync` or the next commit (see `last_txnid`).
  bool defer_meta_sync = false;
};

/// Owns one LMDB environment (a directory holding data.mdb and lock.mdb).
/// Safe for several processes: stale reader slots are cleared at open and a map grown
/// by another process is adopted on the next transaction.
class lmdb_env {
 public:
  /// Opens (creating if needed) the environment in `dir`.
  /// @throws cws::store::error on failure.
  lmdb_env(const std::filesystem::path& dir, lmdb_options opts);

  ~lmdb_env();

  lmdb_env(const lmdb_env&) = delete;
  lmdb_env& operator=(const lmdb_env&) = delete;

  /// The raw handle.
  MDB_env* handle() const noexcept {
    return env_;
  }

  /// Doubles the map size. Call with no transaction of this process open.
  /// @throws cws::store::error when the map is already at `max_map_size`.
  void grow();

  /// Adopts a map size set by another process (after MDB_MAP_RESIZED).
  void adopt_map_size();

  /// Current map size in bytes.
  size_t map_size() const;

  /// Flushes every commit made so far to disk (fdatasync; with `defer_meta_sync` the only way
  /// a commit becomes durable). Any thread, also while a write transaction runs.
  /// @throws cws::store::error on failure.
  void sync() const;

  /// The id of the last committed transaction (of any process). A commit's own flush also
  /// flushes the meta pages written before it: with `defer_meta_sync`, a commit is durable
  /// once this has moved past it (every process's commits flush their data first).
  size_t last_txnid() const;

  /// True when commits leave the meta page's flush to `sync` (`defer_meta_sync`).
  bool defers_meta_sync() const noexcept {
    return opts_.durable && opts_.defer_meta_sync;
  }

  /// Writes a consistent, compacted copy of the environment (one read snapshot, as
  /// `mdb_copy -c`) to `data.mdb` in the existing empty directory `dir`. Writers go on
  /// meanwhile, in this process and others.
  /// @throws cws::store::error on failure.
  void copy_to(const std::filesystem::path& dir) const;

  /// The same copy written to the open file `fd` (a file the caller created, with the mode
  /// and on the path it chose: never a name that can be swapped for a link meanwhile).
  /// @throws cws::store::error on failure.
  void copy_to(int fd) const;

  /// Drops this process's mapping of the map's pages (MADV_DONTNEED): they stay in the page
  /// cache and a later read maps them again. The map is read-only (no MDB_WRITEMAP), so
  /// nothing is lost; a scan of a large database thus does not keep its size resident.
  void release_resident_pages() const;

  /// Readers hold this shared; resizing the map takes it exclusively, because LMDB
  /// forbids a resize while this process has a transaction open.
  std::shared_mutex& resize_mutex() noexcept {
    return resize_mutex_;
  }

  /// Number of stale reader slots cleared at open.
  int stale_readers_cleared() const noexcept {
    return stale_cleared_;
  }

 private:
  MDB_env* env_ = nullptr;
  lmdb_options opts_;
  mutable std::shared_mutex resize_mutex_;
  int stale_cleared_ = 0;
};

/// A move-only LMDB transaction; the destructor aborts what was not committed.
class lmdb_txn {
 public:
  /// Begins a transaction; adopts a map resized by another process.
  /// @throws cws::store::error on failure.
  lmdb_txn(lmdb_env& env, bool write);

  /// Begins a write transaction nested in `parent` (same thread): it commits into the parent
  /// or aborts alone.
  /// @throws cws::store::error on failure.
  lmdb_txn(lmdb_env& env, lmdb_txn& parent);

  lmdb_txn(lmdb_txn&& other) noexcept;
  lmdb_txn& operator=(lmdb_txn&&) = delete;
  lmdb_txn(const lmdb_txn&) = delete;

  ~lmdb_txn();

  /// Commits. A failed commit is not retried.
  /// @throws cws::store::error on failure; map_full() tells the caller to grow and retry.
  /// @post handle() == nullptr
  void commit();

  /// Aborts.
  /// @post handle() == nullptr
  void abort() noexcept;

  /// The raw handle.
  MDB_txn* handle() const noexcept {
    return txn_;
  }

  /// Reads `key` from `dbi`; the view lives until the transaction ends or writes.
  std::optional<std::string_view> get(MDB_dbi dbi, std::string_view key) const;

  /// Writes `key` = `value`.
  void put(MDB_dbi dbi, std::string_view key, std::string_view value);

  /// Deletes `key`; false if it was absent.
  bool del(MDB_dbi dbi, std::string_view key);

 private:
  MDB_txn* txn_ = nullptr;
  std::optional<std::shared_lock<std::shared_mutex>> lock_;
};

/// A cursor over one database, closed when it goes out of scope (before commit).
class lmdb_cursor {
 public:
  lmdb_cursor(const lmdb_txn& txn, MDB_dbi dbi);
  ~lmdb_cursor();
  lmdb_cursor(const lmdb_cursor&) = delete;
  lmdb_cursor& operator=(const lmdb_cursor&) = delete;

  /// Positions at the first key >= `key` (or the first key when empty); false at the end.
  bool seek(std::string_view key);

  /// Advances; false at the end.
  bool next();

  std::string_view key() const noexcept {
    return {static_cast<const char*>(k_.mv_data), k_.mv_size};
  }

  std::string_view value() const noexcept {
    return {static_cast<const char*>(v_.mv_data), v_.mv_size};
  }

 private:
  bool step(MDB_cursor_op op);
  MDB_cursor* cur_ = nullptr;
  MDB_val k_{0, nullptr};
  MDB_val v_{0, nullptr};
};

/// Thrown by a write or commit that found the map full; the caller grows and retries.
class map_full : public error {
 public:
  map_full() : error(store_errc::database, "database map is full") {
    // nop
  }
};

/// Throws cws::store::error for LMDB return code `rc` (no-op when rc == 0).
void check_lmdb(int rc, const char* what);

} // namespace cws::store
