// libFuzzer: any install template (and any include it names, read from an in-memory map
// seeded by the input itself) either compiles or is refused with a template_error; never a
// crash, never more than the limits. What compiles renders with fixed values.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "api/template.hpp"

namespace {

struct fixed_values : cws::api::template_values {
  std::optional<std::string> node_column(std::string_view, std::string_view col) const override {
    if (col == "unset") {
      return std::nullopt;
    }
    return std::string{"v"};
  }
  std::optional<std::string> row_column(std::string_view, std::string_view,
                                        std::string_view) const override {
    return std::string{"r"};
  }
  std::optional<std::string> crypted(std::string_view, std::string_view,
                                     std::string_view) const override {
    return std::string{"$6$salt$hash"};
  }
  std::string variable(std::string_view) const override {
    return "x";
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text{reinterpret_cast<const char*>(data), size};
  cws::api::template_limits limits{4096, 4};
  // every include reads the input again: depth and size bounds must stop the recursion
  auto read = [&](const std::filesystem::path& p) {
    if (p.filename() == "missing") {
      throw cws::api::template_error{"cannot read " + p.string()};
    }
    return text;
  };
  try {
    auto t = cws::api::compiled_template::parse(text, "/t/compute.tmpl", limits, read);
    fixed_values v;
    try {
      auto out = t.render("node01.cluster", v);
      if (out.size() > limits.max_bytes * 64) {
        std::abort(); // each directive expands to a few bytes at most
      }
    } catch (const cws::api::template_error&) {
      // an unset #TABLE# value: refused, as xCAT's template error
    }
  } catch (const cws::api::template_error&) {
    return 0;
  }
  return 0;
}
