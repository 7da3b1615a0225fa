// libFuzzer: JSON bodies become attribute changes or a clear error.

#include <cstdint>
#include <string>

#include "http/request_body.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string body{reinterpret_cast<const char*>(data), size};
  auto parsed = cws::http::parse_request_body(body, 32);
  if (parsed.error.empty()) {
    for (const auto& [k, v] : parsed.fields) {
      (void)k.size();
      (void)v.size();
    }
  }
  return 0;
}
