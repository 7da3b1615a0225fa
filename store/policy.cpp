#include "store/policy.hpp"

#include <algorithm>
#include <cstdlib>
#include <re2/re2.h>

#include "base/text.hpp"
#include "store/database.hpp"

namespace cws::store {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool wildcard(const std::string& field) {
  return field.empty() || field == "*";
}

bool in_list(const std::string& list, const std::string& item) {
  auto items = base::split_list(list);
  return std::find(items.begin(), items.end(), item) != items.end();
}

bool trusted(const std::string& rule) {
  return lower(rule).find("trusted") != std::string::npos;
}

bool allows(const std::string& rule) {
  auto r = lower(rule);
  return r.find("allow") != std::string::npos || r.find("accept") != std::string::npos
         || trusted(rule);
}

std::string get(const attr_map& attrs, const char* key) {
  auto it = attrs.find(key);
  return it == attrs.end() ? std::string{} : it->second;
}

} // namespace

bool is_policy_rule(std::string_view rule) {
  auto r = lower(std::string{rule});
  return r == "allow" || r == "accept" || r == "trusted" || r == "deny";
}

bool policy_row_enabled(const attr_map& attrs) {
  auto d = get(attrs, "disable");
  return d.empty() || d == "0" || lower(d) == "no";
}

policy_row make_policy_row(const std::string& priority, const attr_map& attrs) {
  policy_row row;
  row.priority = priority;
  row.order = std::strtod(priority.c_str(), nullptr);
  row.name = get(attrs, "name");
  row.host = get(attrs, "host");
  row.commands = get(attrs, "commands");
  row.parameters = get(attrs, "parameters");
  row.noderange = get(attrs, "noderange");
  row.rule = get(attrs, "rule");
  return row;
}

void sort_policy(std::vector<policy_row>& rows) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const policy_row& a, const policy_row& b) { return a.order < b.order; });
}

policy_decision evaluate_policy(const std::vector<policy_row>& rows, const policy_request& req) {
  std::vector<std::string> pending = req.nodes;
  for (const auto& row : rows) {
    if ((!row.name.empty() && row.name != "*" && row.name != req.user)
        || (trusted(row.rule) && !req.host_identity)) {
      continue;
    }
    if (!wildcard(row.host)
        && std::none_of(req.hosts.begin(), req.hosts.end(),
                        [&](const std::string& h) { return in_list(row.host, h); })) {
      continue;
    }
    if (!wildcard(row.commands) && !in_list(row.commands, req.command)) {
      continue;
    }
    if (!wildcard(row.parameters)) {
      re2::RE2 re{row.parameters, re2::RE2::Quiet};
      if (!re.ok() || !re2::RE2::PartialMatch(req.arguments, re)) {
        continue;
      }
    }
    if (!wildcard(row.noderange)) {
      if (!req.has_noderange) {
        continue;
      }
      if (!req.nodes_known) {
        return {false, row.priority, true};
      }
      std::vector<std::string> covered;
      std::set_intersection(pending.begin(), pending.end(), row.nodes.begin(), row.nodes.end(),
                            std::back_inserter(covered));
      if (covered.empty()) {
        continue;
      }
      if (allows(row.rule) && covered.size() < pending.size()) {
        std::vector<std::string> rest;
        std::set_difference(pending.begin(), pending.end(), covered.begin(), covered.end(),
                            std::back_inserter(rest));
        pending = std::move(rest);
        continue; // part allowed: the rest must be allowed by later rows
      }
    }
    return {allows(row.rule), row.priority, false};
  }
  return {false, {}, false};
}

} // namespace cws::store
