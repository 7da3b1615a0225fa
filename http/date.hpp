#pragma once

#include <string_view>

namespace cws::http {

/// The current time as an HTTP `Date:` value (RFC 9110 IMF-fixdate,
/// `Sun, 06 Nov 1994 08:49:37 GMT`). Formatted once a second per thread: a request pays a
/// clock read and a compare. Valid until the thread's next call.
std::string_view http_date();

} // namespace cws::http
