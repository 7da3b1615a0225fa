#include "virt/inventory.hpp"

#include <cstdlib>
#include <string>

namespace cws::virt {

namespace {

/// The element `<name ...>` starting at or after `from` within [from, end): the position of
/// its `<`, or npos.
size_t find_element(std::string_view x, std::string_view name, size_t from, size_t end) {
  std::string open = "<" + std::string{name};
  while (true) {
    size_t at = x.find(open, from);
    if (at == std::string_view::npos || at >= end) {
      return std::string_view::npos;
    }
    size_t after = at + open.size();
    if (after < x.size()
        && (x[after] == ' ' || x[after] == '>' || x[after] == '/' || x[after] == '\n'
            || x[after] == '\t')) {
      return at;
    }
    from = after;
  }
}

/// The text of the first `<name>text</name>` in [from, end).
std::string element_text(std::string_view x, std::string_view name, size_t from, size_t end) {
  size_t at = find_element(x, name, from, end);
  if (at == std::string_view::npos) {
    return "";
  }
  size_t open_end = x.find('>', at);
  std::string close = "</" + std::string{name} + ">";
  size_t close_at = x.find(close, open_end);
  if (open_end == std::string_view::npos || close_at == std::string_view::npos || close_at > end) {
    return "";
  }
  return std::string{x.substr(open_end + 1, close_at - open_end - 1)};
}

/// The value of attribute `attr` of the element starting at `at` (quotes ' or ").
std::string attribute(std::string_view x, size_t at, std::string_view attr) {
  size_t tag_end = x.find('>', at);
  if (tag_end == std::string_view::npos) {
    return "";
  }
  auto tag = x.substr(at, tag_end - at);
  std::string key = " " + std::string{attr} + "=";
  size_t k = tag.find(key);
  if (k == std::string_view::npos || k + key.size() >= tag.size()) {
    return "";
  }
  char quote = tag[k + key.size()];
  if (quote != '\'' && quote != '"') {
    return "";
  }
  size_t v = k + key.size() + 1;
  size_t v_end = tag.find(quote, v);
  return v_end == std::string_view::npos ? "" : std::string{tag.substr(v, v_end - v)};
}

/// The end of the element starting at `at` (after `</name>`, or after `/>`).
size_t element_end(std::string_view x, std::string_view name, size_t at) {
  size_t tag_end = x.find('>', at);
  if (tag_end == std::string_view::npos) {
    return x.size();
  }
  if (x[tag_end - 1] == '/') {
    return tag_end + 1;
  }
  std::string close = "</" + std::string{name} + ">";
  size_t c = x.find(close, tag_end);
  return c == std::string_view::npos ? x.size() : c + close.size();
}

/// Memory in MiB from libvirt's value and unit (KiB when none is given).
long long mebibytes(const std::string& value, const std::string& unit) {
  long long v = std::strtoll(value.c_str(), nullptr, 10);
  if (unit.empty() || unit == "KiB" || unit == "k" || unit == "K") {
    return v / 1024;
  }
  if (unit == "MiB" || unit == "M" || unit == "m") {
    return v;
  }
  if (unit == "GiB" || unit == "G" || unit == "g") {
    return v * 1024;
  }
  if (unit == "b" || unit == "bytes") {
    return v / (1024 * 1024);
  }
  return v / 1024;
}

} // namespace

std::string inventory_text(std::string_view x) {
  std::string out;
  auto line = [&out](const std::string& l) {
    if (!out.empty()) {
      out += '\n';
    }
    out += l;
  };
  size_t dom = find_element(x, "domain", 0, x.size());
  if (dom == std::string_view::npos) {
    return out;
  }
  size_t end = x.size();
  // the domain's own children come before <devices>: look for them only there
  size_t devices = find_element(x, "devices", dom, end);
  size_t head_end = devices == std::string_view::npos ? end : devices;
  auto uuid = element_text(x, "uuid", dom, head_end);
  if (!uuid.empty()) {
    line("UUID/GUID: " + uuid);
  }
  auto cpus = element_text(x, "vcpu", dom, head_end);
  if (!cpus.empty()) {
    line("CPUs: " + cpus);
  }
  const char* mem_name = "currentMemory";
  size_t mem = find_element(x, mem_name, dom, head_end);
  if (mem == std::string_view::npos) {
    mem_name = "memory";
    mem = find_element(x, mem_name, dom, head_end);
  }
  if (mem != std::string_view::npos) {
    auto text = element_text(x, mem_name, mem, head_end);
    line("Memory: " + std::to_string(mebibytes(text, attribute(x, mem, "unit"))) + " MB");
  }
  if (devices == std::string_view::npos) {
    return out;
  }
  size_t devices_end = element_end(x, "devices", devices);
  int disk_no = 0;
  for (size_t at = find_element(x, "disk", devices, devices_end); at != std::string_view::npos;
       at = find_element(x, "disk", element_end(x, "disk", at), devices_end)) {
    size_t e = element_end(x, "disk", at);
    if (attribute(x, at, "device") != "disk" && !attribute(x, at, "device").empty()) {
      continue; // cdrom, floppy, lun
    }
    std::string dev;
    if (size_t t = find_element(x, "target", at, e); t != std::string_view::npos) {
      dev = attribute(x, t, "dev");
    }
    std::string source;
    if (size_t s = find_element(x, "source", at, e); s != std::string_view::npos) {
      for (const char* a : {"file", "dev", "name", "volume"}) {
        if (source.empty()) {
          source = attribute(x, s, a);
        }
      }
    }
    line("Hard disk " + std::to_string(++disk_no) + " (" + dev + "): " + source);
  }
  int nic_no = 0;
  for (size_t at = find_element(x, "interface", devices, devices_end); at != std::string_view::npos;
       at = find_element(x, "interface", element_end(x, "interface", at), devices_end)) {
    size_t e = element_end(x, "interface", at);
    if (size_t m = find_element(x, "mac", at, e); m != std::string_view::npos) {
      line("Network adapter " + std::to_string(++nic_no) + ": " + attribute(x, m, "address"));
    }
  }
  return out;
}

} // namespace cws::virt
