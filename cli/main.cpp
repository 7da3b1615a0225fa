// clusterctl: one multi-call binary for the xCAT tools (definitions, tables, xdsh and xdcp,
// hardware control, nodestat, ...) and clusterctl's own commands (init, passwd, pki, backup,
// restore, events, ...): the usage text below lists them all, cli/commands.cpp runs them.
// Called by a tool's name (a symlink, CMakeLists.txt's CLUSTERWS_TOOLS) or as
// `clusterctl <command> ...`.

#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
  // the tools print (and read) hundreds of thousands of lines: no stdio syncing
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string name = std::filesystem::path{argc > 0 ? argv[0] : "clusterctl"}.filename();
  cws::cli::io streams{std::cin, std::cout, std::cerr};
  if (name == "clusterctl") {
    if (args.empty() || args.front() == "--help" || args.front() == "-h") {
      std::cout
        << "Usage: clusterctl COMMAND [ARGS]\n"
           "       clusterctl {-h | --help | -v | --version}\n"
           "Commands: lsdef nodels mkdef chdef rmdef xdsh xdcp init passwd tokens revoke\n"
           "          rmuser events\n"
           "          noderange tabdump gettab chtab tabch nodech nodeadd noderm\n"
           "          tabrestore tabprune makenetworks makehosts backup restore pki xdshbak\n"
           "          xcoll rpower rsetboot rvitals rinv nodestat reventlog rbeacon makedns\n"
           "          makedhcp nodeset rinstall makeconservercf rcons sn\n"
           "Each command takes --help. The definition tools are also installed under\n"
           "their own names (lsdef, nodels, mkdef, chdef, rmdef, xdsh, and the table tools).\n";
      return args.empty() ? 1 : 0;
    }
    if (args.front() == "--version" || args.front() == "-v") {
      cws::cli::print_version(name, std::cout);
      return 0;
    }
    name = args.front();
    args.erase(args.begin());
  }
  return cws::cli::run_tool(name, args, streams);
}
