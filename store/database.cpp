#include "store/database.hpp"

#include <algorithm>
#include <cstring>

#include "base/text.hpp"
#include "store/error.hpp"

namespace cws::store {

namespace {

constexpr std::string_view generation_keys[]
  = {"generation", "generation.auth", "generation.membership"};

constexpr const char* db_names[]
  = {"node",   "group", "network",    "osimage", "policy", "site",
     "passwd", "token", "boottarget", "members", "meta",   "changes"};

/// The meta key of the newest change set dropped from the log.
constexpr std::string_view changes_dropped_key = "changes.dropped";

/// A change log key: the sequence number big-endian, so keys sort as numbers.
std::string seq_key(uint64_t seq) {
  std::string key(8, '\0');
  for (int i = 7; i >= 0; --i, seq >>= 8) {
    key[static_cast<size_t>(i)] = static_cast<char>(seq & 0xff);
  }
  return key;
}

uint64_t seq_of(std::string_view key) {
  uint64_t seq = 0;
  for (char c : key) {
    seq = (seq << 8) | static_cast<unsigned char>(c);
  }
  return seq;
}

uint64_t meta_number(const read_txn& txn, std::string_view key, uint64_t fallback) {
  unsigned long long n = 0;
  return base::parse_unsigned(txn.meta(key), n) ? n : fallback;
}

/// The names of the attributes whose values differ between `old` and `now` (both sorted).
std::vector<std::string> differing(const std::optional<record_view>& old, const attr_map& now) {
  std::vector<std::string> out;
  auto it = now.begin();
  if (old) {
    old->for_each([&](std::string_view name, std::string_view value) {
      for (; it != now.end() && it->first < name; ++it) {
        out.push_back(it->first); // only in `now`
      }
      if (it != now.end() && it->first == name) {
        if (it->second != value) {
          out.emplace_back(name);
        }
        ++it;
      } else {
        out.emplace_back(name); // only in `old`
      }
    });
  }
  for (; it != now.end(); ++it) {
    out.push_back(it->first);
  }
  return out;
}

std::string member_key(std::string_view group, std::string_view node) {
  std::string key;
  key.reserve(group.size() + node.size() + 1);
  key.append(group).push_back('\0');
  key.append(node);
  return key;
}

/// `.` or `..`: never an object's name (docs/security.md, "Also").
bool is_dot_name(std::string_view name) {
  return name == "." || name == "..";
}

} // namespace

// -- read_txn -----------------------------------------------------------------

read_txn::read_txn(const database& db, bool write) : db_(db), txn_(db.env(), write) {
  // nop
}

read_txn::read_txn(const database& db, lmdb_txn& parent) : db_(db), txn_(db.env(), parent) {
  // nop
}

std::optional<record_view> read_txn::get(object_type t, std::string_view name) const {
  if (auto bytes = txn_.get(db_.dbi(static_cast<size_t>(t)), name)) {
    return record_view{*bytes};
  }
  return std::nullopt;
}

bool read_txn::exists(object_type t, std::string_view name) const {
  return txn_.get(db_.dbi(static_cast<size_t>(t)), name).has_value();
}

void read_txn::scan(object_type t,
                    const std::function<void(std::string_view, record_view)>& fn) const {
  lmdb_cursor cur{txn_, db_.dbi(static_cast<size_t>(t))};
  size_t n = 0;
  for (bool ok = cur.seek({}); ok; ok = cur.next()) {
    fn(cur.key(), record_view{cur.value()});
    release_now_and_then(++n);
  }
}

std::vector<std::string> read_txn::names(object_type t) const {
  std::vector<std::string> out;
  lmdb_cursor cur{txn_, db_.dbi(static_cast<size_t>(t))};
  for (bool ok = cur.seek({}); ok; ok = cur.next()) {
    out.emplace_back(cur.key());
    release_now_and_then(out.size());
  }
  return out;
}

std::vector<std::string> read_txn::members(std::string_view g) const {
  std::vector<std::string> out;
  auto prefix = member_key(g, {});
  lmdb_cursor cur{txn_, db_.dbi(database::members_db)};
  for (bool ok = cur.seek(prefix); ok && cur.key().substr(0, prefix.size()) == prefix;
       ok = cur.next()) {
    out.emplace_back(cur.key().substr(prefix.size()));
    release_now_and_then(out.size());
  }
  return out;
}

std::vector<std::string> read_txn::group_names() const {
  std::vector<std::string> used;
  {
    lmdb_cursor cur{txn_, db_.dbi(database::members_db)};
    bool ok = cur.seek({});
    while (ok) {
      auto key = cur.key();
      auto group = key.substr(0, key.find('\0'));
      used.emplace_back(group);
      // jump past every member of this group: "group\x01" sorts after "group\0<any>"
      std::string next{group};
      next.push_back('\x01');
      ok = cur.seek(next);
    }
  }
  auto defined = names(object_type::group);
  std::vector<std::string> out;
  out.reserve(used.size() + defined.size());
  std::set_union(used.begin(), used.end(), defined.begin(), defined.end(), std::back_inserter(out));
  return out;
}

bool read_txn::is_group(std::string_view name) const {
  if (exists(object_type::group, name)) {
    return true;
  }
  auto prefix = member_key(name, {});
  lmdb_cursor cur{txn_, db_.dbi(database::members_db)};
  return cur.seek(prefix) && cur.key().substr(0, prefix.size()) == prefix;
}

uint64_t read_txn::generation(counter c) const {
  auto v = txn_.get(db_.dbi(database::meta_db), generation_keys[static_cast<size_t>(c)]);
  uint64_t gen = 0;
  if (v && v->size() == sizeof(gen)) {
    std::memcpy(&gen, v->data(), sizeof(gen));
  }
  return gen;
}

void read_txn::release_resident_pages() const {
  db_.env().release_resident_pages();
}

void read_txn::release_now_and_then(size_t records_read) const {
  if (records_read % release_every == 0) {
    release_resident_pages();
  }
}

std::string read_txn::meta(std::string_view key) const {
  return std::string{txn_.get(db_.dbi(database::meta_db), key).value_or("")};
}

std::vector<std::pair<std::string, std::string>>
read_txn::meta_with_prefix(std::string_view prefix) const {
  std::vector<std::pair<std::string, std::string>> out;
  lmdb_cursor cur{txn_, db_.dbi(database::meta_db)};
  for (bool ok = cur.seek(prefix); ok && cur.key().substr(0, prefix.size()) == prefix;
       ok = cur.next()) {
    out.emplace_back(std::string{cur.key()}, std::string{cur.value()});
  }
  return out;
}

std::string node_meta_key(std::string_view node, std::string_view what) {
  std::string key{"node/"};
  key.append(node).append("/").append(what);
  return key;
}

std::string read_txn::node_meta(std::string_view node, std::string_view what) const {
  return meta(node_meta_key(node, what));
}

std::vector<std::pair<std::string, std::string>>
read_txn::nodes_with_meta(std::string_view what) const {
  std::vector<std::pair<std::string, std::string>> out;
  std::string suffix = "/" + std::string{what};
  for (auto& [k, v] : meta_with_prefix("node/")) {
    std::string_view key{k};
    key.remove_prefix(5);
    if (key.size() > suffix.size() && key.substr(key.size() - suffix.size()) == suffix) {
      auto node = key.substr(0, key.size() - suffix.size());
      if (node.find('/') == std::string_view::npos) {
        out.emplace_back(std::string{node}, std::move(v));
      }
    }
  }
  return out;
}

std::vector<change_set> read_txn::changes_after(uint64_t seq, size_t max_sets) const {
  std::vector<change_set> out;
  lmdb_cursor cur{txn_, db_.dbi(database::changes_db)};
  for (bool ok = cur.seek(seq_key(seq + 1)); ok && out.size() < max_sets; ok = cur.next()) {
    out.push_back({seq_of(cur.key()), decode_changes(cur.value())});
  }
  return out;
}

uint64_t read_txn::changes_dropped() const {
  return meta_number(*this, changes_dropped_key, 0);
}

// -- write_txn ----------------------------------------------------------------

write_txn::write_txn(const database& db) : read_txn(db, true) {
  // nop
}

write_txn::write_txn(const database& db, write_txn& parent)
    : read_txn(db, parent.txn_), nested_(true), parent_(&parent), root_(parent.root_) {
  // nop
}

void write_txn::note_change(object_type t, std::string_view name, bool existed, bool exists,
                            std::vector<std::string> attrs) {
  if (t == object_type::token) {
    return; // sessions, not configuration: they stay out of the log
  }
  auto [at, fresh]
    = change_index_.try_emplace(std::string(1, static_cast<char>(t)).append(name), changes_.size());
  if (fresh) {
    changes_.push_back(
      {{t, std::string{name}, change_kind::changed, std::move(attrs)}, existed, exists});
    return;
  }
  auto& n = changes_[at->second];
  n.exists = exists; // `existed` stays what it was before the first change
  std::vector<std::string> merged;
  merged.reserve(n.change.attrs.size() + attrs.size());
  std::set_union(n.change.attrs.begin(), n.change.attrs.end(), attrs.begin(), attrs.end(),
                 std::back_inserter(merged));
  n.change.attrs = std::move(merged);
}

void write_txn::index_groups(std::string_view node, std::string_view old_groups,
                             std::string_view new_groups) {
  auto before = base::split_list(old_groups);
  auto after = base::split_list(new_groups);
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  auto members = db_.dbi(database::members_db);
  if (before != after) {
    root_->membership_changed_ = true;
  }
  for (const auto& g : before) {
    if (!std::binary_search(after.begin(), after.end(), g)) {
      txn_.del(members, member_key(g, node));
    }
  }
  for (const auto& g : after) {
    if (!std::binary_search(before.begin(), before.end(), g)) {
      if (is_dot_name(g)) {
        throw error{store_errc::bad_request, "The group name '" + g + "' is not valid."};
      }
      txn_.put(members, member_key(g, node), {});
      unchecked_groups_.push_back(g);
    }
  }
}

void write_txn::put(object_type t, std::string_view name, const attr_map& attrs) {
  if (name.empty() || name.size() > 511 || name.find('\0') != std::string_view::npos) {
    throw error{store_errc::bad_request, "invalid object name"};
  }
  if (is_dot_name(name)) { // whatever the path that makes it (definitions check it first)
    throw error{store_errc::bad_request,
                "The object name '" + std::string{name} + "' is not valid."};
  }
  attr_map stored;
  for (const auto& [k, v] : attrs) {
    if (!v.empty()) {
      stored.emplace(k, v);
    }
  }
  auto dbi = db_.dbi(static_cast<size_t>(t));
  touched(t);
  auto old = get(t, name);
  note_change(t, name, old.has_value(), true, differing(old, stored));
  if (t == object_type::group) {
    unchecked_groups_.emplace_back(name);
  }
  if (t == object_type::node) {
    unchecked_nodes_.emplace_back(name);
    std::string old_groups{old ? old->find("groups").value_or("") : ""};
    auto it = stored.find("groups");
    index_groups(name, old_groups, it == stored.end() ? std::string_view{} : it->second);
  }
  txn_.put(dbi, name, encode(stored)); // `old` views pages this may change: used above only
}

bool write_txn::erase(object_type t, std::string_view name) {
  auto dbi = db_.dbi(static_cast<size_t>(t));
  touched(t);
  auto old = get(t, name);
  if (!old) {
    return false;
  }
  note_change(t, name, true, false, differing(old, {}));
  if (t == object_type::node) {
    index_groups(name, old->find("groups").value_or(""), {});
    // the node's derived records go with it (a node defined again starts without them)
    auto prefix = node_meta_key(name, "");
    for (const auto& kv : meta_with_prefix(prefix)) {
      txn_.del(db_.dbi(database::meta_db), kv.first);
    }
  }
  return txn_.del(dbi, name);
}

void write_txn::check_names() {
  auto nodes = std::move(unchecked_nodes_);
  auto groups = std::move(unchecked_groups_);
  unchecked_nodes_.clear();
  unchecked_groups_.clear();
  for (auto* names : {&nodes, &groups}) {
    std::sort(names->begin(), names->end());
    names->erase(std::unique(names->begin(), names->end()), names->end());
  }
  for (const auto& n : nodes) {
    if (exists(object_type::node, n) && is_group(n)) {
      throw error{store_errc::bad_request, "The node name '" + n + "' is already a group name."};
    }
  }
  for (const auto& g : groups) {
    if (exists(object_type::node, g) && is_group(g)) {
      throw error{store_errc::bad_request, "The group name '" + g + "' is already a node name."};
    }
  }
}

void write_txn::set_meta(std::string_view key, std::string_view value) {
  txn_.put(db_.dbi(database::meta_db), key, value);
}

bool write_txn::erase_meta(std::string_view key) {
  return txn_.del(db_.dbi(database::meta_db), key);
}

void write_txn::set_node_meta(std::string_view node, std::string_view what,
                              std::string_view value) {
  set_meta(node_meta_key(node, what), value);
}

bool write_txn::erase_node_meta(std::string_view node, std::string_view what) {
  return erase_meta(node_meta_key(node, what));
}

void write_txn::touched(object_type t) {
  if (t == object_type::passwd || t == object_type::policy) {
    root_->auth_changed_ = true;
  } else if (t == object_type::group || t == object_type::site) {
    root_->membership_changed_ = true; // site: excludenodes changes what every noderange means
  }
}

void write_txn::commit() {
  if (nested_) {
    txn_.commit();
    for (auto& n : changes_) {
      parent_->note_change(n.change.type, n.change.name, n.existed, n.exists,
                           std::move(n.change.attrs));
    }
    return;
  }
  auto bump = [&](counter c) {
    uint64_t gen = generation(c) + 1;
    txn_.put(db_.dbi(database::meta_db), generation_keys[static_cast<size_t>(c)],
             std::string_view{reinterpret_cast<const char*>(&gen), sizeof(gen)});
    return gen;
  };
  log_changes(bump(counter::all));
  if (auth_changed_) {
    bump(counter::auth);
  }
  if (membership_changed_) {
    bump(counter::membership);
  }
  txn_.commit();
}

void write_txn::log_changes(uint64_t seq) {
  std::vector<logged_change> out;
  out.reserve(changes_.size());
  for (auto& n : changes_) {
    if (n.existed && n.exists && n.change.attrs.empty()) {
      continue; // written again as it was
    }
    if (!n.existed && !n.exists) {
      continue; // made and removed in one commit
    }
    n.change.kind = !n.existed  ? change_kind::created
                    : !n.exists ? change_kind::removed
                                : change_kind::changed;
    out.push_back(std::move(n.change));
  }
  changes_.clear();
  change_index_.clear();
  if (out.empty()) {
    return;
  }
  auto dbi = db_.dbi(database::changes_db);
  txn_.put(dbi, seq_key(seq), encode_changes(out));
  auto keep = std::max<uint64_t>(1, meta_number(*this, changes_kept_key, default_changes_kept));
  if (seq <= keep) {
    return;
  }
  // the oldest sets past `keep` commits (not sets: numbers have gaps) go, usually one or none
  uint64_t dropped = 0;
  for (;;) {
    lmdb_cursor cur{txn_, dbi};
    if (!cur.seek({}) || seq_of(cur.key()) > seq - keep) {
      break;
    }
    dropped = seq_of(cur.key());
    std::string key{cur.key()};
    txn_.del(dbi, key);
  }
  if (dropped != 0) {
    set_meta(changes_dropped_key, std::to_string(dropped));
  }
}

// -- database -----------------------------------------------------------------

void database::check_format(lmdb_txn& txn, const std::filesystem::path& dir) {
  auto stored = txn.get(dbis_[meta_db], format_key);
  if (!stored) { // a new database, or one from before the key: this format
    txn.put(dbis_[meta_db], format_key, std::to_string(format_version));
    return;
  }
  unsigned long long found = 0;
  if (!base::parse_unsigned(*stored, found) || found == 0) {
    throw error(store_errc::database, "The database in " + dir.string()
                                        + " has no valid format version ('" + std::string{*stored}
                                        + "'): it is not a clusterws "
                                        + "database, or it is damaged.");
  }
  if (found > format_version) {
    throw error(store_errc::database,
                "The database in " + dir.string() + " has format " + std::to_string(found)
                  + ", newer than this clusterws reads (" + std::to_string(format_version)
                  + "): it was written by a newer clusterws. Install that version (or a "
                    "newer one); this one changes nothing.");
  }
}

database::database(const std::filesystem::path& dir, lmdb_options opts)
    : env_(std::make_unique<lmdb_env>(dir, opts)) {
  for (;;) {
    try {
      lmdb_txn txn{*env_, true};
      for (size_t i = 0; i < db_count; ++i) {
        check_lmdb(mdb_dbi_open(txn.handle(), db_names[i], MDB_CREATE, &dbis_[i]), "mdb_dbi_open");
      }
      check_format(txn, dir);
      txn.commit();
      return;
    } catch (const map_full&) {
      env_->grow();
    }
  }
}

read_txn database::read() const {
  return read_txn{*this, false};
}

database_stats database::stats() const {
  MDB_env* env = env_->handle();
  MDB_envinfo info{};
  MDB_stat stat{};
  check_lmdb(mdb_env_info(env, &info), "mdb_env_info");
  check_lmdb(mdb_env_stat(env, &stat), "mdb_env_stat");
  database_stats out;
  out.map_size_bytes = info.me_mapsize;
  out.map_used_bytes = (info.me_last_pgno + 1) * stat.ms_psize;
  out.reader_slots_used = info.me_numreaders;
  // mdb_reader_list writes one line per reader slot (pid, thread, txnid; '-' when idle)
  mdb_reader_list(
    env,
    [](const char* line, void* ctx) -> int {
      // a slot holding a snapshot ends with its transaction id; the header, idle slots ('-')
      // and "(no active readers)" do not
      std::string_view l{line};
      while (!l.empty() && (l.back() == '\n' || l.back() == ' ')) {
        l.remove_suffix(1);
      }
      auto last = l.substr(l.find_last_of(' ') + 1);
      if (!last.empty() && last.find_first_not_of("0123456789") == std::string_view::npos) {
        ++*static_cast<uint64_t*>(ctx);
      }
      return 0;
    },
    &out.readers_active);
  return out;
}

void database::write(const std::function<void(write_txn&)>& fn) {
  std::vector<batch_op> ops{{fn, nullptr}};
  write_batch(ops);
  if (ops.front().failure) {
    std::rethrow_exception(ops.front().failure);
  }
}

void database::write_batch(std::vector<batch_op>& ops) {
  // Optimistic first: every op straight in one transaction. A nested transaction per op costs
  // LMDB a 2 MiB dirty-list allocation, and ops rarely fail; when one does, the batch is run
  // again with each op in its own nested transaction so that only the failed op is lost.
  bool nested = false;
  for (;;) {
    try {
      write_txn parent{*this};
      bool failed = false;
      for (auto& op : ops) {
        op.failure = nullptr;
        std::unique_ptr<write_txn> child; // (the constructor is private to database)
        if (nested) {
          child.reset(new write_txn{*this, parent});
        }
        try {
          auto& txn = child ? *child : parent;
          op.body(txn);
          txn.check_names(); // N3: the change may not end with a node and a group of one name
          if (child) {
            child->commit();
          }
        } catch (const map_full&) {
          throw;
        } catch (...) {
          op.failure = std::current_exception(); // a child aborts in its destructor
          failed = true;
          if (!nested) {
            break;
          }
        }
      }
      if (failed && !nested && ops.size() > 1) {
        nested = true; // the parent aborts: run the batch again, each op on its own
        continue;
      }
      if (std::any_of(ops.begin(), ops.end(), [](const batch_op& op) { return !op.failure; })) {
        parent.commit(); // else nothing changed: the parent aborts and no generation is used
      }
      return;
    } catch (const map_full&) {
      // every transaction is gone (destructors); grow and run the batch again
      env_->grow();
    }
  }
}

} // namespace cws::store
