#include "api/tables.hpp"

#include <algorithm>

#include "api/audit_table.hpp"

#include "api/targets.hpp"
#include "base/text.hpp"
#include "store/tables.hpp"

namespace cws::api {

namespace {

using store::table_def;

/// xcatws.cgi's answer to a row filter that matches nothing (a 403).
constexpr const char* no_rows_matched = "No table rows matched specified keys or attributes";

/// The tables of the call, or the failure xcatws.cgi gives for an unknown one.
std::vector<const table_def*> call_tables(const api_call& call, api_result& failure) {
  std::vector<const table_def*> out;
  for (const auto& name : call.tables) {
    const auto* t = store::find_table(name);
    if (t == nullptr) {
      failure = api_result::failure({"No such table: " + base::join_list(call.tables)});
      return {};
    }
    out.push_back(t);
  }
  return out;
}

/// The columns `call.attrs` asks of table `t` (`col` or `t.col`); all when none are named.
std::vector<size_t> wanted_columns(const table_def& t, const api_call& call) {
  std::vector<size_t> out;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    const auto& name = t.columns[i].name;
    bool wanted = call.attrs.empty();
    for (const auto& a : call.attrs) {
      wanted = wanted || a == name || a == t.name + "." + name;
    }
    if (wanted) {
      out.push_back(i);
    }
  }
  return out;
}

store::attr_map row_map(const table_def& t, const store::table_row& row,
                        const std::vector<size_t>& columns) {
  store::attr_map m;
  for (auto i : columns) {
    if (row[i]) {
      m.emplace(t.columns[i].name, *row[i]);
    }
  }
  return m;
}

/// Why a row filter of the caller of `auth` may not test `keys`: a masked column (shown
/// "********" to anyone but root) tested by someone else (N1); "" if it may.
std::string masked_keys(const table_def& t, const store::key_values& keys,
                        const authorization& auth) {
  if (reads_secrets(auth)) {
    return {};
  }
  for (const auto& [column, value] : keys) {
    if (store::is_masked_column(t, column)) {
      return "The row filter tests '" + t.name + "." + column
             + "', whose value only root may read.";
    }
  }
  return {};
}

/// `/tables/auditlog/rows...` and `/tables/eventlog/rows...`: the audit log's lines and no
/// event records (api/audit_table), with getAttribs' keys and the columns asked for.
api_result read_log_table(const std::string& table, const api_call& call) {
  const auto& columns = table == "auditlog" ? auditlog_columns() : eventlog_columns();
  store::key_values keys;
  bool all_rows = call.target.empty() || call.target == "ALLROWS";
  if (!all_rows) {
    if (auto msg = store::parse_key_values(call.target, keys); !msg.empty()) {
      return api_result::failure(errc::bad_request, msg);
    }
  }
  std::vector<size_t> key_columns;
  for (const auto& [k, v] : keys) {
    auto it = std::find(columns.begin(), columns.end(), k);
    if (it == columns.end()) {
      return api_result::failure({no_rows_matched}); // getAttribs' SQL fails: no rows
    }
    key_columns.push_back(static_cast<size_t>(it - columns.begin()));
  }
  std::vector<audit_row> rows;
  if (auto path = audit_log_path(); table == "auditlog" && !path.empty()) {
    try {
      rows = read_audit_log(path);
    } catch (const std::runtime_error& e) {
      return api_result::failure(errc::unavailable, e.what());
    }
  }
  api_result r;
  for (const auto& row : rows) {
    bool match = true;
    for (size_t i = 0; i < key_columns.size(); ++i) {
      match = match && row.row[key_columns[i]].value_or("") == keys[i].second;
    }
    if (!match) {
      continue;
    }
    store::attr_map m;
    for (size_t i = 0; i < columns.size(); ++i) {
      bool wanted = call.attrs.empty();
      for (const auto& a : call.attrs) {
        wanted = wanted || a == columns[i] || a == table + "." + columns[i];
      }
      if (wanted && row.row[i]) {
        m.emplace(columns[i], *row.row[i]);
      }
    }
    r.objects.emplace_back(table, m);
    if (!keys.empty()) {
      break; // getAttribs: the first matching row only
    }
  }
  if (!keys.empty() && r.objects.empty()) {
    return api_result::failure({no_rows_matched});
  }
  return r;
}

} // namespace

