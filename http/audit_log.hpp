#pragma once

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>

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

/// The audit log: JSON lines appended to a file, one per change and per nodeshell (and per
/// refused attempt at one). Safe to call from every io thread.
class audit_log {
 public:
  /// Appends to `path`; an empty path disables the log.
  explicit audit_log(const std::filesystem::path& path);

  /// Writes one line (flushed, so a crash loses nothing written before it).
  void write(const audit_entry& e);

  /// Closes the file and opens `path` again, so that a log moved away by logrotate is
  /// continued in a new file (clusterwsd does this on SIGHUP). False if it cannot be opened:
  /// each write then tries again.
  bool reopen();

 private:
  /// Opens `path_` for appending, owner-only; false if it cannot. Called under `mu_`.
  bool open();

  std::filesystem::path path_;
  std::mutex mu_;
  std::ofstream out_;
};

} // namespace cws::http
