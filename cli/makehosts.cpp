// makehosts: the hosts file's node lines from the store (api/hosts), written atomically.

#include <iostream>

#include "api/hosts.hpp"
#include "cli/commands.hpp"
#include "store/cluster_view.hpp"

namespace cws::cli {

namespace {

constexpr const char* usage = "Usage: makehosts <noderange> [-d] [-n] [-l] [-a] [-o] [--dry-run]\n"
                              "       makehosts -h\n"
                              "       makehosts -v\n";

} // namespace

int makehosts(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"",
                                "ndlaomh",
                                {"home"},
                                {"dry-run"},
                                {{"longnamefirst", 'l'},
                                 {"othernamesfirst", 'o'},
                                 {"adddomaintohostnames", 'a'},
                                 {"mactolinklocal", 'm'}}});
  if (args.has("help") || args.has("h")) {
    streams.out
      << usage
      << "Writes the nodes' lines of the hosts file (setting hosts_file, default /etc/hosts)\n"
         "from their ip, hostnames, otherinterfaces and nics attributes; other lines are kept.\n"
         "  -n         a new file: 127.0.0.1 localhost and the nodes only\n"
         "  -d         remove the nodes' lines\n"
         "  -l         the long name (with the domain) first\n"
         "  -a         the domain added to each hostnames alias\n"
         "  -o         the hostnames aliases first\n"
         "  --dry-run  print the difference (diff -u) and write nothing\n"
         "  --home DIR state directory (default $CLUSTERWS_HOME or /var/lib/clusterws)\n";
    return 0;
  }
  if (args.has("m")) {
    throw usage_error("makehosts -m (link-local addresses from MACs) is not supported by "
                      "clusterws.");
  }
  if (args.positional.size() > 1) {
    throw usage_error("Unexpected argument '" + args.positional[1] + "'.");
  }
  auto s = session::open(args);
  api::hosts_request req;
  req.new_file = args.has("n");
  req.remove = args.has("d");
  req.long_first = args.has("l");
  req.others_first = args.has("o");
  req.domain_on_aliases = args.has("a");
  req.max_bytes = s.settings.number("hosts_file_max_bytes");
  if (!args.positional.empty()) {
    req.nodes = s.names(store::object_type::node, args.positional.front());
  }
  std::filesystem::path path = s.settings.text("hosts_file");
  api::system_change change;
  store::outcome out;
  {
    auto txn = s.db->read();
    store::cluster_view view{txn, false};
    out = api::plan_hosts(view, path, req, change);
  }
  int rc = report(out, streams);
  if (change.files.empty()) {
    return rc;
  }
  if (args.has("dry-run")) {
    std::string error;
    streams.out << change.dry_run_text(&error);
    if (!error.empty()) {
      streams.err << "Error: " << error << '\n';
      return 1;
    }
    return rc;
  }
  std::string message;
  if (change.apply(message)) {
    streams.err << "Error: " << message << '\n';
    return 1;
  }
  return rc;
}

} // namespace cws::cli
