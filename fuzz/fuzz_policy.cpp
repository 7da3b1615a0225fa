// libFuzzer: policy rows and requests built from the input are evaluated without crashing.
// Input: lines "priority name host commands parameters rule", then a request line.

#include <cstdint>
#include <sstream>
#include <string>

#include "store/policy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in{std::string{reinterpret_cast<const char*>(data), size}};
  std::vector<cws::store::policy_row> rows;
  std::string line;
  cws::store::policy_request req;
  while (std::getline(in, line) && rows.size() < 64) {
    std::istringstream f{line};
    std::string prio, name, host, commands, params, rule;
    f >> prio >> name >> host >> commands >> params >> rule;
    auto row = cws::store::make_policy_row(prio, {{"name", name == "-" ? "" : name},
                                                  {"host", host == "-" ? "" : host},
                                                  {"commands", commands == "-" ? "" : commands},
                                                  {"parameters", params == "-" ? "" : params},
                                                  {"rule", rule}});
    row.nodes = {name, host};
    std::sort(row.nodes.begin(), row.nodes.end());
    row.noderange = commands.size() % 2 ? "x" : "";
    rows.push_back(std::move(row));
    req.user = name;
    req.command = commands;
    req.arguments = line;
    req.hosts = {host, "localhost"};
    req.nodes = {prio, rule};
    std::sort(req.nodes.begin(), req.nodes.end());
    req.has_noderange = !prio.empty();
  }
  cws::store::sort_policy(rows);
  // without the nodes, a decision is either the one made with them or a request for them
  auto early = cws::store::evaluate_policy(rows, req);
  req.nodes_known = true;
  auto full = cws::store::evaluate_policy(rows, req);
  if (full.needs_nodes || (!early.needs_nodes && early.allowed != full.allowed)) {
    __builtin_trap();
  }
  return 0;
}
