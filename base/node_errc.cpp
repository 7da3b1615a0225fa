#include "base/node_errc.hpp"

#include <iterator>

namespace cws::base {

namespace {

/// One row per code, in the enum's order: the only place the spellings live.
constexpr std::string_view spellings[] = {
  "",                // none
  "resolve",         // resolve
  "refused",         // refused
  "unreachable",     // unreachable
  "connect-timeout", // connect_timeout
  "handshake",       // handshake
  "host-key",        // host_key
  "auth",            // auth
  "channel",         // channel
  "copy",            // copy
  "timeout",         // timeout
  "disconnected",    // disconnected
  "signal",          // signal
  "cancelled",       // cancelled
  "not-found",       // not_found
  "ipmi",            // ipmi
  "unsupported",     // unsupported
  "no-bmc",          // no_bmc
  "no-vmhost",       // no_vmhost
  "libvirt",         // libvirt
  "resources",       // resources
  "servicenode",     // servicenode
  "boot-state",      // boot_state
};

static_assert(std::size(spellings) == static_cast<size_t>(node_errc::boot_state) + 1,
              "a node_errc without its spelling");

} // namespace

std::string_view to_string(node_errc e) noexcept {
  auto i = static_cast<size_t>(e);
  return i < std::size(spellings) ? spellings[i] : std::string_view{};
}

std::optional<node_errc> parse_node_errc(std::string_view text) noexcept {
  for (size_t i = 0; i < std::size(spellings); ++i) {
    if (spellings[i] == text) {
      return static_cast<node_errc>(i);
    }
  }
  return std::nullopt;
}

} // namespace cws::base
