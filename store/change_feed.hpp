#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "store/schema.hpp"

namespace cws::store {

/// What a commit did to one object.
enum class change_kind : uint8_t {
  created, ///< it did not exist before the commit
  changed, ///< it existed before and after, with other values
  removed, ///< it existed before, not after
};

/// "created", "changed" or "removed": the word the event stream sends.
std::string_view change_kind_name(change_kind k);

/// One object a commit created, changed or removed.
struct logged_change {
  object_type type = object_type::node;
  std::string name;
  change_kind kind = change_kind::changed;
  /// The attributes whose values differ before and after, ASCII-sorted (for `created` and
  /// `removed`: every attribute the object had). Tables are views of attributes, so these
  /// name the table rows the commit changed (store/tables).
  std::vector<std::string> attrs;

  friend bool operator==(const logged_change& a, const logged_change& b) {
    return a.type == b.type && a.name == b.name && a.kind == b.kind && a.attrs == b.attrs;
  }
};

/// What one durable commit changed, in the order of the change log: `seq` is the commit's
/// generation (read_txn::generation), so it only grows, across restarts and processes.
struct change_set {
  uint64_t seq = 0;
  std::vector<logged_change> changes;
};

/// Limits of a change set as the log stores it; a record past them is refused as damaged.
struct change_limits {
  /// Objects in one change set (a write of a million-node range is one commit).
  static constexpr size_t max_changes = 4'000'000;
  /// Attributes named for one object.
  static constexpr size_t max_attrs = 65'535;
};

/// The change log's record of `changes` (the key is the sequence number).
std::string encode_changes(const std::vector<logged_change>& changes);

/// Reads a record written by encode_changes: the log is shared with other processes (the CLI
/// tools write it too) and may be damaged, so every length is checked.
/// @throws cws::store::error (store_errc::database) naming what is wrong.
std::vector<logged_change> decode_changes(std::string_view bytes);

/// How many change sets the log keeps by default (meta key `changes.keep`).
constexpr uint64_t default_changes_kept = 10'000;

} // namespace cws::store
