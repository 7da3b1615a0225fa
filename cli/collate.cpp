// xdshbak and xcoll: xdsh's `node: line` output, read on stdin, gathered per node and folded
// where nodes printed the same (xCAT's xdshbak and xcoll).

#include <algorithm>
#include <iostream>
#include <map>

#include "base/text.hpp"
#include "cli/commands.hpp"

namespace cws::cli {

namespace {

/// Each node's lines, in the order they came; nodes in first-seen order. Lines of several
/// nodes may interleave (xdsh prints as nodes finish, line by line).
struct per_node {
  std::vector<std::string> order;
  std::map<std::string, std::string> text;

  void add(const std::string& node, std::string_view line) {
    auto [it, fresh] = text.try_emplace(node);
    if (fresh) {
      order.push_back(node);
    }
    it->second.append(line).push_back('\n');
  }

  /// Nodes with identical output together: (nodes sorted, output), in the order each output
  /// was first seen.
  std::vector<std::pair<std::vector<std::string>, std::string>> groups() const {
    std::vector<std::pair<std::vector<std::string>, std::string>> out;
    std::map<std::string_view, size_t> index;
    for (const auto& n : order) {
      const auto& t = text.at(n);
      auto [it, fresh] = index.try_emplace(t, out.size());
      if (fresh) {
        out.push_back({{}, t});
      }
      out[it->second].first.push_back(n);
    }
    for (auto& g : out) {
      std::sort(g.first.begin(), g.first.end());
    }
    return out;
  }
};

} // namespace

int xdshbak(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "cxbq", {}, {}, {}});
  if (args.has("help")) {
    streams.out << "Usage: xdshbak [-c | -x [-b] | -h | -q]\n"
                   "Reads xdsh output (node: line) on stdin and prints it by node, sorted.\n"
                   "  -c  nodes with identical output are shown once, together\n"
                   "  -x  no header per node: the node: line lines sorted by node\n"
                   "  -b  with -x, without the node: prefix\n"
                   "  -q  quiet (accepted: clusterws prints no progress dots)\n";
    return 0;
  }
  if (args.has("c") && args.has("x")) {
    throw usage_error("The -c and -x flags cannot be used together.");
  }
  if (args.has("b") && !args.has("x")) {
    throw usage_error("The -b flag works only with -x.");
  }
  if (!args.positional.empty()) {
    throw usage_error("Unexpected argument '" + args.positional.front() + "'.");
  }
  per_node nodes;
  std::string line;
  while (std::getline(streams.in, line)) {
    auto sep = line.find(": ");
    if (sep != std::string::npos) { // other lines (xdsh's messages) are not node output
      nodes.add(line.substr(0, sep), std::string_view{line}.substr(sep + 2));
    }
  }
  if (args.has("c")) {
    bool first = true;
    for (const auto& [names, text] : nodes.groups()) {
      streams.out << (first ? "" : "\n") << "HOSTS " << std::string(73, '-') << '\n';
      for (size_t i = 0; i < names.size(); ++i) {
        streams.out << (i > 0 ? ", " : "") << names[i];
      }
      streams.out << '\n' << std::string(79, '-') << '\n' << text;
      first = false;
    }
    return 0;
  }
  bool first = true;
  for (const auto& [node, text] : nodes.text) { // (a map: sorted by node)
    if (args.has("x")) {
      for (const auto& l : base::output_lines(text)) {
        streams.out << (args.has("b") ? "" : node + ": ") << l << '\n';
      }
      continue;
    }
    auto header = "HOST: " + node;
    streams.out << (first ? "" : "\n") << header << '\n'
                << std::string(std::min<size_t>(header.size(), 63), '-') << '\n'
                << text;
    first = false;
  }
  return 0;
}

int xcoll(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "nic", {}, {}, {}});
  if (args.has("help")) {
    streams.out << "Usage: xcoll [-n] [-i] [-c]\n"
                   "Reads xdsh output (node: line) on stdin; prints each distinct output once,\n"
                   "under the nodes that printed it as one noderange (node[1-3,7]).\n"
                   "  -n  list the nodes, comma separated, instead of a noderange\n"
                   "  -i  each node's output on its own\n"
                   "  -c  with each group, its node count\n";
    return 0;
  }
  if (!args.positional.empty()) {
    throw usage_error("Unexpected argument '" + args.positional.front() + "'.");
  }
  per_node nodes;
  std::string line;
  while (std::getline(streams.in, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) {
      nodes.add("UNKNOWN", line);
      continue;
    }
    auto text = std::string_view{line}.substr(colon + 1);
    if (!text.empty() && text.front() == ' ') {
      text.remove_prefix(1);
    }
    nodes.add(line.substr(0, colon), text);
  }
  const std::string rule(36, '=');
  auto print = [&](const std::string& header, const std::string& text, size_t count) {
    streams.out << rule << '\n' << header << '\n' << rule << '\n';
    if (args.has("c")) {
      streams.out << "Node count = " << count << " \n" << rule << '\n';
    }
    streams.out << text << '\n';
  };
  if (args.has("i")) {
    for (const auto& [node, text] : nodes.text) {
      print(node, text, 1);
    }
    return 0;
  }
  std::vector<std::pair<std::string, std::pair<std::string, size_t>>> groups;
  for (auto& [names, text] : nodes.groups()) {
    auto count = names.size();
    auto header = args.has("n") ? base::join_list(names) : store::fold_nodes(names);
    groups.emplace_back(std::move(header), std::make_pair(text, count));
  }
  std::sort(groups.begin(), groups.end());
  for (const auto& [header, body] : groups) {
    print(header, body.first, body.second);
  }
  return 0;
}

} // namespace cws::cli
