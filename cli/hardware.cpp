// rpower and rsetboot: hardware control of a noderange over the same drivers as the REST
// service (api/hardware.hpp), run in-process, printing xCAT's `node: on` lines.


#include "api/planner.hpp"
#include "api/settings.hpp"
#include "cli/commands.hpp"

namespace cws::cli {

namespace {

constexpr const char* rpower_usage
  = "Usage: rpower NODERANGE [on|off|softoff|reset|boot|stat|state|status] [--home DIR]\n"
    "       rpower [-h | --help | -v | --version]\n"
    "Remote power control of the nodes' BMCs (mgt=ipmi: IPMI 2.0 / RMCP+ to the node's bmc,\n"
    "port bmcport or 623, user bmcusername/bmcpassword, else the passwd table's ipmi row).\n"
    "  on, off       power on or off (nothing is sent when it is so already)\n"
    "  softoff       ask the OS to shut down (ACPI)\n"
    "  reset         hard reset (a node that is off stays off)\n"
    "  boot          power on if off, else hard reset\n"
    "  stat          print the power state: `node: on` or `node: off`\n"
    "Each try waits site.ipmitimeout seconds (2), up to site.ipmiretries tries (3).\n";

constexpr const char* rsetboot_usage
  = "Usage: rsetboot NODERANGE [net|hd|cd|def|stat] [--home DIR]\n"
    "       rsetboot [-h | --help | -v | --version]\n"
    "Sets the device the nodes boot from next (mgt=ipmi), then prints what the BMC holds:\n"
    "  net  Network (PXE)   hd  Hard Drive   cd  CD/DVD   def  no override   stat  show it\n";

int run_hardware(api::operation op, const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "h", {"home"}, {"help"}, {}});
  const char* usage = op == api::operation::power ? rpower_usage : rsetboot_usage;
  if (args.has("help") || args.has("h")) {
    streams.out << usage;
    return 0;
  }
  if (args.positional.empty()) {
    streams.err << usage;
    return 1;
  }
  if (args.positional.size() < 2) {
    if (op == api::operation::power) {
      streams.err << "Please enter an action (eg: boot,off,on, etc)\n";
    } else {
      streams.err << usage;
    }
    return 1;
  }
  if (args.positional.size() > 2) {
    throw usage_error("too many arguments: " + args.positional[2]);
  }
  return run_hardware_call(op, args, args.positional[1], streams);
}

} // namespace

int run_hardware_call(api::operation op, const parsed_args& args, const std::string& command,
                      io& streams) {
  auto s = session::open(args);
  api::authorization me; // the CLI runs as its caller: no policy stamp
  me.user = "root";
  api::api_call call;
  call.op = op;
  call.target = args.positional[0];
  call.command = command;
  auto nr = s.noderange;
  nr.allow_files = false;
  api::drivers d;
  d.hardware = api::hardware_settings(s.settings);
  d.ipmi = std::make_shared<ipmi::engine>(api::ipmi_settings(s.settings));
  d.virt = std::make_shared<virt::hypervisors>(api::virt_settings(s.settings));
  api::node_operation_ptr op_ptr;
  auto r = api::plan(*s.db, call, me, nr, d, op_ptr);
  if (!r.ok()) {
    for (const auto& m : r.messages) {
      streams.err << "Error: " << m << '\n';
    }
    return 1;
  }
  // thousands of BMCs: one UDP socket each while they run
  raise_open_files_limit();
  size_t failed = 0;
  run_to_end(*op_ptr, [&](size_t, base::node_result res) {
    if (res.failed()) {
      ++failed;
      streams.err << res.name << ": Error: " << res.message << '\n';
    } else {
      // one line per line of the answer (reventlog's entries), each with the node's name
      size_t at = 0;
      do {
        auto nl = res.out.find('\n', at);
        streams.out << res.name << ": " << res.out.substr(at, nl - at) << '\n';
        at = nl == std::string::npos ? nl : nl + 1;
      } while (at != std::string::npos);
    }
  });
  streams.out.flush();
  return failed > 0 ? 1 : 0;
}

int rpower(const std::vector<std::string>& args, io& streams) {
  return run_hardware(api::operation::power, args, streams);
}

int rsetboot(const std::vector<std::string>& args, io& streams) {
  return run_hardware(api::operation::nextboot, args, streams);
}

} // namespace cws::cli
