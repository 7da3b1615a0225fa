#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "base/log.hpp"

namespace cws::base {

/// Logs a kind of event that can come in bursts (TLS handshake failures, failed commits,
/// 503 answers) without a line per event: the first event of a period is written at once,
/// the others are counted, and `flush` (every `log_summary_seconds`) writes one line with
/// how many more there were and the last one's detail. Events are rare next to requests, so
/// a mutex is fine here.
class log_burst {
 public:
  /// `what` begins every line: "TLS handshake failed".
  log_burst(log_level level, std::string what);
  ~log_burst();

  log_burst(const log_burst&) = delete;
  log_burst& operator=(const log_burst&) = delete;

  /// Records one event; `detail` says what and for whom (never a password or a token).
  void note(std::string_view detail);

  /// Writes the period's summary if events were counted, and starts a new period.
  void flush(std::chrono::seconds period);

  /// Flushes every log_burst of the process.
  static void flush_all(std::chrono::seconds period);

 private:
  log_level level_;
  std::string what_;
  std::mutex mu_;
  bool reported_ = false;
  uint64_t suppressed_ = 0;
  std::string last_;
};

} // namespace cws::base
