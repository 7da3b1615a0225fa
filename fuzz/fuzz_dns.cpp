// libFuzzer: the reader of a name server's answer to makedns' UPDATE (api/dns_message.hpp)
// takes any bytes without reading past them, looping or crashing; a TSIG record is checked
// against the key, never trusted for its own sake. The first byte picks the answer reader
// or the key-file reader.

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "api/dns_message.hpp"

using namespace cws::api::dns;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    tsig_key key{"xcat_key", std::string(32, 'k')};
    std::string request_mac(32, 'm');
    answer a;
    auto error = read_answer(in, key, request_mac, 1800000000, a);
    if (!error.empty() && (a.signature_ok || a.signed_)) {
      std::abort(); // a malformed answer is never taken as signed
    }
    if (a.signature_ok && !a.signed_) {
      std::abort();
    }
  } else {
    tsig_key key;
    (void)parse_key_file(in, key);
  }
  return 0;
}
