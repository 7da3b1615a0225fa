#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/codec.hpp"
#include "store/database.hpp"
#include "store/noderange.hpp"
#include "store/regex_value.hpp"

namespace cws::store {

/// The cluster as one read transaction sees it: the noderange universe, and objects as lsdef
/// shows them (group-inherited node values, xcatdefaults postscripts, computed group members).
/// Lives no longer than the transaction it reads.
class cluster_view : public node_universe {
 public:
  /// A view of `txn`. Without `xcatdefaults` node listings leave out the xcatdefaults
  /// postscripts, as xCAT's lsdef -z does: a stanza file restores a node's own values.
  explicit cluster_view(const read_txn& txn, bool xcatdefaults = true);

  // -- node_universe ---------------------------------------------------------

  const std::vector<std::string>& nodes() const override;
  bool is_node(std::string_view name) const override;
  std::optional<std::vector<std::string>> group(std::string_view name) const override;
  std::string attribute(std::string_view node, std::string_view attr) const override;
  std::vector<std::string> dynamic_tests(std::string_view name) const override;

  /// attribute(), and in `group` the group the value is inherited from ("" for the node's
  /// own value or an unset one): what nodels -b shows.
  std::string attribute(std::string_view node, std::string_view attr, std::string& group) const;

  // -- listing ---------------------------------------------------------------

  /// The attributes lsdef shows for object `name` of type `t` (without the key attribute),
  /// or nullopt if it does not exist.
  std::optional<attr_map> display(object_type t, std::string_view name) const;

  /// Finishes a node's attributes as lsdef shows them: the xcatdefaults postscripts in front
  /// of its own (unless this view leaves them out), empty values removed.
  void finish_node(attr_map& attrs) const;

  /// True if the object exists (a group exists if defined or used by any node).
  bool exists(object_type t, std::string_view name) const;

  /// True if node `name` has `hidden` set (skipped by listings unless asked for).
  bool hidden(std::string_view name) const;

  /// The transaction read.
  const read_txn& txn() const noexcept {
    return txn_;
  }

 private:
  const attr_map* group_record(std::string_view name) const;
  /// The wherevals of group `name` if it is dynamic, else nullptr.
  const std::string* dynamic_selections(std::string_view name) const;
  std::string inherited(std::string_view node, record_view own, std::string_view attr,
                        std::string* group) const;
  /// `value` as node `node` reads it: an xCAT expression (store/regex_value.hpp) evaluated.
  std::string for_node(std::string_view node, std::string value) const;

  const read_txn& txn_;
  bool xcatdefaults_;
  mutable std::optional<std::vector<std::string>> nodes_;
  mutable std::unordered_map<std::string, std::optional<attr_map>> groups_;
  /// Expressions parsed so far, by their text (a handful of group rows serve every node).
  mutable std::unordered_map<std::string, std::shared_ptr<const regex_value>> expressions_;
};

} // namespace cws::store
