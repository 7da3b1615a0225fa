#pragma once

// xCAT's tables as views over the object store (tabdump, chtab, nodech, /tables): each table
// row is read from, and written to, the attributes of one object. There is one copy of the
// data, so a change through a table is the change lsdef shows, and the other way round.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/cluster_view.hpp"
#include "store/definitions.hpp"
#include "store/schema.hpp"

namespace cws::store {

/// Where the passwd table's `ipmi` row (BMC credentials for nodes without bmcusername and
/// bmcpassword) is kept: object `passwd.ipmi` of the site kind, never a passwd entry, so no
/// API login can ever use it. Its password is kept as given (the BMC needs it).
constexpr std::string_view bmc_credentials_object = "passwd.ipmi";

/// Where the passwd table's `system` row (the nodes' root password, `#CRYPT:passwd:key=system,
/// username=root:password#` of the install templates) is kept: object `passwd.system` of the
/// site kind, apart from the API users like the ipmi row, readable by root only. Its
/// password is kept as given (clear text or a crypt(3) hash); api::system_password_hash
/// renders it.
constexpr std::string_view system_credentials_object = "passwd.system";

/// An attribute that holds a column, when its condition holds (attribute_entry::only_if).
struct column_source {
  std::string_view attr;
  std::string_view only_if;
};

/// One column of a table. A column without sources is not kept by clusterws: it reads as
/// unset and cannot be written.
struct table_column {
  std::string name;
  std::vector<column_source> sources;
};

/// One xCAT table.
struct table_def {
  std::string name;
  /// The objects its rows belong to. `node`: rows for nodes and for groups (xCAT's node
  /// tables hold group rows too).
  object_type type = object_type::node;
  /// The key columns (the first names the row's object, except for networks: net, mask).
  std::vector<std::string> keys;
  /// Every column, in xCAT's order, ending with comments and disable.
  std::vector<table_column> columns;
  /// One line saying what the table holds (tabdump -d).
  std::string description;

  /// The index of column `name`; nullopt if the table has none.
  std::optional<size_t> column(std::string_view name) const;
};

/// Every table clusterws shows, sorted by name.
const std::vector<table_def>& table_catalog();

/// The table named `name`, or nullptr.
const table_def* find_table(std::string_view name);

/// A table row: a value per column (table_def::columns), nullopt where unset.
using table_row = std::vector<std::optional<std::string>>;

/// How a row is read.
enum class row_values {
  own,     ///< as stored (tabdump, getAttribs): a group row's value is not a node's
  resolved ///< as a node reads it: group values inherited, expressions evaluated
};

/// Replaces the BMC passwords of `row` (columns held by `bmcpassword`) with "********": what
/// anyone but root sees (docs/hardware.md).
void hide_bmc_passwords(const table_def& t, table_row& row);

/// The same for an object's attributes (`bmcpassword`).
void hide_bmc_passwords(attr_map& attrs);

/// True if column `column` of `t` is shown as "********" to anyone but root (held by a
/// masked attribute, store/schema.hpp, or passwd.password): a row filter of theirs may not
/// test it (docs/security.md N1).
bool is_masked_column(const table_def& t, std::string_view column);

/// Calls `sink(object, row)` for every row of `t`, in name order (node tables: nodes, then
/// groups). `passwords` false hides passwd.password (shown as "********").
void scan_rows(const cluster_view& view, const table_def& t, bool passwords,
               const std::function<void(std::string_view, table_row&&)>& sink);

/// The row of node `node` in node table `t` as the node reads it (group values inherited),
/// as xCAT's getNodesAttribs answers; nullopt if `t` is not a node table or no column is set.
std::optional<table_row> node_row(const cluster_view& view, const table_def& t,
                                  std::string_view node);

/// `column=value` pairs of a row selection (`node=n1`, `key=xcat,username=root`).
using key_values = std::vector<std::pair<std::string, std::string>>;

/// How a column change applies: set (`=`), add to a comma list (`,=`, `+=`), remove (`^=`).
struct column_change {
  std::string column;
  std::string value;
  list_mode mode = list_mode::set;
};

/// True if `row` of `t` has every key's value (an unset column reads as ""); keys name
/// columns of `t` (check_columns).
bool row_matches(const table_def& t, const table_row& row, const key_values& keys);

/// Parses `a=v,b=w` into key_values. @returns the error message, or "".
std::string parse_key_values(std::string_view text, key_values& out);

/// Checks that every key and change names a column of `t` that clusterws keeps; returns
/// the error message, or "".
std::string check_columns(const table_def& t, const key_values& keys,
                          const std::vector<column_change>& changes);

/// chtab / setAttribs: sets `changes` in every row of `t` matching `keys`, or in a new row
/// made of the keys when none matches. Goes through the definition checks (a value is
/// checked as chdef checks it). @throws rejected.
outcome set_rows(write_txn& txn, const table_def& t, const key_values& keys,
                 const std::vector<column_change>& changes);

/// nodech: sets `changes` in the rows of the named nodes (creating rows, never nodes: a
/// missing node is an error). @throws rejected.
outcome change_node_rows(write_txn& txn, const table_def& t, const std::vector<std::string>& nodes,
                         const std::vector<column_change>& changes);

/// chtab -d / delEntries: deletes every row of `t` matching `keys` (all rows when empty).
/// A row's attributes are cleared; the object goes with it where the row is all it has
/// (a nodelist row is the node). @returns the number of rows deleted. @throws rejected.
size_t delete_rows(write_txn& txn, const table_def& t, const key_values& keys);

/// Largest tabrestore file read (256 MiB, as a stanza input).
constexpr size_t max_csv_bytes = size_t{256} << 20;

/// The rows of a tabrestore file: its header's columns and each line's values.
struct csv_table {
  std::vector<std::string> columns;
  std::vector<table_row> rows;
};

/// Parses tabdump output (`#col,...` then quoted CSV, `""` for a quote, a quoted value may
/// span lines). @returns the error message (xCAT's tabrestore wording), or "".
std::string parse_csv(std::string_view text, const table_def& t, csv_table& out);

/// tabdump's text of one row: `"value"` for a set column (quotes doubled), nothing for unset.
std::string csv_line(const table_row& row);

/// tabrestore: replaces every row of `t` with `rows` (or adds them with `append`), all or
/// nothing. @throws rejected.
outcome restore_rows(write_txn& txn, const table_def& t, const csv_table& rows, bool append);

} // namespace cws::store
