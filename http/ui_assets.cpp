#include "http/ui_assets.hpp"

#include <algorithm>

namespace cws::http {

namespace {

/// Whether an If-None-Match list names `etag` (or is `*`).
bool matches_etag(std::string_view list, std::string_view etag) {
  while (!list.empty()) {
    auto comma = list.find(',');
    auto item = list.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) {
      item.remove_prefix(1);
    }
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) {
      item.remove_suffix(1);
    }
    if (item.substr(0, 2) == "W/") {
      item.remove_prefix(2); // weak comparison, as RFC 9110 says for If-None-Match
    }
    if (item == "*" || item == etag) {
      return true;
    }
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
  }
  return false;
}

std::string error_body(std::string_view message) {
  return std::string{"{\"error\":\""} + std::string{message} + "\",\"errorcode\":\"2\"}";
}

} // namespace

const ui_file* find_ui_file(std::string_view name) {
  auto it = std::lower_bound(ui_files_begin(), ui_files_end(), name,
                             [](const ui_file& f, std::string_view n) { return f.name < n; });
  return it != ui_files_end() && it->name == name ? it : nullptr;
}

std::string_view ui_security_headers() {
  return "Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self'; "
         "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
         "form-action 'self'\r\n"
         "X-Content-Type-Options: nosniff\r\n"
         "Referrer-Policy: no-referrer\r\n";
}

std::optional<ui_answer> answer_ui(std::string_view method, std::string_view path,
                                   std::string_view if_none_match) {
  ui_answer a;
  a.headers = std::string{ui_security_headers()};
  bool read = method == "GET" || method == "HEAD";
  if (path == "/") {
    if (!read) {
      return std::nullopt; // the API's own answer for `/` (404)
    }
    a.status = 302;
    a.headers += "Location: /clusterws/ui/\r\n";
    return a;
  }
  std::string_view rest;
  for (std::string_view base : {"/clusterws/ui", "/xcatws/ui"}) {
    if (path.substr(0, base.size()) == base
        && (path.size() == base.size() || path[base.size()] == '/')) {
      rest = path.substr(base.size());
      break;
    }
    if (base == "/xcatws/ui") {
      return std::nullopt;
    }
  }
  if (!read) {
    a.status = 405;
    a.headers += "Allow: GET, HEAD\r\n";
    a.body = error_body("request method '" + std::string{method}
                        + "' is not supported on the web console's files");
    return a;
  }
  if (rest.empty()) {
    a.status = 302; // /clusterws/ui -> /clusterws/ui/: the page's relative links need the slash
    a.headers += "Location: " + std::string{path} + "/\r\n";
    return a;
  }
  rest.remove_prefix(1);
  const ui_file* f = find_ui_file(rest.empty() ? std::string_view{"index.html"} : rest);
  if (f == nullptr) {
    a.status = 404;
    a.body = error_body("Unsupported resource.");
    return a;
  }
  a.headers += "Cache-Control: no-cache\r\nETag: " + std::string{f->etag} + "\r\n";
  a.file = f;
  if (!if_none_match.empty() && matches_etag(if_none_match, f->etag)) {
    a.status = 304;
  }
  return a;
}

} // namespace cws::http
