#pragma once

// A node's console log and replay buffer (docs/consoles.md, "Logs"): conserver's layout (one
// file per node, `<dir>/<node>`, raw console bytes plus clusterws's own notes on lines of
// their own), rotated by size (`<node>.1` ... `<node>.<keep>`), an optional timestamp at
// the start of every line. No thread of its own: the caller decides where it writes (the
// console server: its console loop's thread, never an io thread).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "api/result.hpp"

namespace cws::api {

/// How console logs are written (settings console_log_*).
struct console_log_config {
  std::filesystem::path dir;
  /// A log is moved to `<node>.1` before it would grow past this.
  uint64_t max_bytes = 16 * 1024 * 1024;
  /// Rotated files kept (`<node>.1` newest); 0: the log is cut to empty instead. Disk use
  /// per node is at most max_bytes * (keep + 1).
  unsigned keep = 4;
  /// `[2026-11-27T05:40:00Z] ` in front of every line.
  bool timestamps = false;
};

/// The time as the logs and notes write it: ISO 8601 in UTC, to the second.
std::string console_time(std::chrono::system_clock::time_point t);

/// One node's log file. Not thread-safe: one thread writes it.
class console_log {
 public:
  console_log(console_log_config cfg, std::string node);
  ~console_log();
  console_log(const console_log&) = delete;
  console_log& operator=(const console_log&) = delete;

  /// Appends console bytes (rotating first when they would pass max_bytes). A write error is
  /// logged (in bursts) and the bytes are lost; the next append opens the file again.
  void append(std::string_view bytes, std::chrono::system_clock::time_point now);

  /// Appends one of clusterws's notes (`[-- clusterws: ... --]`) on a line of its own.
  void note(std::string_view text, std::chrono::system_clock::time_point now);

  /// Bytes in the current file.
  uint64_t size() const noexcept {
    return size_;
  }

  /// The current file.
  std::filesystem::path path() const {
    return cfg_.dir / node_;
  }

 private:
  bool open();
  void rotate();
  void write_raw(std::string_view text);

  console_log_config cfg_;
  std::string node_;
  int fd_ = -1;
  uint64_t size_ = 0;
  bool line_start_ = true;
};

/// The last bytes of a console, for a watcher who attaches (console_replay_bytes). Memory
/// grows with what was written, up to the capacity, and no further.
class replay_ring {
 public:
  explicit replay_ring(size_t capacity) : cap_(capacity) {
  }
  void push(std::string_view bytes);
  /// The last `n` bytes held (fewer when fewer are held).
  std::string last(size_t n) const;
  size_t size() const noexcept {
    return size_;
  }
  size_t capacity() const noexcept {
    return cap_;
  }

 private:
  size_t cap_;
  std::string buf_; ///< grows to cap_, then circular from head_
  size_t head_ = 0; ///< next write position once full
  size_t size_ = 0;
};

/// The last `lines` lines (at most `max_bytes` bytes of them) of `file`: GET
/// /nodes/{node}/console/log?tail=N. A missing file is a failure (`failed`).
api_result console_log_tail(const std::filesystem::path& file, size_t lines, size_t max_bytes,
                            std::string& out);

} // namespace cws::api
