#pragma once

#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/change_feed.hpp"
#include "store/codec.hpp"
#include "store/lmdb_env.hpp"
#include "store/schema.hpp"

namespace cws::store {

class database;

/// A consistent snapshot of the database. Views it returns die with the transaction.
/// Must not outlive its database; a thread holding one must not start a write.
class read_txn {
 public:
  read_txn(read_txn&&) noexcept = default;
  virtual ~read_txn() = default;

  /// The object `name` of type `t`, if it exists.
  std::optional<record_view> get(object_type t, std::string_view name) const;

  /// True if the object exists.
  bool exists(object_type t, std::string_view name) const;

  /// Calls `fn(name, record)` for every object of type `t`, in ASCII name order.
  void scan(object_type t, const std::function<void(std::string_view, record_view)>& fn) const;

  /// Names of every object of type `t`, ASCII-sorted.
  std::vector<std::string> names(object_type t) const;

  /// Static members of group `g` (nodes whose `groups` attribute lists it), ASCII-sorted.
  std::vector<std::string> members(std::string_view g) const;

  /// Every group name: defined group objects plus every name used in a node's `groups`.
  std::vector<std::string> group_names() const;

  /// True if `name` is a group: a group object, or a name in some node's `groups` (as the
  /// noderange resolves it).
  bool is_group(std::string_view name) const;

  /// What a generation counter counts.
  enum class counter : uint8_t {
    all,        ///< every committed write: equal values mean equal contents
    auth,       ///< writes to policy or passwd (what authorization reads)
    membership, ///< changes of group membership (node groups, group objects) and of the site
                ///< (excludenodes)
  };

  /// A generation counter, bumped by every commit that changed what it counts.
  uint64_t generation(counter c = counter::all) const;

  /// An internal setting (e.g. `xcatdefaults.postscripts`); "" if unset.
  std::string meta(std::string_view key) const;

  /// Every internal setting whose key starts with `prefix` (e.g. the job records, `job.`), as
  /// (key, value) in key order.
  std::vector<std::pair<std::string, std::string>> meta_with_prefix(std::string_view prefix) const;

  /// A per-node internal record `what` of `node` ("" if unset). Per-node records are derived
  /// state the store removes with its node (docs/architecture.md, "Per-node internal
  /// records"): meta keys `node/<node>/<what>`, deleted by the transaction that removes or
  /// renames the node (rmdef, chdef -n, mkdef -f), so a node defined again under the same
  /// name starts without them. Like every meta record, they stay out of the change log.
  std::string node_meta(std::string_view node, std::string_view what) const;

  /// Every node holding record `what`, as (node, value) in node-name order.
  std::vector<std::pair<std::string, std::string>> nodes_with_meta(std::string_view what) const;

  /// The change log after `seq`: at most `max_sets` change sets, oldest first. Every commit
  /// that created, changed or removed an object (tokens aside) leaves one, keyed by its
  /// generation, whichever process made it; a commit that wrote only values already there
  /// leaves none, so sequence numbers have gaps. An object written more than once in one
  /// commit names every attribute any of its writes changed: more than changed, never less.
  /// @throws cws::store::error on a damaged record.
  std::vector<change_set> changes_after(uint64_t seq, size_t max_sets) const;

  /// The newest sequence number the log no longer holds (0: nothing was dropped). A reader
  /// whose last seen number is below it has missed change sets and must start over.
  uint64_t changes_dropped() const;

  /// Drops this process's resident pages of the database map (lmdb_env): a long scan calls
  /// it every `release_every` records, so reading a large store does not keep the whole file
  /// resident (scan, names and members do it themselves).
  void release_resident_pages() const;

  /// Records a long scan reads between two calls of release_resident_pages.
  static constexpr size_t release_every = 50000;

  /// The underlying transaction.
  const lmdb_txn& raw() const noexcept {
    return txn_;
  }

 protected:
  friend class database;
  read_txn(const database& db, bool write);

  /// Releases the resident pages after every `release_every` records a scan has read.
  void release_now_and_then(size_t records_read) const;

  read_txn(const database& db, lmdb_txn& parent);

  const database& db_;
  lmdb_txn txn_;
};

/// A write transaction: all of its changes commit together or not at all.
class write_txn : public read_txn {
 public:
  /// Creates or replaces object `name`. Empty values are not stored. For nodes, the group
  /// index follows the `groups` attribute in the same transaction.
  void put(object_type t, std::string_view name, const attr_map& attrs);

  /// Deletes object `name`; false if it did not exist.
  bool erase(object_type t, std::string_view name);

  /// Sets an internal setting.
  void set_meta(std::string_view key, std::string_view value);

  /// Removes an internal setting; false if it was not set.
  bool erase_meta(std::string_view key);

  /// Sets per-node record `what` of `node` (read_txn::node_meta); `node` must be a node name
  /// (no `/`), `what` a word of its user's (`install.token`).
  void set_node_meta(std::string_view node, std::string_view what, std::string_view value);

  /// Removes per-node record `what` of `node`; false if it was not set.
  bool erase_node_meta(std::string_view node, std::string_view what);

