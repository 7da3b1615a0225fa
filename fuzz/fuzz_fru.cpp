// libFuzzer: the FRU parser (ipmi/fru.hpp) and the rinv conversation take any bytes from a
// BMC without reading past them or crashing. The first byte picks: FRU data to parse (then
// its lines for every keyword), one type/length field, or a whole conversation whose every
// answer comes from the input.

#include <cstdint>
#include <cstdlib>

#include "conversation.hpp"
#include "ipmi/fru.hpp"

using namespace cws::ipmi;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  const uint8_t* p = data + 1;
  size_t n = size - 1;
  switch (data[0] % 3) {
    case 0: {
      auto parsed = parse_fru(p, n);
      if (parsed.info.has_value() == !parsed.error.empty()) {
        std::abort(); // either the areas or the reason, never both or neither
      }
      if (parsed.info) {
        (void)fru_lines(*parsed.info, *parse_inventory("all"));
      }
      break;
    }
    case 1:
      if (n > 0) {
        (void)fru_field_text(p[0], p + 1, n - 1);
      }
      break;
    default: {
      auto a = inventory_action(*parse_inventory("all"), 512);
      cws::fuzz::converse(*a, p, n, 8192);
      break;
    }
  }
  return 0;
}
