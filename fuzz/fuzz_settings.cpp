// libFuzzer: any clusterws.conf either loads, with every number inside its range and every
// word among its choices, or is refused with std::invalid_argument; never a crash, never a
// value the schema does not allow.

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "api/settings.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in{std::string{reinterpret_cast<const char*>(data), size}};
  try {
    auto s = cws::base::settings::parse(in, "fuzz.conf", cws::api::settings_schema());
    for (const auto& spec : cws::api::settings_schema()) {
      if (spec.kind == cws::base::setting_kind::number) {
        auto n = s.number(spec.key);
        if (n < spec.min || n > spec.max) {
          std::abort(); // a value out of range was let through
        }
      } else if (!spec.choices.empty()) {
        try {
          cws::base::settings check{cws::api::settings_schema()};
          check.set(spec.key, s.text(spec.key));
        } catch (const std::invalid_argument&) {
          std::abort(); // a word that is not a choice was let through
        }
      }
    }
    // what the daemon builds from them must not fail either
    cws::api::shell_settings(s, "/h");
    cws::api::engine_settings(s, "/h");
    cws::api::nodestat_settings(s); // nodestat_ports: parsed, or refused
  } catch (const std::invalid_argument&) {
    // refused with a message: fine
  }
  return 0;
}
