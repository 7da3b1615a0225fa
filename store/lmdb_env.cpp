#include "store/lmdb_env.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

namespace cws::store {

void check_lmdb(int rc, const char* what) {
  if (rc == 0) {
    return;
  }
  if (rc == MDB_MAP_FULL) {
    throw map_full{};
  }
  std::string msg = std::string{what} + ": " + mdb_strerror(rc);
  if (rc == ENOSPC) {
    msg = std::string{what} + ": no space left on device; nothing was written";
  }
  throw error{store_errc::database, msg};
}

namespace {

MDB_val to_val(std::string_view s) {
  return MDB_val{s.size(), const_cast<char*>(s.data())};
}

} // namespace

// -- lmdb_env -----------------------------------------------------------------

lmdb_env::lmdb_env(const std::filesystem::path& dir, lmdb_options opts) : opts_(opts) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw error{store_errc::database, "cannot create " + dir.string() + ": " + ec.message()};
  }
  check_lmdb(mdb_env_create(&env_), "mdb_env_create");
  try {
    check_lmdb(mdb_env_set_maxdbs(env_, 16), "mdb_env_set_maxdbs");
    check_lmdb(mdb_env_set_maxreaders(env_, opts.max_readers), "mdb_env_set_maxreaders");
    check_lmdb(mdb_env_set_mapsize(env_, opts.initial_map_size), "mdb_env_set_mapsize");
    // MDB_NOTLS: read transactions are not tied to a thread (actors migrate between threads).
    unsigned flags = MDB_NOTLS;
    if (!opts.durable) {
      flags |= MDB_NOSYNC;
    } else if (opts.defer_meta_sync) {
      flags |= MDB_NOMETASYNC;
    }
    check_lmdb(mdb_env_open(env_, dir.c_str(), flags, 0600), "cannot open database");
    // A process killed mid-read leaves its reader slot behind; a stale slot pins old pages.
    check_lmdb(mdb_reader_check(env_, &stale_cleared_), "mdb_reader_check");
    // Another process may have grown the map beyond our initial size.
    check_lmdb(mdb_env_set_mapsize(env_, 0), "mdb_env_set_mapsize");
  } catch (...) {
    mdb_env_close(env_);
    throw;
  }
}

lmdb_env::~lmdb_env() {
  mdb_env_close(env_);
}

void lmdb_env::sync() const {
  check_lmdb(mdb_env_sync(env_, 1), "mdb_env_sync");
}

void lmdb_env::copy_to(const std::filesystem::path& dir) const {
  std::shared_lock lock{resize_mutex_}; // the copy's read transaction must not see a resize
  check_lmdb(mdb_env_copy2(env_, dir.c_str(), MDB_CP_COMPACT), "mdb_env_copy2");
}

void lmdb_env::copy_to(int fd) const {
  std::shared_lock lock{resize_mutex_};
  check_lmdb(mdb_env_copyfd2(env_, fd, MDB_CP_COMPACT), "mdb_env_copyfd2");
}

size_t lmdb_env::map_size() const {
  MDB_envinfo info;
  mdb_env_info(env_, &info);
  return info.me_mapsize;
}

size_t lmdb_env::last_txnid() const {
  MDB_envinfo info;
  mdb_env_info(env_, &info);
  return info.me_last_txnid;
}

void lmdb_env::release_resident_pages() const {
  // LMDB does not tell where it mapped the file (me_mapaddr is only set with MDB_FIXEDMAP):
  // the mapping of data.mdb is found by its inode. Called under a read transaction, so the
  // map cannot move meanwhile (a resize needs every transaction closed). Dropping a read-only
  // file mapping only costs a later minor fault, so a mistaken match would be harmless.
  const char* path = nullptr;
  struct stat st {};
  if (mdb_env_get_path(env_, &path) != 0 || path == nullptr
      || ::stat((std::string{path} + "/data.mdb").c_str(), &st) != 0) {
    return;
  }
  std::ifstream maps{"/proc/self/maps"};
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long long from = 0;
    unsigned long long to = 0;
    unsigned long long inode = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %*s %*s %llu", &from, &to, perms, &inode) == 4
        && inode == st.st_ino && perms[1] != 'w') {
      madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
    }
  }
}

void lmdb_env::grow() {
  std::unique_lock<std::shared_mutex> guard{resize_mutex_};
  size_t cur = map_size();
  if (cur >= opts_.max_map_size) {
    throw error{store_errc::database, "database is full: map size " + std::to_string(cur >> 20)
                                        + " MiB reached its limit; nothing was written"};
  }
  size_t next = std::min(cur * 2, opts_.max_map_size);
  check_lmdb(mdb_env_set_mapsize(env_, next), "mdb_env_set_mapsize");
}

