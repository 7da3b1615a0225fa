// clusterctl noderange: expand or fold noderanges without a database (like nodeset -e/-f).

#include <cstring>
#include <iostream>
#include <iterator>
#include <string>

#include "cli/commands.hpp"

namespace cws::cli {

int noderange(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "ef", {}, {}, {}});
  if (args.has("help")) {
    streams.out << "Usage: clusterctl noderange [-e | -f] [RANGE ...]\n"
                   "Without the database: -e (default) prints the names of the ranges,\n"
                   "space-separated; -f folds them into one noderange (node[1-3,10]).\n"
                   "Without RANGE, reads ranges from stdin (whitespace-separated).\n";
    return 0;
  }
  auto inputs = args.positional;
  if (inputs.empty()) {
    std::string text{std::istreambuf_iterator<char>{streams.in}, {}};
    size_t pos = 0;
    while ((pos = text.find_first_not_of(" \t\r\n", pos)) != std::string::npos) {
      auto end = text.find_first_of(" \t\r\n", pos);
      inputs.push_back(text.substr(pos, end - pos));
      pos = end;
    }
  }
  store::empty_universe universe;
  store::noderange_options opts;
  opts.verify = false;
  apply_node_affixes(opts);
  std::vector<std::string> names;
  for (auto& in : inputs) {
    if (in.find_first_of("[],-:+@^/=~!()'\"") == std::string::npos
        && in.find_first_not_of("0123456789") != std::string::npos) {
      names.push_back(std::move(in)); // a plain name: nothing to expand
      continue;
    }
    auto r = store::expand_noderange(in, universe, opts);
    if (names.empty()) {
      names = std::move(r.nodes);
    } else {
      names.insert(names.end(), std::make_move_iterator(r.nodes.begin()),
                   std::make_move_iterator(r.nodes.end()));
    }
  }
  if (args.has("f")) {
    streams.out << store::fold_nodes(std::move(names)) << '\n';
    return 0;
  }
  size_t total = 0;
  for (const auto& n : names) {
    total += n.size() + 1;
  }
  std::string out(total, ' ');
  char* p = out.data();
  for (const auto& n : names) {
    std::memcpy(p, n.data(), n.size());
    p += n.size() + 1; // the separator is already there
  }
  if (!out.empty()) {
    out.back() = '\n';
  }
  streams.out << out;
  return 0;
}

} // namespace cws::cli
