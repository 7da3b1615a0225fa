// libFuzzer: any synclist (xdcp -F) either parses or is refused with a message naming what is
// wrong; never a crash. What parses is well formed: every entry has sources and one target,
// none of them the arrow or a comment.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/copy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text{reinterpret_cast<const char*>(data), size};
  std::vector<cws::api::copy_entry> entries;
  auto bad = cws::api::parse_synclist(text, entries);
  if (!bad.empty()) {
    if (!entries.empty()) {
      std::abort(); // a refusal changes nothing
    }
    return 0;
  }
  if (entries.empty()) {
    std::abort(); // success names at least one line
  }
  for (const auto& e : entries) {
    if (e.sources.empty() || e.target.empty() || e.target == "->" || e.target[0] == '#') {
      std::abort();
    }
    for (const auto& s : e.sources) {
      if (s.empty() || s == "->" || s[0] == '#') {
        std::abort();
      }
    }
  }
  return 0;
}
