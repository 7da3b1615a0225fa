#include "http/date.hpp"

#include <ctime>

namespace cws::http {

std::string_view http_date() {
  thread_local std::time_t formatted = -1;
  thread_local char text[32];
  thread_local size_t length = 0;
  std::time_t now = std::time(nullptr);
  if (now != formatted) {
    std::tm tm{};
    gmtime_r(&now, &tm);
    length = std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    formatted = now;
  }
  return {text, length};
}

} // namespace cws::http
