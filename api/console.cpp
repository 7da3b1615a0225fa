#include "api/console.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string_view>

#include "store/cluster_view.hpp"

namespace cws::api {

namespace {

/// Node `n`'s console if it has `cons` set.
std::optional<console_spec> read_console(const store::cluster_view& view, const std::string& n,
                                         const bmc_access& fallback, uint16_t default_port) {
  auto cons = view.attribute(n, "cons");
  if (cons.empty()) {
    return std::nullopt;
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
  return s;
}

void sort_by_node(std::vector<console_spec>& specs) {
  std::sort(specs.begin(), specs.end(),
            [](const console_spec& a, const console_spec& b) { return a.node < b.node; });
}

} // namespace

std::vector<console_spec> read_consoles(const store::database& db, uint16_t default_port) {
  auto txn = db.read();
  store::cluster_view view{txn};
  auto fallback = fallback_bmc_credentials(txn);
  std::vector<console_spec> out;
  for (const auto& n : view.nodes()) {
    if (auto s = read_console(view, n, fallback, default_port)) {
      out.push_back(std::move(*s));
    }
  }
  sort_by_node(out);
  return out;
}

std::vector<console_spec> read_consoles(const store::database& db, uint16_t default_port,
                                        const std::vector<std::string>& nodes) {
  auto txn = db.read();
  store::cluster_view view{txn};
  auto fallback = fallback_bmc_credentials(txn);
  std::vector<console_spec> out;
  for (const auto& n : nodes) {
    if (!view.is_node(n)) {
      continue; // removed (attribute() of a missing node is "" too; this says why)
    }
    if (auto s = read_console(view, n, fallback, default_port)) {
      out.push_back(std::move(*s));
    }
  }
  sort_by_node(out);
  return out;
}

console_scope consoles_affected(const store::change_set& set) {
  static constexpr std::array<std::string_view, 8> attrs{
    "bmc", "bmcpassword", "bmcport", "bmcusername", "cons", "consoleenabled", "groups", "vmhost"};
  auto relevant = [](const store::logged_change& c) {
    return std::any_of(c.attrs.begin(), c.attrs.end(), [](const std::string& a) {
      return std::find(attrs.begin(), attrs.end(), a) != attrs.end();
    });
  };
  console_scope out;
  for (const auto& c : set.changes) {
    switch (c.type) {
      case store::object_type::site:
      case store::object_type::passwd: out.all = true; break;
      case store::object_type::group:
        // every member inherits from it (a node's own groups list, which a created or
        // removed group can change the meaning of too)
        out.all = out.all || relevant(c);
        break;
      case store::object_type::node:
        if (c.kind != store::change_kind::changed || relevant(c)) {
          out.nodes.push_back(c.name);
        }
        break;
      default: break;
    }
  }
  if (out.all) {
    out.nodes.clear();
  }
  std::sort(out.nodes.begin(), out.nodes.end());
  out.nodes.erase(std::unique(out.nodes.begin(), out.nodes.end()), out.nodes.end());
  return out;
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
