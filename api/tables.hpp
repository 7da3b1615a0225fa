#pragma once

// xCAT's table API over the store (xcat-compat.md §1 "tables"): the reads and writes of
// /tables, on the table view of store/tables.hpp.

#include "api/auth.hpp"
#include "api/call.hpp"
#include "api/result.hpp"
#include "store/cluster_view.hpp"
#include "store/noderange.hpp"

namespace cws::api {

/// table_nodes and table_rows: one object_record per row, named after its table, in the
/// order of `call.tables` (no tables: the names of every table). passwd.password and the BMC
/// passwords are shown to root only, and nobody else may filter rows on them (a failure).
api_result read_tables(const store::cluster_view& view, const api_call& call,
                       const authorization& auth, const store::noderange_options& opts);

/// table_set_nodes, table_set_rows and table_delete_rows in `t`; `opts` are the caller's
/// (caller_options), and a row filter on a masked column is refused as in read_tables.
/// @throws store::rejected (or store::error) to roll it back.
api_result write_tables(store::write_txn& t, const api_call& call, const authorization& auth,
                        const store::noderange_options& opts);

} // namespace cws::api