  /// The meta key holding how many change sets the log keeps (default_changes_kept when
  /// unset); every writer, the tools included, drops the oldest past it at commit.
  static constexpr std::string_view changes_kept_key = "changes.keep";

  /// Checks the names put since the last check, as the transaction holds them now: a node's
  /// name may not be a group's, a group's (an object, or a name in a node's `groups`) not a
  /// node's, or the one would shadow the other in every noderange (docs/security.md N3).
  /// database::write_batch calls it after each change, so a change may pass through such a
  /// state (tabrestore) but not end in one. @throws error (bad_request) for the first clash.
  void check_names();

 private:
  friend class database;
  explicit write_txn(const database& db);
  write_txn(const database& db, write_txn& parent);
  void commit();
  void touched(object_type t);
  /// Notes for the change log that `name` existed (`existed`) and exists now (`exists`),
  /// with the attributes that differ.
  void note_change(object_type t, std::string_view name, bool existed, bool exists,
                   std::vector<std::string> attrs);
  /// Appends this commit's change set to the log as number `seq` and drops the oldest sets
  /// past `changes.keep`.
  void log_changes(uint64_t seq);
  bool nested_ = false;
  /// The transaction a nested one commits into (its changes join the parent's then).
  write_txn* parent_ = nullptr;
  /// The outermost transaction, which bumps the counters at commit.
  write_txn* root_ = this;
  /// What this transaction changed, object by object, in the order of first change.
  struct noted_change {
    logged_change change;
    bool existed = false;
    bool exists = false;
  };
  std::vector<noted_change> changes_;
  /// Where each object (its type byte, then its name) is in `changes_`.
  std::unordered_map<std::string, size_t> change_index_;
  bool auth_changed_ = false;
  bool membership_changed_ = false;
  /// Names put since check_names last ran: nodes, and groups (objects, or newly in a node's
  /// `groups`).
  std::vector<std::string> unchecked_nodes_;
  std::vector<std::string> unchecked_groups_;
  void index_groups(std::string_view node, std::string_view old_groups,
                    std::string_view new_groups);
};

/// The meta key of per-node record `what` of `node`: `node/<node>/<what>` (a node name has
/// no `/`, so one node's keys never start another's prefix).
std::string node_meta_key(std::string_view node, std::string_view what);

/// What the database shows of itself, for the metrics page: plain numbers from LMDB.
struct database_stats {
  /// The map's size (it grows by doubling).
  uint64_t map_size_bytes = 0;
  /// Bytes of the map in use: the pages up to the last one.
  uint64_t map_used_bytes = 0;
  /// Read snapshots open now, of every process on the database.
  uint64_t readers_active = 0;
  /// Reader slots ever taken (of `lmdb_options::max_readers`).
  uint64_t reader_slots_used = 0;
};

/// The cluster object database: one LMDB environment under `<home>/db`.
class database {
 public:
  /// Opens or creates the database in directory `dir`.
  /// @throws cws::store::error when it cannot be opened.
  database(const std::filesystem::path& dir, lmdb_options opts = {});

  /// Starts a read-only snapshot.
  read_txn read() const;

  /// Runs `fn` in one write transaction and commits it. If `fn` throws, nothing is written.
  /// A full map is grown and `fn` runs again, so `fn` must only change the database.
  /// @throws whatever `fn` throws, or cws::store::error on a database failure.
  void write(const std::function<void(write_txn&)>& fn);

  /// One change of a batch and, after the batch, how it ended.
  struct batch_op {
    std::function<void(write_txn&)> body;
    /// What `body` threw (it was rolled back alone), or null if it is in the commit.
    std::exception_ptr failure;
  };

  /// Group commit: runs every op in its own nested transaction of one transaction and
  /// commits once, so the whole batch costs one fsync. An op that throws is rolled back alone.
  /// @throws cws::store::error if the commit fails; then nothing of the batch is written.
  void write_batch(std::vector<batch_op>& ops);

  /// The format of the data this code writes and reads. A database of a newer format is
  /// refused when opened; an older one is upgraded (none exists yet).
  static constexpr unsigned format_version = 1;

  /// The meta key holding a database's format version.
  static constexpr std::string_view format_key = "format.version";

  /// The LMDB environment.
  lmdb_env& env() const noexcept {
    return *env_;
  }

  /// Its size and readers now (a few system calls and a walk of the reader table; no
  /// transaction). Any thread. @throws cws::store::error if LMDB cannot tell.
  database_stats stats() const;

 private:
  friend class read_txn;
  friend class write_txn;
  enum extra_db : size_t { members_db = object_type_count, meta_db, changes_db, db_count };
  /// Writes the format of a new database, refuses a newer or unreadable one.
  void check_format(lmdb_txn& txn, const std::filesystem::path& dir);
  MDB_dbi dbi(size_t i) const noexcept {
    return dbis_[i];
  }
  std::unique_ptr<lmdb_env> env_;
  MDB_dbi dbis_[db_count] = {};
};

} // namespace cws::store
