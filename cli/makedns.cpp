// makedns: named's zones and signed dynamic updates from the store (api/makedns).

#include <ctime>
#include <iostream>

#include "api/makedns.hpp"
#include "api/settings.hpp"
#include "cli/commands.hpp"
#include "store/error.hpp"

namespace cws::cli {

namespace {

void usage(std::ostream& out) {
  out << "Usage: makedns [-V|--verbose] [-e|--external] [-n|--new] [--dry-run] [noderange]\n"
         "       makedns [-V|--verbose] [-e|--external] [-d|--delete] [--dry-run] noderange\n"
         "Sets up domain name services (DNS) from the cluster database: named.conf fragments\n"
         "and zone files for the networks table, then the nodes' A, PTR and CNAME records in\n"
         "TSIG-signed dynamic updates (only what the name server does not hold yet).\n"
         "  -n  new: the fragments and zones, every node's records, and none of a node no\n"
         "      longer defined (the same as no noderange)\n"
         "  -d  delete the records of the nodes in noderange\n"
         "  -e  external DNS: updates only, to dns_server; no named files, no reload\n"
         "  --dry-run  print the diff of every file and every update; change nothing\n"
         "  --home DIR state directory (default $CLUSTERWS_HOME or /var/lib/clusterws)\n";
}

} // namespace

int makedns(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"",
                                "andesVh",
                                {"home"},
                                {"dry-run"},
                                {{"all", 'a'},
                                 {"new", 'n'},
                                 {"delete", 'd'},
                                 {"external", 'e'},
                                 {"slave", 's'},
                                 {"verbose", 'V'}}});
  if (args.has("help") || args.has("h")) {
    usage(streams.out);
    return 0;
  }
  if (args.has("s")) {
    throw usage_error("-s (DNS slaves on service nodes) is not supported by clusterws.");
  }
  if (args.positional.size() > 1) {
    throw usage_error("Unexpected argument '" + args.positional[1] + "'.");
  }
  api::makedns_request req;
  req.fresh = args.has("n");
  req.remove = args.has("d");
  req.external = args.has("e");
  req.dry_run = args.has("dry-run");
  req.all = args.positional.empty();
  if (req.remove && req.all && !args.has("a")) {
    streams.err << "Error: makedns -d without noderange or -a is not supported\n";
    usage(streams.err);
    return 1;
  }
  if (req.remove && req.fresh) {
    throw usage_error("-d and -n cannot be used together.");
  }
  auto s = session::open(args);
  auto cfg = api::dns_settings(s.settings, s.home.dir);
  auto txn = s.db->read();
  if (auto site = txn.get(store::object_type::site, "clustersite")) {
    auto ext = site->find("externaldns").value_or("");
    if (ext == "1" || ext == "yes") {
      req.external = true; // site.externaldns: -e by default, as xCAT
    }
  }
  if (req.all) {
    req.nodes = txn.names(store::object_type::node);
  } else {
    req.nodes = s.names(store::object_type::node, args.positional.front());
    std::vector<std::string> missing;
    for (const auto& n : req.nodes) {
      if (!txn.exists(store::object_type::node, n)) {
        missing.push_back(n);
      }
    }
    if (!missing.empty()) {
      streams.err << "Error: " << store::missing_nodes_message(missing) << '\n';
      return 1;
    }
  }
  auto res = api::run_makedns(txn, req, cfg, static_cast<uint64_t>(std::time(nullptr)));
  for (const auto& line : res.out) {
    streams.out << line << (line.empty() || line.back() != '\n' ? "\n" : "");
  }
  for (const auto& e : res.errors) {
    streams.err << "Error: " << e << '\n';
  }
  return res.errors.empty() ? 0 : 1;
}

} // namespace cws::cli
