// libFuzzer: request targets through the boot listener's route parser (http/boot_route). A
// route it accepts names a node or MAC without `/`, blanks or control characters.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "http/boot_route.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view target{reinterpret_cast<const char*>(data), size};
  auto r = cws::http::parse_boot_target(target);
  if (r.what == cws::http::boot_route::kind::none
      || r.what == cws::http::boot_route::kind::generic) {
    return 0;
  }
  if (r.key.empty() || r.key.size() > 255) {
    std::abort();
  }
  for (unsigned char c : r.key) {
    if (c <= ' ' || c == '/' || c == 0x7f) {
      std::abort();
    }
  }
  return 0;
}
