#include "api/dhcp_backend.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <simdjson.h>

#include "base/published_file.hpp"

namespace cws::api {

namespace {

constexpr std::size_t max_config_bytes = 256u << 20;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool is_ipv4_text(std::string_view s) {
  uint32_t v = 0;
  return parse_ipv4(s, v);
}

} // namespace

std::unique_ptr<dhcp_backend> make_dhcp_backend(std::string_view name, const dhcp_config& cfg) {
  if (name == "dnsmasq") {
    return make_dnsmasq_backend(cfg);
  }
  if (name == "kea") {
    return make_kea_backend(cfg);
  }
  return nullptr;
}

system_change dhcp_system_change(const dhcp_change& change) {
  system_change out;
  for (const auto& f : change.files) {
    if (!f.remove) {
      out.files.push_back({f.path, f.content, 0644});
    }
  }
  for (const auto& f : change.files) {
    if (f.remove) {
      auto path = f.path;
      out.actions.push_back({"remove " + path.string(), [path](std::string& message) {
                               std::error_code ec;
                               if (!std::filesystem::remove(path, ec) && ec) {
                                 message = "cannot remove " + path.string() + ": " + ec.message();
                               }
                               return ec;
                             }});
    }
  }
  for (const auto& step : change.steps) {
    auto run = step.run;
    out.actions.push_back({step.description, [run](std::string& message) {
                             message = run();
                             return message.empty() ? std::error_code{}
                                                    : std::make_error_code(std::errc::io_error);
                           }});
  }
  return out;
}

std::string dhcp_dry_run_text(const dhcp_change& change) {
  std::string out;
  for (const auto& c : change.checks) {
    out += "would check: " + c.description + "\n";
  }
  for (const auto& f : change.files) {
    if (f.remove) { // system_change shows written files only: a removal's diff here
      std::string old;
      base::read_file(f.path, max_config_bytes, old);
      out += base::unified_diff(old, {}, f.path.string(), "/dev/null");
    }
  }
  std::string error;
  out += dhcp_system_change(change).dry_run_text(&error);
  if (!error.empty()) {
    out += error + "\n";
  }
  return out;
}

std::string apply_dhcp_change(const dhcp_change& change) {
  for (const auto& c : change.checks) {
    if (auto e = c.run(); !e.empty()) {
      return e;
    }
  }
  for (const auto& f : change.files) {
    if (f.remove) {
      continue;
    }
    // the servers read these as their own users (dnsmasq drops to `dnsmasq`), whatever the
    // umask of the daemon (0077 in its unit): a new directory 0755, a new file made 0644
    // before it is published (publish_file keeps an existing file's mode)
    std::error_code ec;
    auto dir = f.path.parent_path();
    if (!std::filesystem::exists(dir, ec) && std::filesystem::create_directories(dir, ec)) {
      ::chmod(dir.c_str(), 0755);
    }
    int fd = ::open(f.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd >= 0) {
      ::fchmod(fd, 0644);
      ::close(fd);
    }
  }
  std::string message;
  if (dhcp_system_change(change).apply(message)) {
    return message;
  }
  return {};
}

std::string run_shell_command(const std::string& command) {
  std::string line = command + " 2>&1";
  FILE* p = ::popen(line.c_str(), "r");
  if (p == nullptr) {
    return "Cannot run '" + command + "'.";
  }
  std::string output;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) {
    if (output.size() < 65536) {
      output.append(buf, n);
    }
  }
  int status = ::pclose(p);
  if (status == 0) {
    return {};
  }
  auto code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  while (!output.empty() && output.back() == '\n') {
    output.pop_back();
  }
  return "'" + command + "' failed (exit status " + std::to_string(code) + ")"
         + (output.empty() ? "" : ": " + output);
}

std::vector<dhcp_entry> parse_dnsmasq_hosts(std::string_view text, const std::string& node) {
  std::vector<dhcp_entry> out;
  std::string current = node;
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (line.substr(0, 6) == "#node ") {
      current = std::string{trim(line.substr(6))};
      continue;
    }
    if (line.empty() || line.front() == '#') {
      continue;
    }
    dhcp_entry e;
    e.node = current;
    bool ignore = false;
    while (!line.empty()) {
      auto comma = line.find(',');
      auto field = trim(line.substr(0, comma));
      line = comma == std::string_view::npos ? std::string_view{} : line.substr(comma + 1);
      if (field.empty() || field.substr(0, 4) == "set:" || field.substr(0, 4) == "tag:"
          || field.substr(0, 3) == "id:" || field == "infinite") {
        continue;
      }
      if (field == "ignore") {
        ignore = true;
        continue;
      }
      auto mac = normalize_mac(field);
      if (!mac.empty()) {
        if (e.mac.empty()) {
          e.mac = mac;
        }
      } else if (is_ipv4_text(field)) {
        e.ip = std::string{field};
      } else if (field.front() >= '0' && field.front() <= '9') {
        continue; // a lease time (`12h`, `3600`)
      } else if (e.hostname.empty()) {
        e.hostname = std::string{field};
      }
    }
    if (!e.mac.empty()) {
      if (ignore) {
        e.ip.clear(); // a refused MAC (*NOIP*): no address
      }
      out.push_back(std::move(e));
    }
  }
  return out;
}

std::string parse_kea_reservations(std::string_view json, std::vector<dhcp_entry>& out) {
  simdjson::dom::parser parser;
  simdjson::padded_string text{json};
  simdjson::dom::element doc;
  if (parser.parse(text).get(doc)) {
    return "not JSON";
  }
  simdjson::dom::element dhcp4;
  simdjson::dom::element args;
  if (doc.type() == simdjson::dom::element_type::ARRAY) {
    simdjson::dom::array a = doc.get_array();
    if (a.size() == 0) {
      return "an empty answer";
    }
    doc = a.at(0);
  }
  if (!doc["arguments"].get(args)) {
    doc = args;
  }
  if (doc["Dhcp4"].get(dhcp4)) {
    return "no Dhcp4 configuration";
  }
  simdjson::dom::array subnets;
  if (dhcp4["subnet4"].get(subnets)) {
    return {}; // no subnets: no reservations
  }
  for (auto subnet : subnets) {
    simdjson::dom::array reservations;
    if (subnet["reservations"].get(reservations)) {
      continue;
    }
    for (auto r : reservations) {
      dhcp_entry e;
      std::string_view v;
      if (!r["hw-address"].get(v)) {
        e.mac = normalize_mac(v);
      }
      if (!r["ip-address"].get(v)) {
        e.ip = std::string{v};
      }
      if (!r["hostname"].get(v)) {
        e.hostname = std::string{v};
      }
      if (!r["user-context"]["node"].get(v)) {
        e.node = std::string{v};
      } else {
        e.node = e.hostname;
      }
      if (!e.node.empty() && !e.mac.empty()) {
        out.push_back(std::move(e));
      }
    }
  }
  return {};
}

bool parse_kea_answer(std::string_view json, int& result, std::string& text) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded{json};
  simdjson::dom::element doc;
  if (parser.parse(padded).get(doc)) {
    return false;
  }
  if (doc.type() == simdjson::dom::element_type::ARRAY) {
    simdjson::dom::array a = doc.get_array();
    if (a.size() == 0) {
      return false;
    }
    doc = a.at(0);
  }
  int64_t r = 0;
  if (doc["result"].get(r)) {
    return false;
  }
  result = static_cast<int>(r);
  std::string_view t;
  text = doc["text"].get(t) ? std::string{} : std::string{t};
  return true;
}

} // namespace cws::api
