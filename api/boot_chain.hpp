#pragma once

// The node-facing boot chain (docs/provisioning.md, "Boot chain and install status"): what the
// boot listener (http/boot_listener) answers a node, read from one store snapshot, and the
// install status it writes. Pure request-layer code: no sockets, no actors.
//
// Status in xCAT's words (nodelist.status) with the install stage beside it in
// nodelist.appstatus as the entry `install=<stage>` (xCAT's `app=state` list, merged with
// nodestat's entries), both with their times in xCAT's format (MM-DD-YYYY hh:mm:ss):
//
//   fetch or callback            status        install= stage
//   script (install state)       netbooting    script
//   kernel                       netbooting    kernel
//   initrd                       netbooting    initrd
//   preseed/kickstart            installing    installing
//   callback installing          installing    installing
//   callback installed           installed     installed
//   callback postbooting/booted  that word     (unchanged)
//   callback failed              failed        failed
//   script (boot state)          booting       (unchanged)
//   script (shell state)         shell         (unchanged)
//   deadline passed              failed        no <what> within N s
//   bad tokens                   failed        bad install token

#include <atomic>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/install_token.hpp"
#include "api/template.hpp"
#include "api/template_cache.hpp"
#include "store/database.hpp"

namespace cws::api {

/// How the chain is rendered (settings `boot_listen`, `install_template_dir`, template limits).
struct boot_chain_config {
  /// The shipped templates' root (`<dir>/<platform>/`); the site's own
  /// `<site.installdir or /install>/custom/install/<platform>/` is tried first.
  std::filesystem::path template_dir = "/usr/share/clusterws/install";
  template_limits limits;
  /// Compiled templates kept between fetches (shared by the readers); none: each fetch parses.
  std::shared_ptr<template_cache> templates;
  /// `tftp_root` (empty: site.tftpdir, else /srv/tftp): a boottarget's files are under it.
  std::string tftp_root;
};

/// What a node fetched.
enum class boot_fetch : uint8_t { script, kernel, initrd, install_template };

/// The status callbacks a node may send (`state=` of /boot/node/<node>/status).
enum class install_callback : uint8_t { installing, installed, postbooting, booted, failed, next };

/// Parses a callback word; nullopt for anything else.
std::optional<install_callback> parse_install_callback(std::string_view word);

/// A change of a node's install status, applied in one write with others.
struct install_update {
  std::string node;
  /// An inferred move (from a fetch): applied only when it changes something and the node is
  /// not marked for bad tokens.
  std::optional<boot_fetch> fetched;
  /// A callback (its token is checked again in the write).
  std::optional<install_callback> callback;
  std::string token;
  /// The callback came over xCAT's port-3002 protocol: the node was named by the address it
  /// connected from and has no token to show.
  bool by_address = false;
  /// Bad tokens reached the limit: mark the node failed.
  bool bad_tokens = false;
  /// A refused token, within the install armed with this nonce (the refusing read's): counted
  /// in the store (api::count_refused_token, so the count survives a restart); the
  /// `bad_token_limit`-th marks the node as `bad_tokens` does (0: never).
  std::string refused_nonce;
  unsigned bad_token_limit = 0;
  /// A deadline passed: `message` is `no <what> within N s` (checked again in the write).
  bool overdue = false;
  /// overdue: the stage it was found in, and `no <what> within N s`.
  std::string stage;
  std::string message;
};

/// What one update did: false when its token no longer held (a callback refused in the
/// write) or nothing was to be done.
struct install_update_result {
  bool refused = false;
  bool changed = false;
  /// A refused token reached the limit and marked the node.
  bool marked = false;
  /// The node's status after it.
  std::string status;
};

/// The stage deadlines in seconds (0: none): `install_deadline_kernel` from the script to the
/// kernel, `install_deadline_installing` from the kernel to `installing` (the preseed or
/// kickstart, or the callback), `install_deadline_installed` from `installing` to `installed`.
struct install_deadlines {
  long kernel = 300;
  long installing = 900;
  long installed = 7200;
};

/// xCAT's status time text (local time, MM-DD-YYYY hh:mm:ss) of `t`.
std::string xcat_status_time(std::time_t t);

/// Parses xCAT's status time; nullopt when malformed.
std::optional<std::time_t> parse_status_time(std::string_view text);

/// The `install=` entry of an appstatus list ("" when none).
std::string install_stage_of(std::string_view appstatus);

/// Node of a MAC: an index of every node's `mac` (xCAT's `mac|mac!name|...`). After the store's
/// generation moved, a MAC the index names is checked against that node's own `mac`; a MAC
/// it does not know, or a node that lost it, rebuilds it. Shared by the store's readers and
/// the listener's io threads (thread-safe).
class mac_index {
 public:
  /// The node one of whose MACs is `mac` (any case, `:` or `-`, or 12 bare digits); "" when
  /// none or `mac` is not a MAC.
  std::string node_of(const store::read_txn& txn, std::string_view mac);

