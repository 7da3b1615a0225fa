// libFuzzer: any bytes read as a change log record (store/change_feed: the log is shared with
// other processes and may be damaged) either decode into well-formed changes or are refused
// with an error; what decodes encodes into a record that decodes to the same changes.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "store/change_feed.hpp"
#include "store/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cws::store;
  std::vector<logged_change> changes;
  try {
    changes = decode_changes({reinterpret_cast<const char*>(data), size});
  } catch (const error& e) {
    if (e.code() != store_errc::database) {
      std::abort();
    }
    return 0;
  }
  for (const auto& c : changes) {
    if (c.name.empty() || c.name.size() > 511 || c.attrs.size() > change_limits::max_attrs) {
      std::abort();
    }
    for (const auto& a : c.attrs) {
      if (a.empty() || a.size() > max_key_length) {
        std::abort();
      }
    }
  }
  if (decode_changes(encode_changes(changes)) != changes) {
    std::abort();
  }
  return 0;
}
