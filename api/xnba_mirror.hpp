#pragma once

// The compatibility mirror of xCAT's per-node xnba files (setting `xnba_mirror`, off by
// default; docs/provisioning.md, "The xnba mirror"): for sites whose own tools read
// `<tftpdir>/xcat/xnba/nodes/<node>` (its second line is the node's state, as xCAT's
// `nodeset stat` reads it). Nodes never boot from these files (the boot listener answers them
// per request); they are written after the store transaction that changed the state, from
// one read snapshot, each with base::publish_file, in xnba.pm's format. They never carry the
// install token: a TFTP root is readable by anyone on the provisioning network.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/system_change.hpp"
#include "store/database.hpp"

namespace cws::api {

/// Where and how the mirror is written (settings `xnba_mirror`, `tftp_root`, `boot_listen`).
struct xnba_mirror_config {
  bool on = false;
  /// `tftp_root`; empty: site.tftpdir, else /srv/tftp.
  std::string tftp_root;
  /// `boot_listen` (address:port): the port of the URLs (`http://${next-server}:PORT`).
  std::string boot_listen;
};

/// The mirror's settings from the configuration.
xnba_mirror_config xnba_mirror_settings(const std::string& mirror, const std::string& tftp_root,
                                        const std::string& boot_listen);

/// The files of `node` as xnba.pm's setstate writes them for its chain.currstate, as paths
/// relative to the TFTP root (`xcat/xnba/nodes/<node>`, `xcat/xnba/nodes/<node>.uefi`) with
/// their content; none when the node has no boot script (offline, unset, not defined, a state
/// the listener does not serve). `base_url`: `http://${next-server}[:port]`.
std::vector<std::pair<std::string, std::string>>
render_xnba_files(const store::read_txn& txn, std::string_view node, std::string_view base_url);

/// What brings the mirror of `nodes` in line with `txn`: each file whose content differs
/// published (unchanged ones are not rewritten), and as actions the removal of every file of
/// theirs xCAT may have written that the state no longer has (`<node>`, `.uefi`, `.elilo`,
/// `.pxelinux`).
system_change xnba_mirror_change(const store::read_txn& txn, const std::vector<std::string>& nodes,
                                 const xnba_mirror_config& cfg);

/// Applies xnba_mirror_change, making `<root>/xcat/xnba/nodes` (0755) first when missing.
/// @returns the first error, `message` saying what.
std::error_code apply_xnba_mirror(const store::read_txn& txn, const std::vector<std::string>& nodes,
                                  const xnba_mirror_config& cfg, std::string& message);

/// The mirror's part of `nodeset --dry-run`: `diff -u` of each file that would change (a
/// removed file against nothing), nothing for unchanged ones.
std::string xnba_mirror_dry_run(const store::read_txn& txn, const std::vector<std::string>& nodes,
                                const xnba_mirror_config& cfg);

} // namespace cws::api
