// nodeset: the next boot state of a noderange (api/nodeset), one store transaction for any
// number of nodes, printing xCAT's `node: install debian12-x86_64-compute` lines.

#include "api/nodeset.hpp"
#include "api/targets.hpp"
#include "api/xnba_mirror.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"

namespace cws::cli {

namespace {

constexpr const char* nodeset_help
  = "Usage: nodeset <noderange> [shell|boot|runcmd=bmcsetup|osimage[=<imagename>]|offline]\n"
    "               [--dry-run]\n"
    "       nodeset <noderange> [stat|next]\n"
    "       nodeset [-h | --help | -v | --version]\n"
    "Sets the state the nodes boot into next (chain.currstate, chain.currchain), for every\n"
    "node in one transaction; the boot listener serves each node's script from it.\n"
    "  osimage[=NAME]  install the osimage (default: each node's nodetype.provmethod);\n"
    "                  sets nodetype.os, arch, profile, provmethod from it\n"
    "  boot            boot from the local disk\n"
    "  shell           boot the service shell\n"
    "  offline         no boot script at all\n"
    "  stat            print each node's state\n"
    "  next            move each node along chain.currchain\n"
    "  --dry-run       print what would change (diff -u of each node's chain and nodetype\n"
    "                  values, the install token armed or ended, and with xnba_mirror on\n"
    "                  diff -u of each xnba file), write nothing\n"
    "  --home DIR      state directory (default $CLUSTERWS_HOME or /var/lib/clusterws)\n";

} // namespace

int nodeset(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"",
                                "hV",
                                {"home"},
                                {"help", "noupdateinitrd", "ignorekernelchk", "dry-run"},
                                {{"verbose", 'V'}}});
  if (args.has("help") || args.has("h")) {
    streams.out << nodeset_help;
    return 0;
  }
  if (args.positional.size() != 2) {
    streams.err << api::nodeset_usage << '\n';
    return 1;
  }
  std::string error;
  auto action = api::parse_nodeset_action(args.positional[1], error);
  if (!action) {
    streams.err << "Error: " << error << '\n' << api::nodeset_usage << '\n';
    return 1;
  }
  auto s = session::open(args);
  api::api_call call;
  call.op = action->what == api::nodeset_action::kind::stat ? api::operation::bootstate
                                                            : api::operation::nodeset;
  call.target = args.positional[0];
  call.command = args.positional[1];
  api::authorization me; // the CLI runs as its caller: no policy stamp
  me.user = "root";
  auto nodes_of = [&](const store::cluster_view& view) {
    std::vector<std::string> nodes;
    auto found = api::verified_nodes(view, call, me, s.noderange, nodes);
    if (!found.ok()) {
      store::outcome o;
      o.errors = found.messages;
      throw store::rejected{std::move(o)};
    }
    return nodes;
  };
  auto mirror = api::xnba_mirror_settings(
    s.settings.text("xnba_mirror"), s.settings.text("tftp_root"), s.settings.text("boot_listen"));
  if (args.has("dry-run") && call.op == api::operation::nodeset) {
    try {
      auto txn = s.db->read();
      store::cluster_view view{txn};
      auto nodes = nodes_of(view);
      auto out = api::boot_state_dry_run(view, nodes, *action);
      if (mirror.on) {
        // the files as they would be after the change: planned on the change rolled back
        std::string text;
        try {
          s.db->write([&](store::write_txn& t) {
            api::set_boot_state(t, nodes, *action);
            text = api::xnba_mirror_dry_run(t, nodes, mirror);
            throw store::rejected{store::outcome{}}; // (roll back: nothing is written)
          });
        } catch (const store::rejected&) {
          // nop
        }
        for (auto& line : base::output_lines(text)) {
          out.info.push_back(std::move(line));
        }
        if (!out.info.empty() && out.info.back().empty()) {
          out.info.pop_back();
        }
      }
      return report(out, streams);
    } catch (const store::rejected& r) {
      return report(r.result, streams);
    }
  }
  if (call.op == api::operation::bootstate) {
    try {
      auto txn = s.db->read();
      store::cluster_view view{txn};
      return report(api::boot_states(view, nodes_of(view)), streams);
    } catch (const store::rejected& r) {
      return report(r.result, streams);
    }
  }
  std::vector<std::string> nodes;
  auto rc = report(store::apply(*s.db,
                                [&](store::write_txn& t) {
                                  {
                                    store::cluster_view view{t};
                                    nodes = nodes_of(view);
                                  }
                                  return api::set_boot_state(t, nodes, *action);
                                }),
                   streams);
  if (rc == 0 && mirror.on) {
    // after the commit, in one pass from one snapshot (the daemon's change feed does the same
    // for the changes it sees)
    std::string message;
    if (api::apply_xnba_mirror(s.db->read(), nodes, mirror, message)) {
      streams.err << "Error: xnba mirror: " << message << '\n';
      return 1;
    }
  }
  return rc;
}

} // namespace cws::cli
