#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cws::store {

/// What the noderange expander needs to know about the cluster. Implemented over a store
/// snapshot (cluster_view) and, in tests, over plain containers.
class node_universe {
 public:
  virtual ~node_universe() = default;

  /// Every node name, ASCII-sorted.
  virtual const std::vector<std::string>& nodes() const = 0;

  /// True if `name` is a node.
  virtual bool is_node(std::string_view name) const = 0;

  /// The members of group `name` (static or dynamic), or nullopt if there is no such group.
  /// A defined group without members yields an empty list.
  virtual std::optional<std::vector<std::string>> group(std::string_view name) const = 0;

  /// The value of `attr` for `node`, including values inherited from its groups; "" if unset.
  virtual std::string attribute(std::string_view node, std::string_view attr) const = 0;

  /// The attributes the selections of dynamic group `name` test (its wherevals); empty for a
  /// static group or a name that is no group. Read before the group is expanded, so that a
  /// caller who may not test one of them is refused (noderange_options::hide_secrets).
  virtual std::vector<std::string> dynamic_tests(std::string_view name) const;
};

/// A cluster without nodes or groups: every name is taken as written (expanding or folding
/// noderanges without a database, like ClusterShell's nodeset).
class empty_universe : public node_universe {
 public:
  const std::vector<std::string>& nodes() const override;
  bool is_node(std::string_view name) const override;
  std::optional<std::vector<std::string>> group(std::string_view name) const override;
  std::string attribute(std::string_view node, std::string_view attr) const override;

 private:
  std::vector<std::string> none_;
};

/// Limits and modes of one expansion. Every limit is explicit.
struct noderange_options {
  /// Report names that are neither nodes nor groups as missing (xcatd's verify mode).
  /// Without it they are returned as given (lsdef/mkdef/chdef/rmdef -o).
  bool verify = true;
  /// Refuse a noderange that would expand to more names than this, before expanding.
  size_t max_nodes = 1'000'000;
  /// Longest regular expression accepted (`/re`, `attr=~re`).
  size_t max_regex = 1024;
  /// Longest noderange text accepted.
  size_t max_length = 64 * 1024;
  /// Allow `^/path/file` atoms (CLI only: the daemon must not read files for clients).
  bool allow_files = false;
  /// Prefix and suffix for bare digits (`10` -> `node10`; also `10-12`, `10+2`): xCAT's
  /// XCAT_NODE_PREFIX and XCAT_NODE_SUFFIX, which the CLI takes from its environment.
  std::string digit_prefix = "node";
  std::string digit_suffix;
  /// A noderange always excluded (site.excludenodes).
  std::string exclude;
  /// The caller may not read masked attributes (store/schema.hpp is_masked_attribute: they
  /// are shown to root only). A selector testing one (`@bmcpassword=~^S`), or a dynamic group
  /// whose wherevals do, refuses the whole noderange (store_errc::forbidden), whether or not
  /// any value matches: the answer tells nothing about the value (docs/security.md N1).
  bool hide_secrets = false;
};

/// The refusal of a test of masked attribute `attr` by a caller who may not read it;
/// `group`: the dynamic group that tests it, if that is how.
/// @throws cws::store::error (forbidden), always.
[[noreturn]] void refuse_masked_test(std::string_view attr, std::string_view group = {});

/// The outcome of an expansion.
struct noderange_result {
  /// The nodes (or, without verify, names), deduplicated and ASCII-sorted.
  std::vector<std::string> nodes;
  /// Atoms or names that are neither nodes nor groups, in the order met (verify mode).
  std::vector<std::string> missing;
};

/// Expands `range` with the complete xCAT grammar (xcat-compat.md §4).
/// @throws cws::store::error (bad_noderange) for unbalanced parentheses, a bad or overlong
///         regex, an overlong text, or an expansion past `max_nodes`; (forbidden) for a test
///         of a masked attribute under `hide_secrets`.
noderange_result expand_noderange(std::string_view range, const node_universe& universe,
                                  const noderange_options& opts = {});

/// Folds names into the shortest noderange that lists them, as ClusterShell's `nodeset -f`:
/// `node1,node2,node3,node10` -> `node[1-3,10]`, keeping zero padding (`node[001-100]`).
std::string fold_nodes(std::vector<std::string> names);

/// `Invalid nodes and/or groups in noderange: a,b` (long lists are shortened).
std::string missing_nodes_message(const std::vector<std::string>& missing);

} // namespace cws::store
