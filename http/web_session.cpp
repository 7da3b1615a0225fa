#include "http/web_session.hpp"

#include "store/credentials.hpp"

namespace cws::http {

std::string session_cookie(std::string_view header) {
  // `a=1; clusterws_session=ID; b=2`: the first pair of that name counts
  while (!header.empty()) {
    auto semi = header.find(';');
    auto pair = header.substr(0, semi);
    header = semi == std::string_view::npos ? std::string_view{} : header.substr(semi + 1);
    while (!pair.empty() && (pair.front() == ' ' || pair.front() == '\t')) {
      pair.remove_prefix(1);
    }
    auto eq = pair.find('=');
    if (eq == std::string_view::npos || pair.substr(0, eq) != session_cookie_name) {
      continue;
    }
    auto value = pair.substr(eq + 1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
      value.remove_suffix(1);
    }
    if (value.empty() || value.size() > 64
        || value.find_first_not_of("0123456789abcdef-") != std::string_view::npos) {
      return {};
    }
    return std::string{value};
  }
  return {};
}

std::string new_csrf_key() {
  return store::random_hex(32);
}

std::string csrf_token(std::string_view key, std::string_view id) {
  return store::hmac_sha256_hex(key, std::string{"clusterws-csrf:"} + std::string{id});
}

bool csrf_matches(std::string_view key, std::string_view id, std::string_view sent) {
  return !sent.empty() && store::constant_time_equal(csrf_token(key, id), sent);
}

bool same_origin(std::string_view origin, std::string_view host) {
  constexpr std::string_view scheme = "https://";
  return !host.empty() && origin.size() == scheme.size() + host.size()
         && origin.substr(0, scheme.size()) == scheme && origin.substr(scheme.size()) == host;
}

std::string set_session_cookie(std::string_view id, int64_t max_age) {
  return std::string{"Set-Cookie: "} + std::string{session_cookie_name} + "=" + std::string{id}
         + "; Path=/; Max-Age=" + std::to_string(max_age)
         + "; Secure; HttpOnly; SameSite=Strict\r\n";
}

std::string clear_session_cookie() {
  return std::string{"Set-Cookie: "} + std::string{session_cookie_name}
         + "=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=Strict\r\n";
}

} // namespace cws::http
