// makedhcp: the DHCP server's configuration and the nodes' reservations (api/makedhcp.hpp),
// with xCAT's options, messages and exit status (plugins/dhcp.pm).

#include <iostream>

#include "api/makedhcp.hpp"
#include "cli/commands.hpp"

namespace cws::cli {

namespace {

const char* const usage_text = "Usage: makedhcp -n\n\tmakedhcp -a\n\tmakedhcp -a -d\n\tmakedhcp -d "
                               "noderange\n\tmakedhcp <noderange> [-s statements]\n\tmakedhcp "
                               "-q\n\tmakedhcp [-h|--help]";

} // namespace

int makedhcp(const std::vector<std::string>& argv, io& streams) {
  parsed_args args;
  try {
    args = parse_args(
      argv, {"s", "nadqlrV", {"home"}, {"dry-run"}, {{"localonly", 'l'}, {"verbose", 'V'}}});
  } catch (const usage_error&) {
    streams.err << "Error: " << usage_text << '\n';
    return 1;
  }
  if (args.has("help")) {
    streams.out << "Usage: makedhcp -n\n"
                   "       makedhcp -a\n"
                   "       makedhcp -a -d\n"
                   "       makedhcp -d noderange\n"
                   "       makedhcp <noderange>\n"
                   "       makedhcp -q noderange\n"
                   "       makedhcp [-h|--help]\n"
                   "Creates and updates the DHCP server's configuration (dnsmasq or Kea).\n"
                   "  -n         a new server configuration from the networks table\n"
                   "  -a         every node with a MAC (with -d: every node removed)\n"
                   "  -d         remove the nodes' entries\n"
                   "  -q         what the server holds for the nodes, and how it differs\n"
                   "  -l, --localonly  accepted (no service nodes)\n"
                << "  --dry-run  print the diff of every file and the actions; change nothing\n"
                   "  --home DIR state directory (default $CLUSTERWS_HOME or /var/lib/clusterws)\n";
    return 0;
  }
  bool statements = !args.all("s").empty();
  bool n = args.has("n"), a = args.has("a"), d = args.has("d"), q = args.has("q");
  bool others_q = a || d || n || args.has("r") || args.has("l") || statements;
  if (q && others_q) {
    streams.err << "Error: The -q option cannot be used with other options.\n";
    return 1;
  }
  if (n && (a || d || q || args.has("r") || args.has("l") || statements)) {
    streams.err << "Error: The -n option cannot be used with other options.\n";
    return 1;
  }
  if (args.positional.size() > 1) {
    streams.err << "Error: " << usage_text << '\n';
    return 1;
  }
  bool has_nodes = !args.positional.empty();
  if (!n && !a && !has_nodes) {
    streams.err << usage_text << '\n';
    return 1;
  }
  if ((n || a) && has_nodes) {
    streams.err << "Error: " << usage_text << '\n';
    return 1;
  }
  if (statements) {
    streams.err << "Error: The -s option contains ISC DHCP statement text and is not supported "
                   "with the dnsmasq or Kea DHCP backend.\n";
    return 1;
  }
  auto s = session::open(args);
  auto cfg = api::dhcp_settings(s.settings);
  api::makedhcp_request req;
  req.new_config = n;
  req.all = a;
  req.remove = d;
  req.query = q;
  req.noderange = has_nodes ? args.positional.front() : std::string{};
  api::makedhcp_plan plan;
  {
    auto txn = s.db->read();
    store::cluster_view view{txn};
    plan = api::plan_makedhcp(view, req, cfg, api::local_host_facts(), s.noderange);
  }
  for (const auto& i : plan.messages.info) {
    streams.out << i << '\n';
  }
  for (const auto& l : plan.lines) {
    streams.out << l << '\n';
  }
  auto& m = plan.messages;
  for (const auto& note : plan.change.notes) {
    m.warnings.push_back(note);
  }
  for (const auto& w : m.warnings) {
    streams.err << "Warning: " << w << '\n';
  }
  for (const auto& e : m.errors) {
    streams.err << "Error: " << e << '\n';
  }
  int rc = m.errors.empty() ? 0 : 1;
  if (plan.refused || q) {
    return rc;
  }
  if (args.has("dry-run")) {
    streams.out << api::dhcp_dry_run_text(plan.change);
    return rc;
  }
  if (auto e = api::apply_dhcp_change(plan.change); !e.empty()) {
    streams.err << "Error: " << e << '\n';
    return 1;
  }
  return rc;
}

} // namespace cws::cli
