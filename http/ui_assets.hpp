#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cws::http {

/// One file of the web console, embedded at build time (cmake/embed_web.cmake writes the
/// table from `node web/build.mjs`'s output; docs/web.md).
struct ui_file {
  /// Its name under /clusterws/ui/ (`index.html`, `app.js`, `LICENSES.txt`).
  std::string_view name;
  std::string_view content_type;
  /// A strong ETag: the SHA-256 of the bytes, quoted.
  std::string_view etag;
  std::string_view body;
};

/// The embedded files, sorted by name (generated).
const ui_file* ui_files_begin();
const ui_file* ui_files_end();

/// The embedded file named `name`, or nullptr.
const ui_file* find_ui_file(std::string_view name);

/// The headers every answer of the web console carries (docs/web.md): the page's
/// Content-Security-Policy, `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`;
/// each line ends with CRLF.
std::string_view ui_security_headers();

/// How the service answers a request for the web console, before any routing: a file, a
/// 304, a 404, a 405 or the redirect of `/`.
struct ui_answer {
  unsigned status = 200;
  /// The file sent (200; HEAD sends its length only); nullptr for the others.
  const ui_file* file = nullptr;
  /// Header lines beyond the usual ones (CRLF-terminated): ETag, Location, Allow, the
  /// security headers.
  std::string headers;
  /// The body of a refusal (JSON in the API's error shape).
  std::string body;
};

/// The answer when `path` (no query) is the web console's: `/`, `/clusterws/ui`,
/// `/clusterws/ui/<file>` (also under /xcatws); nullopt for every other path. GET and HEAD
/// only; `if_none_match` is the request's If-None-Match (a 304 when it names the file's ETag).
std::optional<ui_answer> answer_ui(std::string_view method, std::string_view path,
                                   std::string_view if_none_match);

} // namespace cws::http
