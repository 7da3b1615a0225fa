#pragma once

// The DHCP servers makedhcp drives, behind one interface: dnsmasq (api/dhcp_dnsmasq.cpp:
// a configuration file and a hosts file of every reservation, re-read at SIGHUP) and Kea 2.2
// (api/dhcp_kea.cpp: kea-dhcp4.conf, applied with config-test and config-set on its control
// socket). A backend renders; apply_dhcp_change writes (base::publish_file, everything rendered
// first) and then runs the steps.

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/dhcp.hpp"
#include "api/system_change.hpp"

namespace cws::api {

/// A file of the server's configuration: its new content, or its removal.
struct dhcp_file {
  std::filesystem::path path;
  std::string content;
  bool remove = false;
};

/// What runs after the files are in place (a reload, a Kea command).
struct dhcp_step {
  /// One line, as --dry-run lists it.
  std::string description;
  /// Runs it; returns "" or the error.
  std::function<std::string()> run;
};

/// Everything one makedhcp run changes: checks of the new configuration (run first: a
/// failure changes nothing), files whose content differs, then the steps.
struct dhcp_change {
  std::vector<dhcp_step> checks;
  std::vector<dhcp_file> files;
  std::vector<dhcp_step> steps;
  /// What the user should know (warnings, in xCAT's manner).
  std::vector<std::string> notes;
};

/// One reservation the server holds, as makedhcp -q shows it.
struct dhcp_entry {
  std::string node;
  std::string mac;
  std::string ip;
  std::string hostname;
};

/// A DHCP server. Render functions read the server's current files (to change only what
/// differs) and never write.
class dhcp_backend {
 public:
  virtual ~dhcp_backend() = default;

  /// `dnsmasq` or `kea`.
  virtual std::string_view name() const = 0;

  /// makedhcp -n: the server configuration for `intent`, with every reservation in it.
  virtual dhcp_change render_config(const dhcp_intent& intent) const = 0;

  /// makedhcp noderange / -a / -d: `intent.reservations` added or replaced and the
  /// reservations of the nodes `remove` dropped, the rest left as the server holds them.
  virtual dhcp_change render_nodes(const dhcp_intent& intent,
                                   const std::vector<std::string>& remove) const = 0;

  /// The reservations the server holds now (dnsmasq: its reservation files; Kea: the
  /// running configuration, or the file when Kea does not answer), in node order.
  /// @returns "" or why they could not be read.
  virtual std::string query(std::vector<dhcp_entry>& out) const = 0;
};

/// dnsmasq: `<dnsmasq_conf_dir>/clusterws-dhcp.conf` and
/// `<dnsmasq_conf_dir>/clusterws-dhcp/hosts` (reservations).
std::unique_ptr<dhcp_backend> make_dnsmasq_backend(const dhcp_config& cfg);

/// Kea 2.2: `kea_conf_file`, applied on `kea_control_socket`.
std::unique_ptr<dhcp_backend> make_kea_backend(const dhcp_config& cfg);

/// The backend called `name` (dnsmasq or kea); nullptr for another name.
std::unique_ptr<dhcp_backend> make_dhcp_backend(std::string_view name, const dhcp_config& cfg);

/// The change as the shared system_change (api/system_change.hpp): the written files, then
/// each removal and step as an action. (Checks are not in it: they run before it.)
system_change dhcp_system_change(const dhcp_change& change);

/// --dry-run: each check (`would check: ...`), the diff of each removed file, then the
/// system_change's text: `diff -u` of every written file, `would run: <description>`.
std::string dhcp_dry_run_text(const dhcp_change& change);

/// Runs the checks, writes every file (base::publish_file; removals last), then runs the
/// steps in order, stopping at the first failure. @returns "" or the first error.
std::string apply_dhcp_change(const dhcp_change& change);

/// Runs `command` through /bin/sh; "" if it exits 0, else its status and output.
std::string run_shell_command(const std::string& command);

// -- parsers of what comes from outside (fuzzed: fuzz/fuzz_dhcp.cpp) --------------------

/// The reservations of a dnsmasq dhcp-hostsfile (`mac,ip[,name][,lease]` lines, `#`
/// comments; tags, `id:` and lease fields skipped), each for the node of the last
/// `#node NAME` line before it (`node` before the first). A `mac,ignore` line is an entry
/// without an address.
std::vector<dhcp_entry> parse_dnsmasq_hosts(std::string_view text, const std::string& node);

/// The reservations of a Kea Dhcp4 configuration (a config-get answer, `arguments.Dhcp4`,
/// or a kea-dhcp4.conf, `Dhcp4`); node = the reservation's `user-context.node`, else its
/// hostname. @returns "" or why it is not a configuration.
std::string parse_kea_reservations(std::string_view json, std::vector<dhcp_entry>& out);

/// A Kea control-socket answer: `result` (0 success) and `text`. @returns false if it is
/// not one.
bool parse_kea_answer(std::string_view json, int& result, std::string& text);

} // namespace cws::api
