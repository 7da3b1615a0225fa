#pragma once

// xCAT's auditlog and eventlog tables as views: auditlog is the audit log file clusterwsd
// writes (http/audit_log), one row per line, in Schema.pm's column layout; eventlog is empty
// (clusterwsd keeps no BMC event records: reventlog reads each BMC's SEL when asked).
// tabprune prunes the file in place under the lock clusterwsd writes it with.

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "store/tables.hpp"

namespace cws::api {

/// Schema.pm's auditlog columns: recid audittime userid clientname clienttype command
/// noderange args status comments disable.
const std::vector<std::string>& auditlog_columns();

/// Schema.pm's eventlog columns: recid eventtime eventtype monitor monnode node application
/// component id severity message rawdata comments disable.
const std::vector<std::string>& eventlog_columns();

/// One line of the audit log as an auditlog row.
struct audit_row {
  /// The line's `recid` (lines written before clusterws numbered them: 0).
  long long recid = 0;
  /// Seconds since the epoch of its `time` (-1 if unreadable).
  std::time_t when = -1;
  /// The row, in auditlog_columns() order.
  store::table_row row;
};

/// The rows of audit log text (JSON lines), in file order; lines that are not a JSON object
/// are skipped.
std::vector<audit_row> audit_rows(const std::string& text);

/// The audit log's rows: `<path>.1` (the file moved aside at audit_log_max_bytes) first,
/// then `path`, read under the writer's lock.
std::vector<audit_row> read_audit_log(const std::filesystem::path& path);

/// What tabprune removes (tabutils.pm): every row (`-a`), the oldest N (`-n`, rows with a
/// recid below the smallest plus N), those below a recid (`-i`), a percentage of the recid
/// range (`-p`), or those older than N days (`-d`).
struct prune_request {
  enum class kind { all, number, recid, percent, days };
  kind what = kind::all;
  long long value = 0;
};

/// What a prune did.
struct prune_result {
  /// The rows removed (tabprune -V prints them).
  std::vector<audit_row> removed;
  /// There were no rows (-n, -p: `Nothing to prune from auditlog.`).
  bool empty = false;
};

/// Prunes the audit log at `path` (and `<path>.1`) as `req` says, in place: under the lock
/// clusterwsd takes for every line (flock on the file, its inode checked against the path so
/// a rotation in between is seen), the lines kept are moved to the front and the file cut,
/// so clusterwsd's open descriptor (O_APPEND) goes on writing at the new end. A missing file
/// is an empty log. @throws std::runtime_error naming the file that could not be read or
/// written.
prune_result prune_audit_log(const std::filesystem::path& path, const prune_request& req,
                             std::time_t now);

/// The audit log the REST table views read (`/tables/auditlog/rows`): clusterwsd names it
/// when its audit log starts; empty (the default, and with `audit_log = off`): none. Any
/// thread.
void set_audit_log_path(const std::filesystem::path& path);
std::filesystem::path audit_log_path();

/// True for `auditlog` and `eventlog`, the tables these views answer for.
bool is_log_table(const std::string& name);

/// The recid to give the next line of the log at `path`: one past the last one in it (or in
/// `<path>.1` when it is empty); 1 for a new log.
long long next_audit_recid(const std::filesystem::path& path);

} // namespace cws::api
