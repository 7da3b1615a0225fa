// libFuzzer: rcons's keystroke parser (cli/rcons_escape.hpp) never crashes, and fed in any
// pieces it gives what it gives for the whole input: the bytes it sends, in order, are the
// input without its escape sequences, and a plain input (no control-E) goes out unchanged.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/rcons_escape.hpp"

namespace {

std::string flat(const std::vector<cws::cli::rcons_event>& events) {
  std::string out;
  for (const auto& e : events) {
    out += std::to_string(static_cast<int>(e.action));
    out += ':';
    out += e.bytes;
    out += '\n';
  }
  return out;
}

/// Joins adjacent sends (pieces split a run of plain keys into several events).
std::vector<cws::cli::rcons_event> joined(std::vector<cws::cli::rcons_event> in) {
  std::vector<cws::cli::rcons_event> out;
  for (auto& e : in) {
    if (!out.empty() && e.action == cws::cli::rcons_action::send
        && out.back().action == cws::cli::rcons_action::send) {
      out.back().bytes += e.bytes;
    } else {
      out.push_back(std::move(e));
    }
  }
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) {
    return 0;
  }
  // the first byte picks the piece size, the rest is what was typed
  size_t piece = 1 + data[0] % 16;
  std::string_view keys{reinterpret_cast<const char*>(data + 1), size - 1};
  cws::cli::rcons_escape whole;
  std::vector<cws::cli::rcons_event> a;
  whole.feed(keys, a);
  cws::cli::rcons_escape pieces;
  std::vector<cws::cli::rcons_event> b;
  for (size_t i = 0; i < keys.size(); i += piece) {
    pieces.feed(keys.substr(i, piece), b);
  }
  if (flat(joined(a)) != flat(joined(b)) || whole.pending() != pieces.pending()) {
    __builtin_trap();
  }
  if (keys.find(cws::cli::rcons_escape_char) == std::string_view::npos
      && (a.size() > 1 || (a.size() == 1 && a[0].bytes != keys) || (a.empty() && !keys.empty()))) {
    __builtin_trap();
  }
  return 0;
}
