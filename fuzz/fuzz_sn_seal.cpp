// libFuzzer: any bytes as a service node's seal text and payload (api/sn_seal.hpp) are refused
// with a reason or, only when the MAC verifies, accepted once; the replay cache stays bounded.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "api/sn_seal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cws::api;
  static const std::string secret(64, 'a');
  static sn_replay_cache seen{64};
  std::string_view in{reinterpret_cast<const char*>(data), size};
  // the seal text up to the first newline, the payload after it
  auto nl = in.find('\n');
  auto text = in.substr(0, nl);
  auto payload = nl == std::string_view::npos ? std::string_view{} : in.substr(nl + 1);
  sn_seal s;
  auto parsed = parse_sn_seal(text, s);
  auto why = verify_sn_request(secret, "sn1", text, payload, 1000, seen);
  if (why.empty()) {
    // accepted: it parsed, and the MAC is the one made under the secret
    if (!parsed.empty()
        || seal_sn_request(secret, "sn1", s.id, s.expires_ms, payload).mac != s.mac) {
      std::abort();
    }
  }
  if (seen.size() > 64) {
    std::abort();
  }
  // a well-formed seal made here round-trips
  auto made = seal_sn_request(secret, "sn1", size, static_cast<int64_t>(size), payload);
  sn_seal back;
  if (parse_sn_seal(to_text(made), back) != "" || back.mac != made.mac || back.id != made.id) {
    std::abort();
  }
  return 0;
}
