#include "api/console.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

#include "store/cluster_view.hpp"

namespace cws::api {

std::vector<console_spec> read_consoles(const store::database& db, uint16_t default_port) {
  auto txn = db.read();
  store::cluster_view view{txn};
  auto fallback = fallback_bmc_credentials(txn);
  std::vector<console_spec> out;
  for (const auto& n : view.nodes()) {
    auto cons = view.attribute(n, "cons");
    if (cons.empty()) {
      continue;
    }
    console_spec s;
    s.node = n;
    s.method = cons;
    s.held = console_enabled(view.attribute(n, "consoleenabled"));
    if (!console_file_name_ok(n)) {
      s.error = "Node name '" + n + "' cannot name a log file";
    } else if (cons == "kvm") {
      resolve_vm(view, n, s.vm, s.error);
    } else if (cons != "ipmi") {
      s.error = "Console method '" + cons + "' is not supported (cons=ipmi and cons=kvm are)";
    } else if (auto r = resolve_bmc(view, n, fallback, default_port, s.bmc); !r.ok()) {
      s.error = r.messages.empty() ? "Bad bmcport" : r.messages.front();
    } else if (s.bmc.address.empty()) {
      s.error = "Unable to identify bmc for " + n + " (set its bmc attribute)";
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(),
            [](const console_spec& a, const console_spec& b) { return a.node < b.node; });
  return out;
}

bool affects_consoles(const store::change_set& set) {
  static constexpr std::array<std::string_view, 8> attrs{
    "bmc", "bmcpassword", "bmcport", "bmcusername", "cons", "consoleenabled", "groups", "vmhost"};
  for (const auto& c : set.changes) {
    switch (c.type) {
      case store::object_type::site:
      case store::object_type::passwd: return true;
      case store::object_type::node:
        if (c.kind != store::change_kind::changed) {
          return true;
        }
        [[fallthrough]];
      case store::object_type::group:
        for (const auto& a : c.attrs) {
          if (std::find(attrs.begin(), attrs.end(), a) != attrs.end()) {
            return true;
          }
        }
        break;
      default: break;
    }
  }
  return false;
}

bool console_enabled(const std::string& value) {
  std::string v;
  for (char c : value) {
    v.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return v != "0" && v != "no";
}

bool console_file_name_ok(const std::string& node) {
  return !node.empty() && node.size() <= 255 && node != "." && node != ".."
         && node.find('/') == std::string::npos && node.find('\0') == std::string::npos;
}

} // namespace cws::api
