// rpower, rsetboot, rvitals and rinv: hardware control of a noderange over the same drivers
// as the REST service (api/hardware.hpp), run in-process, printing xCAT's `node: on` lines.

#include "api/operation_traits.hpp"
#include "api/planner.hpp"
#include "api/settings.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/daemon_route.hpp"
#include "cli/remote.hpp"

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
  = "Usage: rsetboot NODERANGE [net|hd|cd|def|stat] [-u] [--home DIR]\n"
    "       rsetboot [-h | --help | -v | --version]\n"
    "Sets the device the nodes boot from next (mgt=ipmi), then prints what the BMC holds:\n"
    "  net  Network (PXE)   hd  Hard Drive   cd  CD/DVD   def  no override   stat  show it\n"
    "  -u   boot in UEFI mode (the boot flags' EFI bit; net, hd, cd)\n";

constexpr const char* rvitals_usage
  = "Usage: rvitals NODERANGE [all|temp|voltage|wattage|fanspeed|power|leds|chassis]...\n"
    "               [--home DIR]\n"
    "       rvitals [-h | --help | -v | --version]\n"
    "Reads the sensors of the nodes' BMCs (mgt=ipmi), one `node: Sensor: value` line each:\n"
    "  all       chassis status, every sensor, LEDs (the default)\n"
    "  temp, voltage, wattage, fanspeed   the sensors of that type\n"
    "  power     wattage sensors and the power state   leds   LED state   chassis   status\n";

constexpr const char* rinv_usage
  = "Usage: rinv NODERANGE [all|model|serial|asset|vpd|mprom|deviceid|guid|firm|misc]...\n"
    "            [--home DIR]\n"
    "       rinv [-h | --help | -v | --version]\n"
    "Reads the nodes' inventory: mgt=ipmi from the BMC (device id, firmware, GUID, FRU),\n"
    "mgt=kvm from the virtual machine's definition (UUID, CPUs, memory, disks, MACs).\n"
    "  all     everything (the default)   vpd   model, serial, deviceid and mprom\n";

const char* usage_of(api::operation op) {
  switch (op) {
    case api::operation::power: return rpower_usage;
    case api::operation::vitals: return rvitals_usage;
    case api::operation::inventory: return rinv_usage;
    default: return rsetboot_usage;
  }
}

int run_hardware(api::operation op, const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "hu", {"home"}, {"help"}, {{"uefimode", 'u'}}});
  const char* usage = usage_of(op);
  if (args.has("u") && op != api::operation::nextboot) {
    throw usage_error("unknown option -u");
  }
  // rvitals and rinv take several keywords; none is `all`
  bool words = op == api::operation::vitals || op == api::operation::inventory;
  if (args.has("help") || args.has("h")) {
    streams.out << usage;
    return 0;
  }
  if (args.positional.empty()) {
    streams.err << usage;
    return 1;
  }
  if (args.positional.size() < 2 && !words) {
    if (op == api::operation::power) {
      streams.err << "Please enter an action (eg: boot,off,on, etc)\n";
    } else {
      streams.err << usage;
    }
    return 1;
  }
  if (args.positional.size() > 2 && !words) {
    throw usage_error("too many arguments: " + args.positional[2]);
  }
  std::string command; // rvitals and rinv take several keywords, "all" when none
  for (size_t i = 1; i < args.positional.size(); ++i) {
    command += (i > 1 ? " " : "") + args.positional[i];
  }
  if (words && command.empty()) {
    command = "all";
  }
  if (args.has("u")) {
    command += " -u"; // rsetboot net -u: boot in UEFI mode
  }
  return run_hardware_call(op, args, command, streams);
}

/// The request of `op` with `command` on `spec` to clusterwsd, as the REST clients send it
/// (docs/api.md); false when the REST API has no form for it (reventlog NUMBER, -s).
bool rest_form(api::operation op, const std::string& spec, const std::string& command,
               std::string& method, std::string& target, std::string& body) {
  std::string base = "/clusterws/nodes/" + url_encode(spec) + "/";
  auto json = [](const char* key, const std::string& value) {
    std::string quoted;
    for (char c : value) { // the CLI's words: letters, digits, spaces and '-'
      if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
        return std::string{};
      }
      quoted += c;
    }
    return "{\"" + std::string{key} + "\":\"" + quoted + "\"}";
  };
  switch (op) {
    case api::operation::power:
    case api::operation::beacon:
    case api::operation::nextboot: {
      method = "PUT";
      target = base
               + (op == api::operation::power    ? "power"
                  : op == api::operation::beacon ? "beacon"
                                                 : "nextboot");
      body = json(op == api::operation::nextboot ? "order" : "action", command);
      return !body.empty();
    }
    case api::operation::eventlog:
      if (command != "all" && command != "clear") {
        return false;
      }
      method = command == "all" ? "GET" : "DELETE";
      target = base + "eventlog";
      return true;
    case api::operation::vitals:
    case api::operation::inventory: {
      method = "GET";
      target = base + (op == api::operation::vitals ? "vitals/" : "inventory/");
      for (auto word : base::split_words(command, " ")) {
        target += (target.back() == '/' ? "" : ";") + url_encode(word); // `;` as sent raw
      }
      return true;
    }
    default: return false;
  }
}

/// Prints one node as xCAT's tools do; counts the failures.
void print_node(const base::node_result& res, size_t& failed, io& streams) {
  if (res.failed()) {
    ++failed;
    streams.err << res.name << ": Error: " << res.message << '\n';
  } else {
    // one line per line of the answer (a reading, an inventory item, an event log entry),
    // each with the node's name; a node with nothing to say prints nothing, as xCAT
    for (const auto& line : base::output_lines(res.out)) {
      if (!line.empty()) {
        streams.out << res.name << ": " << line << '\n';
      }
    }
  }
}

} // namespace

int run_hardware_call(api::operation op, const parsed_args& args, const std::string& command,
                      io& streams) {
  auto s = session::open(args);
  // a head with service nodes: through clusterwsd, which delegates (docs/service-nodes.md)
  std::string method, target, body;
  if (!rest_form(op, args.positional[0], command, method, target, body)) {
    warn_in_process(s, std::string{api::traits(op).policy_command}, "with '" + command + "'",
                    streams);
  } else if (auto socket = daemon_route(s, std::string{api::traits(op).policy_command}, streams)) {
    size_t failed = 0;
    remote{*socket}.run(method, target + "?stream=1", body,
                        [&](base::node_result res) { print_node(res, failed, streams); });
    streams.out.flush();
    return failed > 0 ? 1 : 0;
  }
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
  run_to_end(*op_ptr, [&](size_t, base::node_result res) { print_node(res, failed, streams); });
  streams.out.flush();
  return failed > 0 ? 1 : 0;
}

int rpower(const std::vector<std::string>& args, io& streams) {
  return run_hardware(api::operation::power, args, streams);
}

int rsetboot(const std::vector<std::string>& args, io& streams) {
  return run_hardware(api::operation::nextboot, args, streams);
}

int rvitals(const std::vector<std::string>& args, io& streams) {
  return run_hardware(api::operation::vitals, args, streams);
}

int rinv(const std::vector<std::string>& args, io& streams) {
  return run_hardware(api::operation::inventory, args, streams);
}

} // namespace cws::cli
