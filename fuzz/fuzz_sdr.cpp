// libFuzzer: the SDR code (ipmi/sdr.hpp) and the rvitals conversation (ipmi/sensors.hpp) take
// any bytes from a BMC without reading past them or crashing. The first byte picks: a record
// to parse (then its readings converted and its states worded), an ID string to decode, or a
// whole conversation whose every answer comes from the input.

#include <cstdint>
#include <cstdlib>

#include "conversation.hpp"
#include "ipmi/sdr.hpp"
#include "ipmi/sensors.hpp"

using namespace cws::ipmi;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  const uint8_t* p = data + 1;
  size_t n = size - 1;
  switch (data[0] % 4) {
    case 0:
      if (auto r = parse_sdr(p, n)) {
        if (r->id.empty()) {
          std::abort(); // a record always has a name ("no description" at least)
        }
        for (unsigned raw : {0u, 1u, 0x7fu, 0x80u, 0xffu, n > 0 ? p[n - 1] + 0u : 0u}) {
          (void)reading_text(*r, static_cast<uint8_t>(raw));
          (void)state_text(*r, static_cast<uint8_t>(raw));
        }
      }
      break;
    case 1:
      if (n > 0) {
        (void)decode_id(p[0], p + 1, n - 1);
      }
      break;
    case 2: {
      auto cache = std::make_shared<sdr_cache>(4);
      auto f = parse_vitals("all");
      auto a = vitals_action(*f, cache, "bmc", {64});
      cws::fuzz::converse(*a, p, n, 4096);
      // the same answers again: now from the cache when the repository matched
      auto again = vitals_action(*parse_vitals("temp power"), cache, "bmc", {64});
      cws::fuzz::converse(*again, p, n, 4096);
      break;
    }
    default: (void)chassis_lines(bytes(p, p + n)); break;
  }
  return 0;
}
