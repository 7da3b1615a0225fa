#pragma once

// clusterctl sn sync NAME (docs/service-nodes.md, "SSH keys"): what a service node needs to
// run nodeshell and xdcp as each API user, copied over SSH as root from the head's key
// directory (ssh_key_dir) to `<service node home>/ssh/<user>/`, where the service node's
// nodeshell reads them (its ssh_key_dir defaults to its home's ssh/). Never over the actor
// link: a private key only ever travels inside an SSH session the head's root opens.
//
// Pure planning here: which users' keys go, and the two steps on the service node (make the
// directories 0700; then the files, each written under a temporary name and renamed, 0600).
// The caller runs them on an ssh::engine.

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ssh/transfer.hpp"

namespace cws::api {

/// The default home of a service node on its host (the set-up's `scp` destination).
constexpr const char* sn_default_home = "/var/lib/clusterws-sn";

/// The most bytes of one key file read (a key is a few hundred bytes).
constexpr size_t sn_sync_file_max = 64 * 1024;

/// What goes to a service node.
struct sn_sync_plan {
  /// The users whose keys go, sorted.
  std::vector<std::string> users;
  /// Key directories left out, with why (no such user, no key, a bad name).
  std::vector<std::pair<std::string, std::string>> skipped;
  /// The files, as `ssh/<user>/<file>` below the home, for --dry-run.
  std::vector<std::string> files;
  /// Step 1, a command: the home must exist; `ssh/` and each user's directory made 0700.
  std::string prepare;
  /// Step 2, the copy: into `<home>/ssh/`, each user's directory (0700) and files (0600),
  /// each written under a temporary name and renamed into place.
  std::shared_ptr<const ssh::copy_spec> copy;
};

/// Plans the keys of `key_dir` (`<user>/id_ed25519` and its `.pub`) for a service node whose
/// home is `remote_home` (absolute). A user goes when `user_exists(user)` (an API user or a
/// Unix account of the head) and `<user>/id_ed25519` is a regular file (not a link); the
/// others are listed in `skipped`.
/// @returns "" or why nothing can go (a bad remote home, an unreadable key directory).
std::string plan_sn_sync(const std::filesystem::path& key_dir, const std::string& remote_home,
                         const std::function<bool(const std::string&)>& user_exists,
                         sn_sync_plan& out);

} // namespace cws::api
