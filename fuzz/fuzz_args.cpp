// libFuzzer: the lsdef/mkdef argument parser (options, bundles, attr=value, the optional
// value of --template) never crashes.

#include <cstdint>
#include <string>
#include <vector>

#include "base/args.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> argv;
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0 || data[i] == '\n') {
      argv.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  argv.push_back(cur);
  // --template takes an optional value: what is left is a command line as before
  auto rest = argv;
  auto value = cws::base::take_optional_value(rest, "template");
  if (rest.size() > argv.size() || (value && rest.size() == argv.size())) {
    __builtin_trap();
  }
  for (const auto& spec :
       {cws::base::option_spec{"toiw", "lsczSa", {"home"}, {}, {{"long", 'l'}, {"force", 'f'}}},
        cws::base::option_spec{"to", "fpm", {"home"}, {"password-stdin"}, {{"plus", 'p'}}}}) {
    try {
      auto args = cws::base::parse_args(argv, spec);
      for (const auto& p : args.positional) {
        std::string name;
        std::string value;
        cws::base::split_assignment(p, name, value);
      }
    } catch (const cws::base::usage_error&) {
      // refused with a message: fine
    }
  }
  return 0;
}
