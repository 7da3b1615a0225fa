// libFuzzer: attribute names (with nic*.<suffix> and site keys) and values as they enter the
// store. Whatever the rules accept can never start a line, an `attr=value` or an `Object
// name:` of its own in lsdef's output.
// Input: a type digit, then the name, a NUL, the value.

#include <cstdint>
#include <string>

#include "store/definitions.hpp"
#include "store/regex_value.hpp"
#include "store/schema.hpp"

namespace {

/// True if `s` holds a character that breaks a line for a terminal or a line splitter.
bool breaks_lines(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    auto next = i + 1 < s.size() ? static_cast<unsigned char>(s[i + 1]) : 0;
    auto third = i + 2 < s.size() ? static_cast<unsigned char>(s[i + 2]) : 0;
    if ((c < 0x20 && c != '\t') || c == 0x7f || (c == 0xc2 && next >= 0x80 && next <= 0x9f)
        || (c == 0xe2 && next == 0x80 && (third == 0xa8 || third == 0xa9))) {
      return true;
    }
  }
  return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cws::store;
  if (size < 1) {
    return 0;
  }
  auto type = static_cast<object_type>(data[0] % 6);
  std::string rest{reinterpret_cast<const char*>(data + 1), size - 1};
  auto nul = rest.find('\0');
  std::string name = rest.substr(0, nul);
  std::string value = nul == std::string::npos ? std::string{} : rest.substr(nul + 1);
  if (is_valid_attribute(type, name)) {
    if (name.empty() || name.size() > max_key_length || breaks_lines(name)
        || name.find_first_of("= ") != std::string::npos) {
      __builtin_trap();
    }
  }
  auto msg = check_value(type, name, value);
  if (msg.empty() && breaks_lines(value)) {
    __builtin_trap();
  }
  // the other refusals: policy rules, token lifetimes, xCAT expressions, dynamic selections
  bool checked_kind = name == "rule" || name == "tokenexpiredays" || name == "wherevals"
                      || regex_value::is_expression(value);
  if (!msg.empty() && !breaks_lines(value) && !checked_kind) {
    __builtin_trap(); // refused for no reason
  }
  return 0;
}