  /// Times the index was built (tests).
  uint64_t rebuilds() const noexcept {
    return rebuilds_.load();
  }

 private:
  std::atomic<uint64_t> rebuilds_{0};
  std::mutex mu_;
  uint64_t generation_ = ~uint64_t{0};
  std::shared_ptr<const std::map<std::string, std::string>> index_;
};

/// The node whose `ip` is `address` ("" when none, or more than one: an address shared by
/// two nodes names neither).
std::string node_of_address(const store::read_txn& txn, std::string_view address);

/// One line of xCAT's port-3002 protocol (`installstatus <state>`, `next`) as a callback;
/// nullopt for any other line.
std::optional<install_callback> parse_xcat_status_line(std::string_view line);

/// One answer of the chain.
struct boot_reply {
  /// 200, 403 (bad token), 404 (no such node, no script for its state, no file).
  unsigned status = 200;
  /// The script or template, or a one-line reason.
  std::string body;
  /// The node answered for ("" when unknown).
  std::string node;
  /// kernel/initrd: the file to send.
  std::filesystem::path file;
  /// The move this fetch makes (none: nothing to write).
  std::optional<boot_fetch> infer;
};

/// The TFTP root boottarget files are relative to: `setting` (`tftp_root`) when set, else
/// site.tftpdir, else /srv/tftp (as makedhcp's).
std::string tftp_root_of(const store::read_txn& txn, std::string_view setting);

/// What a node boots, before it is written as a script (the listener's iPXE script, the xnba
/// mirror's files): `reply` is 404 with the reason when the node has no script.
struct boot_plan {
  boot_reply reply;
  /// chain.currstate (`boot`, `shell`: nothing more is planned).
  std::string state;
  std::string kernel_url;
  /// Empty: no initrd (a boottarget without one).
  std::string initrd_url;
  /// The kernel arguments (without `initrd=initrd`).
  std::string args;
  /// The arguments carry `BOOTIF=` already (anaconda's).
  bool bootif = false;
  /// A boottarget row's kernel, initrd and kcmdline (xCAT's boottarget table).
  bool boottarget = false;
};

/// Plans `node`'s boot (`base_url`: `http://host:port`). With `key`, the install URLs carry
/// the node's armed token (none armed: 404); without it they carry `token` when given, else no
/// `?token=` at all (the xnba mirror: a TFTP root is readable by anyone).
boot_plan plan_boot(const store::read_txn& txn, std::string_view node, std::string_view base_url,
                    const std::optional<std::string>& token, const install_token_key* key);

/// The iPXE script every iPXE client gets first: chains to its own by MAC.
std::string generic_boot_script(std::string_view base_url);

/// The iPXE script of `node` by its chain.currstate (`base_url`: `http://host:port`).
boot_reply boot_script(const store::read_txn& txn, std::string_view node, std::string_view base_url,
                       const install_token_key& key);

/// The kernel or initrd of `node`'s osimage (`which`: kernel or initrd): from its `pkgdir`
/// installer tree, or its boottarget's file under the TFTP root (`tftp_root`, the setting:
/// see tftp_root_of).
boot_reply boot_file(const store::read_txn& txn, std::string_view node, boot_fetch which,
                     std::string_view tftp_root = {});

/// `node`'s preseed/kickstart rendered, only for its armed token `token` (else 403).
boot_reply boot_template(const store::read_txn& txn, std::string_view node, std::string_view token,
                         std::string_view base_url, const install_token_key& key,
                         const boot_chain_config& cfg);

/// True if the fetch `fetched` of `node` would change its status or stage (a rack refetching
/// makes no write).
bool install_fetch_changes(const store::read_txn& txn, std::string_view node, boot_fetch fetched);

/// Applies `updates` in `t` in order (each re-checked against what `t` holds), with `now`
/// as the status time. See the table at the top; `next` advances the chain as `nodeset next`
/// does; the token ends once the node reported `installed` and its chain left the install
/// state (whichever of `next` and `installed` comes second).
std::vector<install_update_result> apply_install_updates(store::write_txn& t,
                                                         const std::vector<install_update>& updates,
                                                         const install_token_key& key,
                                                         std::time_t now);

/// Nodes whose install stage is overdue at `now` (armed token, install state, not failed),
/// each as an update with its message.
std::vector<install_update> overdue_installs(const store::read_txn& txn, std::time_t now,
                                             const install_deadlines& d);

} // namespace cws::api
