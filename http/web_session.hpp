#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cws::http {

/// The web console's session (docs/web.md, "Login, session and CSRF"): a token of the token
/// table (only its SHA-256 is stored) carried in the `clusterws_session` cookie, with a
/// CSRF token bound to it that state-changing requests must send as `X-CSRF-Token`.

/// The cookie's name.
inline constexpr std::string_view session_cookie_name = "clusterws_session";

/// The value of the `clusterws_session` cookie in a Cookie header, or empty when there is
/// none or it is not a token id (hex digits and '-', at most 64).
std::string session_cookie(std::string_view cookie_header);

/// A new key for CSRF tokens (random, per daemon start: a restart gives sessions new CSRF
/// tokens, which GET /session hands out).
std::string new_csrf_key();

/// The CSRF token of session `id`: HMAC-SHA256 of the id under `key`, hex.
std::string csrf_token(std::string_view key, std::string_view id);

/// Whether `sent` is the CSRF token of session `id`, compared in constant time.
bool csrf_matches(std::string_view key, std::string_view id, std::string_view sent);

/// Whether a request's `Origin` is the service's own origin (`https://` + its `Host`).
bool same_origin(std::string_view origin, std::string_view host);

/// The Set-Cookie header line (CRLF-terminated) that hands session `id` to the browser for
/// `max_age` seconds; the one that clears it.
std::string set_session_cookie(std::string_view id, int64_t max_age);
std::string clear_session_cookie();

} // namespace cws::http
