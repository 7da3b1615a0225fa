// libFuzzer: routing any method, target and body gives an answer or a call, never a crash; the
// same for the web console's answers (http/ui_assets) and its session cookie and CSRF header.

#include <cstdint>
#include <string>

#include "http/render.hpp"
#include "http/router.hpp"
#include "http/ui_assets.hpp"
#include "http/web_session.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string in{reinterpret_cast<const char*>(data), size};
  static const char* methods[] = {"GET", "PUT", "POST", "DELETE", "PATCH", "HEAD"};
  cws::http::http_input req;
  req.method = methods[size > 0 ? data[0] % 6 : 0];
  auto split = in.find('\n');
  req.target
    = in.substr(size > 0 ? 1 : 0, split == std::string::npos ? std::string::npos : split - 1);
  if (split != std::string::npos) {
    req.body = in.substr(split + 1);
  }
  req.content_type = "application/json";
  if (size > 0 && data[0] & 0x10) {
    req.authorization = "Basic " + in.substr(0, std::min<size_t>(in.size(), 24));
  } else {
    // the web console's cookie (parsed from the input), a CSRF token, an Origin
    req.cookie = in.substr(0, std::min<size_t>(in.size(), 80));
    req.csrf = in.substr(std::min<size_t>(in.size(), 8), 64);
    req.origin = in.substr(std::min<size_t>(in.size(), 4), 32);
    req.host = "127.0.0.1:8443";
    req.websocket = size > 1 && data[1] & 1;
  }
  req.client = "127.0.0.1";
  cws::http::answer_ui(req.method, req.target, req.body);
  cws::http::session_cookie(in);
  cws::http::router_limits limits;
  limits.csrf_key = "fuzz-key";
  auto r = cws::http::route(req, limits);
  if (r.answer) {
    cws::http::render(r, *r.answer);
  } else {
    cws::api::api_result res; // render what an empty success would look like
    cws::http::render(r, res);
  }
  return 0;
}
