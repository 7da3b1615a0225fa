// libFuzzer: xCAT expression values (`/pattern/replacement/`, `|pattern|text|`) as a group row
// holds them. Whatever parse accepts evaluates for any node name without crashing, hanging
// (RE2 is linear; the arithmetic is bounded) or growing past a bound of the input's size;
// whatever it refuses comes with a reason.
// Input: the value, a NUL, a node name.

#include <cstdint>
#include <string>

#include "store/regex_value.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using cws::store::regex_value;
  std::string input{reinterpret_cast<const char*>(data), size};
  auto nul = input.find('\0');
  std::string value = input.substr(0, nul);
  std::string node = nul == std::string::npos ? "node0012" : input.substr(nul + 1);
  if (!regex_value::is_expression(value)) {
    return 0;
  }
  std::string error;
  auto v = regex_value::parse(value, error);
  if (!v) {
    if (error.empty()) {
      __builtin_trap(); // a refusal always says why
    }
    return 0;
  }
  for (const std::string& name : {node, std::string{"node0012"}, std::string{}}) {
    auto out = v->evaluate(name);
    // every piece of the text adds at most the name twice plus a formatted number
    if (out.size() > (value.size() + 1) * (2 * name.size() + 1100)) {
      __builtin_trap();
    }
  }
  return 0;
}
