// libFuzzer: any stanza input either parses or is refused with messages; never a crash.
// What is parsed is stable: written back as lsdef -z writes it and parsed again, it gives the
// same objects (values that start or end with a double quote excepted: xCAT unquotes them).

#include <cstdint>
#include <cstdlib>
#include <string>

#include "store/stanza.hpp"

namespace {

bool quoted(const std::string& v) {
  return !v.empty() && (v.front() == '"' || v.back() == '"');
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text{reinterpret_cast<const char*>(data), size};
  auto in = cws::store::parse_stanzas(text);
  if (in.errors.size() > cws::store::max_stanza_errors + 1) {
    std::abort(); // the error list is bounded
  }
  if (!in.errors.empty()) {
    return 0;
  }
  std::string again;
  for (const auto& s : in.objects) {
    if (s.name.find('=') != std::string::npos || s.type.empty() || quoted(s.type)) {
      return 0; // such a name cannot be a header; no objtype line to write
    }
    again += "\n" + s.name + ":\n    objtype=" + s.type + "\n";
    for (const auto& [k, v] : s.attrs) {
      if (k.empty() || quoted(v) || k.find_first_of(" \t\r") != std::string::npos) {
        return 0;
      }
      again += "    " + k + "=" + v + "\n";
    }
  }
  auto re = cws::store::parse_stanzas(again);
  if (!re.errors.empty() || re.objects.size() != in.objects.size()) {
    std::abort();
  }
  for (size_t i = 0; i < re.objects.size(); ++i) {
    if (re.objects[i].name != in.objects[i].name || re.objects[i].type != in.objects[i].type
        || re.objects[i].attrs != in.objects[i].attrs) {
      std::abort();
    }
  }
  return 0;
}
