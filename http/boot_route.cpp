#include "http/boot_route.hpp"

namespace cws::http {

namespace {

constexpr size_t max_name = 255;

/// A decoded name segment: non-empty, bounded, no `/`, no control or blank character.
bool good_name(const std::string& s) {
  if (s.empty() || s.size() > max_name) {
    return false;
  }
  for (unsigned char c : s) {
    if (c <= ' ' || c == '/' || c == 0x7f) {
      return false;
    }
  }
  return true;
}

} // namespace

boot_route parse_boot_target(std::string_view target) {
  boot_route r;
  auto q = target.find('?');
  auto path = target.substr(0, q);
  if (q != std::string_view::npos && !r.query.parse(target.substr(q + 1))) {
    return r;
  }
  constexpr std::string_view prefix = "/boot/";
  if (path.substr(0, prefix.size()) != prefix) {
    return r;
  }
  path.remove_prefix(prefix.size());
  if (path == "ipxe") {
    r.what = boot_route::kind::generic;
    return r;
  }
  auto slash = path.find('/');
  if (slash == std::string_view::npos) {
    return r;
  }
  auto head = path.substr(0, slash);
  auto rest = path.substr(slash + 1);
  auto tail = rest.find('/');
  auto name = rest.substr(0, tail);
  std::string decoded;
  if (!percent_decode(name, decoded, false) || !good_name(decoded)) {
    return r;
  }
  if (head == "mac") {
    if (tail != std::string_view::npos) {
      return r;
    }
    r.what = boot_route::kind::by_mac;
  } else if (head == "node") {
    if (tail == std::string_view::npos) {
      r.what = boot_route::kind::by_node;
    } else {
      auto what = rest.substr(tail + 1);
      if (what == "kernel") {
        r.what = boot_route::kind::kernel;
      } else if (what == "initrd") {
        r.what = boot_route::kind::initrd;
      } else if (what == "preseed" || what == "kickstart") {
        r.what = boot_route::kind::install_template;
      } else if (what == "status") {
        r.what = boot_route::kind::status;
      } else {
        return r;
      }
    }
  } else {
    return r;
  }
  r.key = std::move(decoded);
  return r;
}

} // namespace cws::http
