#pragma once

// nodeset (and GET/PUT /nodes/{nr}/bootstate): the next boot state of nodes, as xCAT's
// destiny.pm words it (`chain.currstate` = `install debian12-x86_64-compute`, `boot`,
// `shell`, `offline`; `chain.currchain`), written for any number of nodes in the one
// transaction the caller gives. Nothing else is written: no per-node file, no DHCP call;
// the node-facing boot listener renders each node's boot script from these values when the
// node asks (docs/provisioning.md, "Boot chain and install status").

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/cluster_view.hpp"
#include "store/database.hpp"
#include "store/definitions.hpp"

namespace cws::api {

/// A row of xCAT's boottarget table: what a node boots instead of its osimage's installer.
struct boot_target {
  std::string name; ///< bprofile
  std::string kernel;
  std::string initrd;
  std::string kcmdline;
};

/// True if `os` (nodetype.os, osimage.osvers) is boottarget.pm's `boottarget`, `target`, `bt`.
bool is_boottarget_os(std::string_view os);

/// The boottarget an osimage boots with, as xCAT chooses it: the osimage's `boottarget`
/// attribute names a row (xnba.pm; then its `addkcmdline` is ignored, Schema.pm), else an os of
/// `boottarget` (`target`, `bt`) takes the row whose bprofile is the profile (boottarget.pm).
/// nullopt when neither applies, or when the named row is not defined: then `error` says so
/// (boottarget.pm's `<profile> in nodetype table was not defined in boottarget table`).
std::optional<boot_target> find_boot_target(const store::read_txn& txn,
                                            std::string_view image_boottarget, std::string_view os,
                                            std::string_view profile, std::string& error);

/// What `nodeset <noderange> <state>` asks for.
struct nodeset_action {
  enum class kind : uint8_t {
    osimage, ///< osimage[=name]: install (or netboot) the node's osimage
    boot,    ///< boot from the local disk (the script says `exit`)
    shell,   ///< boot the service shell (genesis in xCAT)
    offline, ///< no boot script at all
    stat,    ///< print the state, change nothing
    next,    ///< move along chain.currchain (what a node's `next` callback does)
  };
  kind what = kind::stat;
  /// osimage=NAME: the image; empty: each node's nodetype.provmethod.
  std::string image;
};

/// The state word of `action` (what parse_nodeset_action reads back): `osimage=NAME`, `boot`.
std::string nodeset_word(const nodeset_action& action);

/// xCAT's usage line of nodeset.
extern const char* const nodeset_usage;

/// Parses the state word (`osimage`, `osimage=NAME`, `boot`, `shell`, `offline`, `stat`,
/// `next`); nullopt for anything else (`error` says why, in xCAT's words).
std::optional<nodeset_action> parse_nodeset_action(std::string_view word, std::string& error);

/// The boot state a node reads as (`nodeset stat`): chain.currstate, `offline` when unset (no
/// boot script, as xCAT's xnba getstate says for a node without a boot file).
std::string boot_state_of(const store::cluster_view& view, std::string_view node);

/// nodeset `action` on `nodes` (verified node names) in `t`: chain.currstate and currchain,
/// and for osimage nodetype.os/arch/profile/provmethod from the osimage, for every node in
/// this one transaction. Info lines are xCAT's `node: <state>` in the order of `nodes`.
/// An install (netboot, statelite) state arms a fresh install token for the node, any other
/// state ends the armed one (api/install_token.hpp).
/// Any error (an unknown osimage, a node without one, ...) rejects the whole change.
/// `stat` writes nothing. @throws store::rejected with xCAT's messages.
store::outcome set_boot_state(store::write_txn& t, const std::vector<std::string>& nodes,
                              const nodeset_action& action);

/// rinstall's nodeset: `action` (not stat) on each of `nodes` on its own in `t`: a node it
/// refuses keeps its old values and gets xCAT's message at its index in the returned list
/// ("" for the nodes written, whose new currstate is in `states`).
std::vector<std::string> set_boot_state_each(store::write_txn& t,
                                             const std::vector<std::string>& nodes,
                                             const nodeset_action& action,
                                             std::vector<std::string>& states);

/// `nodeset --dry-run` (REST `dryrun=1`): what set_boot_state would write, writing nothing.
/// For each node whose values would change, `diff -u` of its changed attributes
/// (`chain.currstate=...`, `chain.currchain=...`, `nodetype.os=...`) between `<node> (store)`
/// and `<node> (nodeset)`, `<node>: unchanged` otherwise; then the install token line,
/// `would arm the install token of <node>` or `would end the install token of <node>` (one
/// armed only). The same errors as set_boot_state. @throws store::rejected.
store::outcome boot_state_dry_run(const store::cluster_view& view,
                                  const std::vector<std::string>& nodes,
                                  const nodeset_action& action);

/// `nodeset stat`: `node: <state>` for each of `nodes`.
store::outcome boot_states(const store::cluster_view& view, const std::vector<std::string>& nodes);

} // namespace cws::api
