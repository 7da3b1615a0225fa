// reventlog and rbeacon: a noderange's BMC event logs and identify LEDs over the same drivers
// as the REST service (api/hardware.hpp), run in-process, printing xCAT's `node: ...` lines.

#include "cli/commands.hpp"

namespace cws::cli {

namespace {

constexpr const char* reventlog_usage
  = "Usage: reventlog NODERANGE [NUMBER [-s] | all [-s] | clear] [--home DIR]\n"
    "       reventlog [-h | --help | -v | --version]\n"
    "Reads or clears the System Event Log of the nodes' BMCs (mgt=ipmi), one line per entry:\n"
    "  all       every entry, oldest first (the default)\n"
    "  NUMBER    the newest NUMBER entries\n"
    "  -s        newest first\n"
    "  clear     empty the log\n"
    "At most ipmi_sel_max_entries (clusterws.conf) entries are read from one BMC.\n";

constexpr const char* rbeacon_usage
  = "Usage: rbeacon NODERANGE on|blink|off|stat [--home DIR]\n"
    "       rbeacon [-h | --help | -v | --version]\n"
    "Turns the identify light of the nodes' chassis on (until turned off), blink (for 255 s,\n"
    "then off by itself) or off through their BMCs (mgt=ipmi); stat prints its state when the\n"
    "BMC reports it.\n";

} // namespace

int reventlog(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "hs", {"home"}, {"help"}, {}});
  if (args.has("help") || args.has("h")) {
    streams.out << reventlog_usage;
    return 0;
  }
  if (args.positional.empty()) {
    streams.err << reventlog_usage;
    return 1;
  }
  if (args.positional.size() > 2) {
    throw usage_error("reventlog " + args.positional[1] + " " + args.positional[2] + " invalid");
  }
  std::string command = args.positional.size() == 2 ? args.positional[1] : "all";
  if (args.has("s")) {
    command += " -s";
  }
  return run_hardware_call(api::operation::eventlog, args, command, streams);
}

int rbeacon(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "h", {"home"}, {"help"}, {}});
  if (args.has("help") || args.has("h")) {
    streams.out << rbeacon_usage;
    return 0;
  }
  if (args.positional.size() != 2) {
    streams.err << rbeacon_usage;
    return 1;
  }
  return run_hardware_call(api::operation::beacon, args, args.positional[1], streams);
}

} // namespace cws::cli