void lmdb_env::adopt_map_size() {
  std::unique_lock<std::shared_mutex> guard{resize_mutex_};
  check_lmdb(mdb_env_set_mapsize(env_, 0), "mdb_env_set_mapsize");
}

// -- lmdb_txn -----------------------------------------------------------------

lmdb_txn::lmdb_txn(lmdb_env& env, bool write) {
  for (int attempt = 0;; ++attempt) {
    lock_.emplace(env.resize_mutex());
    int rc = mdb_txn_begin(env.handle(), nullptr, write ? 0 : MDB_RDONLY, &txn_);
    if (rc == MDB_MAP_RESIZED && attempt < 3) {
      lock_.reset();
      env.adopt_map_size();
      continue;
    }
    if (rc != 0) {
      lock_.reset();
      txn_ = nullptr;
    }
    check_lmdb(rc, "mdb_txn_begin");
    return;
  }
}

lmdb_txn::lmdb_txn(lmdb_env& env, lmdb_txn& parent) {
  // no lock: the parent holds it on this thread
  int rc = mdb_txn_begin(env.handle(), parent.handle(), 0, &txn_);
  if (rc != 0) {
    txn_ = nullptr;
  }
  check_lmdb(rc, "mdb_txn_begin");
}

lmdb_txn::lmdb_txn(lmdb_txn&& other) noexcept : txn_(other.txn_), lock_(std::move(other.lock_)) {
  other.txn_ = nullptr;
}

lmdb_txn::~lmdb_txn() {
  abort();
}

void lmdb_txn::commit() {
  // Clear the handle first: a failed commit has already freed the transaction.
  MDB_txn* t = txn_;
  txn_ = nullptr;
  MDB_env* env = mdb_txn_env(t);
  int rc = mdb_txn_commit(t);
  lock_.reset();
  if (rc == EIO || rc == ENOSPC) {
    // LMDB reports a write cut short by a full disk as EIO: tell the two apart
    const char* dir = nullptr;
    struct statvfs fs {};
    if (mdb_env_get_path(env, &dir) == 0 && statvfs(dir, &fs) == 0) {
      auto free_bytes = static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize;
      if (rc == ENOSPC || free_bytes < (16ull << 20)) {
        throw error{store_errc::database, "commit: no space left on device ("
                                            + std::to_string(free_bytes >> 10)
                                            + " KiB free); nothing was written"};
      }
    }
    throw error{store_errc::database, std::string{"commit: "} + mdb_strerror(rc)
                                        + " writing the database; nothing "
                                          "was written"};
  }
  check_lmdb(rc, "commit");
}

void lmdb_txn::abort() noexcept {
  if (txn_ != nullptr) {
    mdb_txn_abort(txn_);
    txn_ = nullptr;
  }
  lock_.reset();
}

std::optional<std::string_view> lmdb_txn::get(MDB_dbi dbi, std::string_view key) const {
  MDB_val k = to_val(key);
  MDB_val v;
  int rc = mdb_get(txn_, dbi, &k, &v);
  if (rc == MDB_NOTFOUND) {
    return std::nullopt;
  }
  check_lmdb(rc, "mdb_get");
  return std::string_view{static_cast<const char*>(v.mv_data), v.mv_size};
}

void lmdb_txn::put(MDB_dbi dbi, std::string_view key, std::string_view value) {
  MDB_val k = to_val(key);
  MDB_val v = to_val(value);
  check_lmdb(mdb_put(txn_, dbi, &k, &v, 0), "mdb_put");
}

bool lmdb_txn::del(MDB_dbi dbi, std::string_view key) {
  MDB_val k = to_val(key);
  int rc = mdb_del(txn_, dbi, &k, nullptr);
  if (rc == MDB_NOTFOUND) {
    return false;
  }
  check_lmdb(rc, "mdb_del");
  return true;
}

// -- lmdb_cursor --------------------------------------------------------------

lmdb_cursor::lmdb_cursor(const lmdb_txn& txn, MDB_dbi dbi) {
  check_lmdb(mdb_cursor_open(txn.handle(), dbi, &cur_), "mdb_cursor_open");
}

lmdb_cursor::~lmdb_cursor() {
  mdb_cursor_close(cur_);
}

bool lmdb_cursor::step(MDB_cursor_op op) {
  int rc = mdb_cursor_get(cur_, &k_, &v_, op);
  if (rc == MDB_NOTFOUND) {
    return false;
  }
  check_lmdb(rc, "mdb_cursor_get");
  return true;
}

bool lmdb_cursor::seek(std::string_view key) {
  if (key.empty()) {
    return step(MDB_FIRST);
  }
  k_ = to_val(key);
  return step(MDB_SET_RANGE);
}

bool lmdb_cursor::next() {
  return step(MDB_NEXT);
}

} // namespace cws::store
