#pragma once

// The routes of the node-facing boot listener (docs/provisioning.md, "Boot chain and install
// status"): a request target parsed into what it asks for. Pure; fuzzed (fuzz/fuzz_boot_route).

#include <string>
#include <string_view>

#include "http/query.hpp"

namespace cws::http {

/// What a request target of the boot listener names.
struct boot_route {
  enum class kind : uint8_t {
    none,             ///< no route (404)
    generic,          ///< /boot/ipxe
    by_mac,           ///< /boot/mac/<mac>
    by_node,          ///< /boot/node/<node>
    kernel,           ///< /boot/node/<node>/kernel
    initrd,           ///< /boot/node/<node>/initrd
    install_template, ///< /boot/node/<node>/preseed, /kickstart
    status,           ///< /boot/node/<node>/status
  };
  kind what = kind::none;
  /// by_mac: the MAC as given; the others: the node name (percent-decoded).
  std::string key;
  /// The query's parameters (`token`, `state`).
  query_params query;
};

/// Parses `target` (path and query); `what` is none for anything else, a malformed escape,
/// an empty or over-long name, or a name with `/` or a control character.
boot_route parse_boot_target(std::string_view target);

} // namespace cws::http
