#pragma once

#include <optional>
#include <string_view>

namespace cws::base {

/// How severe a log line is; the values are syslog's priorities (sd-daemon(3) prefixes).
enum class log_level : int {
  error = 3,   ///< something failed: a refused start, a failed commit, a 503
  warning = 4, ///< something went wrong for a client or a node (TLS failures, ssh failures)
  notice = 5,  ///< the service's life: listening, reload, stop
  info = 6,    ///< routine events worth a line
  debug = 7,   ///< details for finding a fault
};

/// The level named `name` (`error`, `warning`, `notice`, `info`, `debug`), if it is one.
std::optional<log_level> parse_log_level(std::string_view name);

/// The lowest-priority level written (the `log_level` setting); `info` until set.
void set_log_level(log_level level);

/// True if a line of `level` is written.
bool log_enabled(log_level level);

/// Writes one line to stderr with one write(2), so lines of several threads never mix.
/// Under journald (stderr is the journal stream, $JOURNAL_STREAM) the line starts with the
/// `<N>` priority prefix journald reads; elsewhere with a UTC timestamp. Either way the level
/// word follows (`error: `). Control characters in `message` become spaces: one message is
/// one line. Never give it a password or a token.
void log(log_level level, std::string_view message);

} // namespace cws::base