api_result read_tables(const store::cluster_view& view, const api_call& call,
                       const authorization& auth, const store::noderange_options& configured) {
  auto opts = caller_options(configured, auth);
  api_result r;
  if (call.tables.empty()) {
    for (const auto& t : store::table_catalog()) {
      r.names.push_back(t.name);
    }
    return r;
  }
  if (call.op == operation::table_rows && call.tables.size() == 1
      && is_log_table(call.tables.front())) {
    return read_log_table(call.tables.front(), call);
  }
  auto tables = call_tables(call, r);
  if (!r.ok()) {
    return r;
  }
  if (call.op == operation::table_nodes) {
    std::vector<std::string> nodes;
    if (call.target.empty()) { // ALLNODES
      nodes = view.nodes();
    } else {
      auto x = store::expand_noderange(call.target, view, noderange_options_for(view, opts));
      if (!x.missing.empty()) {
        return api_result::failure({store::missing_nodes_message(x.missing)});
      }
      nodes = std::move(x.nodes);
    }
    for (const auto* t : tables) {
      auto columns = wanted_columns(*t, call);
      for (const auto& n : nodes) {
        auto row = store::node_row(view, *t, n);
        if (!row) {
          continue;
        }
        if (!reads_secrets(auth)) {
          store::hide_bmc_passwords(*t, *row);
        }
        auto m = row_map(*t, *row, columns);
        m.erase(t->keys.front());
        m.emplace("name", n);
        r.objects.emplace_back(t->name, m);
      }
    }
    return r;
  }
  store::key_values keys;
  bool all_rows = call.target.empty() || call.target == "ALLROWS";
  if (!all_rows) {
    if (tables.size() > 1) {
      return api_result::failure(errc::bad_request,
                                 "currently you can only specify keys for a single table.");
    }
    if (auto msg = store::parse_key_values(call.target, keys); !msg.empty()) {
      return api_result::failure(errc::bad_request, msg);
    }
    // xCAT's getAttribs puts the key in its SQL; a column the table lacks fails the
    // statement, which answers as no row at all (Table.pm), not as an error of its own.
    if (auto msg = store::check_columns(*tables.front(), keys, {}); !msg.empty()) {
      return api_result::failure({no_rows_matched});
    }
    if (auto msg = masked_keys(*tables.front(), keys, auth); !msg.empty()) {
      return api_result::failure({msg});
    }
  }
  for (const auto* t : tables) {
    auto columns = wanted_columns(*t, call);
    bool done = false;
    store::scan_rows(view, *t, auth.user == "root", [&](std::string_view, store::table_row&& row) {
      if (done || !store::row_matches(*t, row, keys)) {
        return;
      }
      done = !keys.empty(); // getAttribs: the first matching row only
      r.objects.emplace_back(t->name, row_map(*t, row, columns));
    });
  }
  if (!keys.empty() && r.objects.empty()) {
    return api_result::failure({no_rows_matched});
  }
  return r;
}

api_result write_tables(store::write_txn& t, const api_call& call, const authorization& auth,
                        const store::noderange_options& opts) {
  api_result r;
  auto tables = call_tables(call, r);
  if (!r.ok()) {
    throw store::rejected{{{}, {}, std::move(r.messages)}};
  }
  if (call.op == operation::table_set_nodes) {
    store::cluster_view view{t};
    auto x = store::expand_noderange(call.target, view, noderange_options_for(view, opts));
    if (!x.missing.empty()) {
      throw store::rejected{{{}, {}, {store::missing_nodes_message(x.missing)}}};
    }
    for (const auto* table : tables) {
      std::vector<store::column_change> changes;
      for (const auto& c : call.changes) {
        auto dot = c.name.find('.');
        if (c.name.substr(0, dot) == table->name) {
          changes.push_back({c.name.substr(dot + 1), c.value});
        }
      }
      if (!changes.empty()) {
        store::change_node_rows(t, *table, x.nodes, changes);
      }
    }
    return {};
  }
  store::key_values keys;
  if (auto msg = store::parse_key_values(call.target, keys); !msg.empty()) {
    throw store::rejected{{{}, {}, {msg}}};
  }
  if (auto msg = masked_keys(*tables.front(), keys, auth); !msg.empty()) {
    throw store::rejected{{{}, {}, {msg}}}; // which rows match must not show either
  }
  if (call.op == operation::table_delete_rows) {
    store::delete_rows(t, *tables.front(), keys);
    return {};
  }
  std::vector<store::column_change> changes;
  for (const auto& c : call.changes) {
    changes.push_back({c.name, c.value});
  }
  store::set_rows(t, *tables.front(), keys, changes);
  return {};
}

} // namespace cws::api
