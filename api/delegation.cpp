#include "api/delegation.hpp"

#include <algorithm>
#include <string_view>

namespace cws::api {

namespace {

/// What one distinct `servicenode` value means, decided once per call.
struct decision {
  enum kind_t : uint8_t { head, share, refuse } kind = head;
  /// share: the share's position; refuse: the message's.
  size_t which = 0;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

/// The refusal of a node whose entries `names` are all down.
std::string refusal(const std::vector<std::string_view>& names) {
  std::string list;
  for (auto n : names) {
    list += (list.empty() ? "" : ", ") + std::string{n};
  }
  return (names.size() == 1 ? "service node " + list + " is" : "service nodes " + list + " are")
         + " not registered or down; nothing was run on this node (sn_fallback = fail)";
}

} // namespace

delegation_plan plan_delegation(const std::vector<std::string>& names,
                                const std::vector<std::string>& servicenode,
                                const service_nodes& sns) {
  delegation_plan plan;
  std::vector<std::string> messages;
  std::unordered_map<std::string, size_t> share_of; // service node -> position in shares
  std::unordered_map<std::string, decision> decided;
  std::vector<std::string_view> entries;
  auto decide = [&](const std::string& value) {
    entries.clear();
    std::string_view rest{value};
    while (!rest.empty()) {
      auto comma = rest.find(',');
      auto entry = trim(rest.substr(0, comma));
      if (!entry.empty()) {
        entries.push_back(entry);
      }
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    decision d;
    if (entries.empty()) {
      return d; // only commas or blanks: none
    }
    for (auto e : entries) {
      std::string name{e};
      if (sns.head.count(name) != 0) {
        return d; // the head comes before any service node that is up
      }
      auto it = sns.known.find(name);
      if (it != sns.known.end() && it->second) {
        auto [pos, fresh] = share_of.try_emplace(name, plan.shares.size());
        if (fresh) {
          plan.shares.push_back({std::move(name), {}});
        }
        d.kind = decision::share;
        d.which = pos->second;
        return d;
      }
    }
    if (sns.fallback == sn_fallback::direct) {
      return d;
    }
    d.kind = decision::refuse;
    d.which = messages.size();
    messages.push_back(refusal(entries));
    return d;
  };
  plan.head.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    const auto& value = i < servicenode.size() ? servicenode[i] : std::string{};
    auto index = static_cast<uint32_t>(i);
    if (value.empty() || sns.known.count(names[i]) != 0) {
      plan.head.push_back(index); // no service node, or itself one
      continue;
    }
    auto it = decided.find(value);
    if (it == decided.end()) {
      it = decided.emplace(value, decide(value)).first;
    }
    switch (it->second.kind) {
      case decision::head: plan.head.push_back(index); break;
      case decision::share: plan.shares[it->second.which].indexes.push_back(index); break;
      case decision::refuse: plan.refused.push_back({index, messages[it->second.which]}); break;
    }
  }
  std::sort(plan.shares.begin(), plan.shares.end(),
            [](const sn_share& a, const sn_share& b) { return a.service_node < b.service_node; });
  return plan;
}

std::vector<size_t> split_fanout(size_t fanout, const std::vector<size_t>& counts) {
  std::vector<size_t> parts(counts.size(), 0);
  size_t total = 0;
  size_t engines = 0;
  for (auto c : counts) {
    total += c;
    engines += c != 0 ? 1 : 0;
  }
  if (engines == 0) {
    return parts;
  }
  if (fanout >= total) {
    return counts; // each engine runs all of its nodes at once
  }
  // in proportion, at least 1 each, then the rest by the largest remainders
  std::vector<double> ideal(counts.size(), 0);
  size_t sum = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) {
      continue;
    }
    ideal[i]
      = static_cast<double>(fanout) * static_cast<double>(counts[i]) / static_cast<double>(total);
    parts[i] = std::min(counts[i], std::max<size_t>(1, static_cast<size_t>(ideal[i])));
    sum += parts[i];
  }
  while (sum < fanout) {
    size_t best = counts.size();
    for (size_t i = 0; i < counts.size(); ++i) {
      if (parts[i] < counts[i]
          && (best == counts.size()
              || ideal[i] - static_cast<double>(parts[i])
                   > ideal[best] - static_cast<double>(parts[best]))) {
        best = i;
      }
    }
    if (best == counts.size()) {
      break;
    }
    ++parts[best];
    ++sum;
  }
  while (sum > fanout && sum > engines) {
    // the minimum of 1 pushed it over: take from the part furthest above its ideal
    size_t worst = counts.size();
    for (size_t i = 0; i < counts.size(); ++i) {
      if (parts[i] > 1
          && (worst == counts.size()
              || static_cast<double>(parts[i]) - ideal[i]
                   > static_cast<double>(parts[worst]) - ideal[worst])) {
        worst = i;
      }
    }
    if (worst == counts.size()) {
      break;
    }
    --parts[worst];
    --sum;
  }
  return parts;
}

wire::share_request make_share(const wire::job_request& job, const std::vector<uint32_t>& indexes,
                               std::string service_node, uint64_t id, size_t fanout,
                               const delegation_settings& s) {
  wire::share_request r;
  r.job.version = job.version;
  r.job.id = id;
  r.job.operation = job.operation;
  r.job.command = job.command;
  r.job.timeout_ms = job.timeout_ms;
  r.job.fanout = static_cast<uint32_t>(std::min<size_t>(fanout, UINT32_MAX));
  r.job.copy = job.copy;
  r.job.recursive = job.recursive;
  r.job.preserve = job.preserve;
  r.job.pull = job.pull;
  r.job.execute = job.execute;
  r.job.files = job.files;
  r.job.targets.reserve(indexes.size());
  for (size_t i = 0; i < indexes.size(); ++i) {
    auto t = job.targets.at(indexes[i]);
    t.index = static_cast<uint32_t>(i);
    r.job.targets.push_back(std::move(t));
  }
  r.service_node = std::move(service_node);
  r.credits = s.credits;
  r.batch_nodes = s.batch_nodes;
  r.batch_bytes = s.batch_bytes;
  return r;
}

} // namespace cws::api
