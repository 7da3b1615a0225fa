// makenetworks: network definitions for the head node's own interfaces (api/makenetworks).

#include <iostream>

#include "api/makenetworks.hpp"
#include "cli/commands.hpp"

namespace cws::cli {

int makenetworks(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "dV", {"home"}, {}, {{"display", 'd'}, {"verbose", 'V'}}});
  if (args.has("help")) {
    streams.out << "Usage: makenetworks [-V|--verbose] [-d|--display]\n"
                   "Defines a network for each IPv4 network of this host's interfaces (not\n"
                   "loopback), named net-mask with '_' for '.' (10_0_0_0-255_255_0_0).\n"
                   "  -d  print the definitions as stanzas (for mkdef -z) instead\n"
                   "  --home DIR state directory (default $CLUSTERWS_HOME or /var/lib/clusterws)\n";
    return 0;
  }
  if (!args.positional.empty()) {
    throw usage_error("Unexpected argument '" + args.positional.front() + "'.");
  }
  auto objects = api::network_objects(api::host_networks());
  if (args.has("d")) {
    streams.out << "# <xCAT data object stanza file>\n";
    for (const auto& o : objects) {
      streams.out << '\n' << o.name << ":\n    objtype=network\n";
      for (const auto& a : o.attrs) {
        streams.out << "    " << a.name << '=' << a.value << '\n';
      }
    }
    return 0;
  }
  auto s = session::open(args);
  return report(
    store::apply(*s.db, [&](store::write_txn& t) { return api::make_networks(t, objects); }),
    streams);
}

} // namespace cws::cli
