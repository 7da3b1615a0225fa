#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>

#include "base/log_burst.hpp"

namespace cws::http {

/// One audited request: who, from where, what, how it ended. Never a secret: the path is
/// logged without its query string, and no body.
struct audit_entry {
  std::string client;
  std::string user;
  std::string method;
  std::string path;
  std::string noderange;
  std::string command;
  unsigned status = 0;
};

/// The limits of the audit log, so that no client can fill the disk through it.
struct audit_limits {
  /// Longer path, noderange and command fields are cut here and end with the SHA-256 of the
  /// whole field and its length (`...[sha256:<16 hex>, <n> bytes]`).
  size_t max_field = 512;
  /// Refused requests without valid credentials are not written one by one: they are
  /// counted per client and written as one summary line per period at most.
  std::chrono::seconds summary_period{60};
  /// Clients named in a summary; the rest are counted together.
  size_t summary_clients = 32;
  /// When the file would grow past this, it is moved to `<path>.1` (replacing the last one)
  /// and a new file begun: the disk the database lives on can never be filled by it.
  uint64_t max_bytes = 1ull << 30;
  /// `audit_required`: changes are refused (503) while the log cannot be written, instead of
  /// going on unrecorded.
  bool required = false;
  /// While the log cannot be written, a change (with `required`) tries it again at most this
  /// often.
  std::chrono::milliseconds retry_every{1000};
};

/// The audit log: JSON lines appended to a file, one per change and per nodeshell of an
/// authenticated caller (and per refused attempt of one), plus summaries of requests refused
/// for bad or missing credentials. Safe to call from every io thread.
class audit_log {
 public:
  /// Appends to `path`; an empty path disables the log.
  explicit audit_log(const std::filesystem::path& path, audit_limits limits = {});

  /// Writes the summary of refusals not yet written.
  ~audit_log();

  /// Writes one line (one write(2), so a crash loses nothing written before it). False if
  /// it could not be written (a full disk, an I/O error): then the failure is logged (bursts
  /// summarised), whatever part of the line got out is cut off again (no torn line for the
  /// next one to be glued to), and the next write opens the file again, first writing how
  /// many lines were lost.
  bool write(const audit_entry& e);

  /// Counts a request refused because its credentials were missing or wrong. False if a
  /// summary was due and could not be written.
  bool refused(const std::string& client);

  /// True if changes must be refused now: `audit_required` is set and the log cannot be
  /// written (tried again here, at most every `retry_every`, by writing the record of the
  /// lines lost).
  bool refuses_changes();

  /// Closes the file and opens `path` again, so that a log moved away by logrotate is
  /// continued in a new file (clusterwsd does this on SIGHUP). False if it cannot be opened:
  /// each write then tries again.
  bool reopen();

  /// Follows `limits` from now on (SIGHUP: the audit settings read again). Any thread.
  void set_limits(audit_limits limits);

  /// `text` as the log keeps it: whole if short, else cut with its hash and length.
  static std::string bounded(const std::string& text, size_t max);

 private:
  /// Opens `path_` for appending, owner-only; false if it cannot. Called under `mu_`.
  bool open();
  /// Appends one line (`object`, to which its recid is added), under the file's flock (the
  /// lock tabprune prunes it under), moving a full file aside first, and after a failure the
  /// record of the lines lost; false (and counted as lost) if it could not. Called under `mu_`.
  bool append(const std::string& object);
  /// Writes `text` whole at the end of the file, or cuts off what got out and returns false.
  bool write_whole(const std::string& text);
  /// Writes the record of the lines lost since the last line written; false if it cannot.
  bool write_lost_record();
  /// Notes a line not written: logged, counted, the file to be opened again.
  void failed(const char* what, int err);
  /// The summary of refusals counted since the last one, if there are any and a period has
  /// passed (or `force`). Called under `mu_`.
  bool write_summary(std::chrono::steady_clock::time_point now, bool force);

  std::filesystem::path path_;
  /// Read under `mu_`, but for the two read on every request without it (below).
  audit_limits limits_;
  std::atomic<bool> required_;
  std::atomic<size_t> max_field_;
  std::mutex mu_;
  int fd_ = -1;
  uint64_t bytes_ = 0;
  /// The recid of the next line (xCAT's auditlog key: tabdump auditlog, tabprune -i).
  long long next_recid_ = 1;
  /// Lines not written since the last one that was; nonzero: the log is failing.
  uint64_t lost_ = 0;
  /// A cut-off part of a line could not be removed: the next line begins on a new line.
  bool torn_ = false;
  std::chrono::steady_clock::time_point last_try_{};
  base::log_burst failures_{base::log_level::error, "audit log not written"};
  /// Refusals counted since `since_`, by client, and those of clients past the table.
  std::map<std::string, uint64_t> refused_;
  uint64_t refused_other_ = 0;
  uint64_t refused_total_ = 0;
  std::chrono::steady_clock::time_point since_{};
};

} // namespace cws::http
