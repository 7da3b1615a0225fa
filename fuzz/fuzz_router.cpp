// libFuzzer: routing any method, target and body gives an answer or a call, never a crash.

#include <cstdint>
#include <string>

#include "http/render.hpp"
#include "http/router.hpp"

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
  req.authorization = "Basic " + in.substr(0, std::min<size_t>(in.size(), 24));
  req.client = "127.0.0.1";
  auto r = cws::http::route(req, {});
  if (r.answer) {
    cws::http::render(r, *r.answer);
  } else {
    cws::api::api_result res; // render what an empty success would look like
    cws::http::render(r, res);
  }
  return 0;
}
