#include "api/wire.hpp"

#include "api/operation_traits.hpp"

#include <string_view>

namespace cws::api::wire {

job_request make_request(uint64_t id, const api_call& call, std::vector<target> targets) {
  job_request r;
  r.id = id;
  r.operation = std::string{traits(call.op).name};
  r.command = call.command;
  r.timeout_ms = call.timeout_ms;
  r.fanout = static_cast<uint32_t>(std::min<size_t>(call.fanout, UINT32_MAX));
  if (call.copy) {
    for (const auto& e : call.copy->entries) {
      r.copy.push_back({e.sources, e.target});
    }
    r.recursive = call.copy->recursive;
    r.preserve = call.copy->preserve;
    r.pull = call.copy->pull;
    r.execute = call.copy->execute;
  }
  r.targets = std::move(targets);
  return r;
}

namespace {

/// True if `name` stays below its target: relative, no empty, `.` or `..` part.
bool below(const std::string& name) {
  if (name.empty() || name.front() == '/') {
    return false;
  }
  size_t start = 0;
  while (start <= name.size()) {
    auto end = name.find('/', start);
    if (end == std::string::npos) {
      end = name.size();
    }
    auto part = std::string_view{name}.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || part.find('\0') != part.npos) {
      return false;
    }
    start = end + 1;
  }
  return true;
}

std::string check_files(const std::vector<copy_group>& groups, const request_limits& limits) {
  uint64_t bytes = 0;
  size_t files = 0;
  for (const auto& g : groups) {
    if (g.target.empty() || g.target.size() > limits.max_field_bytes) {
      return "a copy group has no target or one longer than "
             + std::to_string(limits.max_field_bytes) + " bytes";
    }
    for (const auto& f : g.files) {
      if (++files > limits.max_copy_files) {
        return "more than " + std::to_string(limits.max_copy_files)
               + " files and directories to copy in one request";
      }
      if (f.name.size() > limits.max_field_bytes || !below(f.name)) {
        return "a copied file's name '" + f.name.substr(0, 64) + "' leaves its target";
      }
      if (f.mode > 07777 || (f.directory && !f.data.empty())) {
        return "copied file '" + f.name.substr(0, 64) + "' has a bad mode or a directory's data";
      }
      bytes += f.data.size();
      if (bytes > limits.max_copy_bytes) {
        return "the files to copy are more than " + std::to_string(limits.max_copy_bytes)
               + " bytes (sn_copy_max)";
      }
    }
  }
  return {};
}

} // namespace

std::string check(const job_request& r, const request_limits& limits) {
  if (r.version != version) {
    return "wire version " + std::to_string(r.version) + " is not this service's ("
           + std::to_string(version) + ")";
  }
  const auto* op = find_operation(r.operation);
  if (op == nullptr || !op->fan_out) {
    return "'" + r.operation.substr(0, 64) + "' is not an operation that runs on nodes";
  }
  if (r.targets.size() > limits.max_targets) {
    return std::to_string(r.targets.size()) + " targets: at most "
           + std::to_string(limits.max_targets) + " in one request";
  }
  auto too_long = [&](const std::string& s) {
    return s.size() > limits.max_field_bytes;
  };
  if (too_long(r.command)) {
    return "the command is longer than " + std::to_string(limits.max_field_bytes) + " bytes";
  }
  for (const auto& c : r.copy) {
    for (const auto& s : c.sources) {
      if (too_long(s)) {
        return "a copy source is longer than " + std::to_string(limits.max_field_bytes) + " bytes";
      }
    }
    if (too_long(c.target)) {
      return "a copy target is longer than " + std::to_string(limits.max_field_bytes) + " bytes";
    }
  }
  if (auto why = check_files(r.files, limits); !why.empty()) {
    return why;
  }
  std::vector<bool> seen(r.targets.size(), false);
  for (const auto& t : r.targets) {
    if (t.index >= r.targets.size() || seen[t.index]) {
      return "target index " + std::to_string(t.index) + " is out of range or repeated";
    }
    seen[t.index] = true;
    if (t.name.empty() || too_long(t.name) || too_long(t.address) || too_long(t.user)
        || too_long(t.bmc) || too_long(t.bmc_user) || too_long(t.bmc_password) || too_long(t.state)
        || t.delay_ms < 0) {
      // (never the field's text: it may be a BMC password)
      return "target " + std::to_string(t.index)
             + " has no name, a negative delay or a field "
               "past "
             + std::to_string(limits.max_field_bytes) + " bytes";
    }
  }
  return {};
}

std::string check(const share_request& r, const request_limits& limits) {
  if (auto why = check(r.job, limits); !why.empty()) {
    return why;
  }
  if (r.service_node.empty() || r.service_node.size() > limits.max_field_bytes) {
    return "the share names no service node";
  }
  if (r.credits == 0 || r.batch_nodes == 0 || r.batch_bytes == 0) {
    return "the share has no credit, batch size or batch bytes";
  }
  return {};
}

size_t result_bytes(const node_result& r) {
  return r.name.size() + r.out.size() + r.err.size() + r.error.size() + r.message.size();
}

node_result to_wire(uint32_t index, const base::node_result& r, int64_t started_us,
                    int64_t elapsed_us) {
  node_result w;
  w.index = index;
  w.name = r.name;
  w.rc = r.rc;
  w.out = r.out;
  w.err = r.err;
  w.truncated = r.truncated;
  w.error = r.error;
  w.message = r.message;
  w.reused = r.reused;
  w.started_us = started_us;
  w.elapsed_us = elapsed_us;
  return w;
}

base::node_result from_wire(node_result r) {
  base::node_result n;
  n.name = std::move(r.name);
  n.rc = r.rc;
  n.out = std::move(r.out);
  n.err = std::move(r.err);
  n.truncated = r.truncated;
  n.error = std::move(r.error);
  n.message = std::move(r.message);
  n.reused = r.reused;
  return n;
}

} // namespace cws::api::wire
