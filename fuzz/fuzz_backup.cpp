// libFuzzer: any MANIFEST of a backup either parses, within backup_limits, with every key in
// its alphabet and no control character in a value, or is refused with std::invalid_argument;
// never a crash.

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "cli/backup_tree.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text{reinterpret_cast<const char*>(data), size};
  try {
    auto m = cws::cli::parse_backup_manifest(text);
    if (m.values.size() >= cws::cli::backup_limits::manifest_lines
        || text.size() > cws::cli::backup_limits::manifest_bytes
        || text.substr(0, cws::cli::backup_manifest_header.size())
             != cws::cli::backup_manifest_header) {
      std::abort(); // past a limit, or without the header
    }
    for (const auto& [key, value] : m.values) {
      if (key.empty()) {
        std::abort();
      }
      for (char c : value) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          std::abort(); // a control character let through
        }
      }
    }
  } catch (const std::invalid_argument&) {
    // refused with a message: fine
  }
  return 0;
}
