#include "base/log.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace cws::base {

namespace {

std::atomic<int> threshold{static_cast<int>(log_level::info)};

const char* level_word(log_level level) {
  switch (level) {
    case log_level::error: return "error";
    case log_level::warning: return "warning";
    case log_level::notice: return "notice";
    case log_level::info: return "info";
    case log_level::debug: return "debug";
  }
  return "info";
}

/// True if stderr is the journal stream systemd connected (systemd.exec(5), $JOURNAL_STREAM
/// holds its device and inode): then journald adds the time and reads the `<N>` prefix.
bool stderr_is_journal() {
  static const bool journal = [] {
    const char* env = std::getenv("JOURNAL_STREAM");
    struct stat st {};
    if (env == nullptr || fstat(STDERR_FILENO, &st) != 0) {
      return false;
    }
    unsigned long long dev = 0;
    unsigned long long ino = 0;
    return std::sscanf(env, "%llu:%llu", &dev, &ino) == 2 && dev == st.st_dev && ino == st.st_ino;
  }();
  return journal;
}

} // namespace

std::optional<log_level> parse_log_level(std::string_view name) {
  for (auto l : {log_level::error, log_level::warning, log_level::notice, log_level::info,
                 log_level::debug}) {
    if (name == level_word(l)) {
      return l;
    }
  }
  return std::nullopt;
}

void set_log_level(log_level level) {
  threshold.store(static_cast<int>(level), std::memory_order_relaxed);
}

bool log_enabled(log_level level) {
  return static_cast<int>(level) <= threshold.load(std::memory_order_relaxed);
}

void log(log_level level, std::string_view message) {
  if (!log_enabled(level)) {
    return;
  }
  std::string line;
  line.reserve(message.size() + 48);
  if (stderr_is_journal()) {
    line += '<';
    line += static_cast<char>('0' + static_cast<int>(level));
    line += '>';
  } else {
    char stamp[32];
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    line.append(stamp, std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ ", &tm));
  }
  line += level_word(level);
  line += ": ";
  for (char c : message) {
    line += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? ' ' : c;
  }
  line += '\n';
  // one write: whole lines even when threads log at once (stderr is unbuffered anyway)
  for (size_t done = 0; done < line.size();) {
    auto n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) {
      return;
    }
    done += static_cast<size_t>(n);
  }
}

} // namespace cws::base
