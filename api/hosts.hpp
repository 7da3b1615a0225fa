#pragma once

// makehosts (and REST POST /nodes/{nr}/host, /services/host): the hosts file's node lines
// from the store, as xCAT's hosts.pm writes them (docs/provisioning.md, "Hosts"). The
// render is pure: the current file's text and one read snapshot in, the new text and
// xCAT's messages out; writing it is a system_change.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/call.hpp"
#include "api/result.hpp"
#include "api/system_change.hpp"
#include "store/cluster_view.hpp"
#include "store/database.hpp"
#include "store/definitions.hpp"
#include "store/noderange.hpp"

namespace cws::api {

/// makehosts' options (xCAT's letters).
struct hosts_request {
  /// The nodes to write, in order; nullopt: every node with a hosts attribute (ip,
  /// hostnames or otherinterfaces), as xCAT's makehosts without a noderange.
  std::optional<std::vector<std::string>> nodes;
  bool new_file = false;          ///< -n: start from `127.0.0.1 localhost` alone
  bool remove = false;            ///< -d: remove the nodes' lines
  bool long_first = false;        ///< -l (or site.FQDNfirst): the long name first
  bool others_first = false;      ///< -o: the hostnames aliases first
  bool domain_on_aliases = false; ///< -a: the domain added to each hostnames alias
  /// Nodes no longer defined whose lines go (the re-apply after an rmdef): every line with
  /// the node's name (short or long) among its names.
  std::vector<std::string> removed;
  /// The largest hosts file read (setting `hosts_file_max_bytes`).
  std::size_t max_bytes = 256 * 1024 * 1024;
};

/// What makehosts would write.
struct hosts_render {
  /// The new text of the hosts file.
  std::string content;
  /// xCAT's warnings (nodes skipped) and errors (bad values; the file is still written, the
  /// command exits 1, as xCAT's).
  store::outcome messages;
  /// False when there is nothing to write (`-d` without a noderange, as xCAT).
  bool write = true;
};

/// Renders the hosts file from `current` (its text now) for `req` from `view`: lines made
/// for a node replace the line with the same address or name in place (later duplicates
/// removed), new ones are appended, every other line is kept as it is. One pass over the
/// nodes' attributes, no name lookups.
hosts_render render_hosts(const store::cluster_view& view, std::string_view current,
                          const hosts_request& req);

/// Reads `path`, renders, and returns the change to apply (one file, no action) in `change`;
/// a file that cannot be read is an error in the outcome and `change` stays empty.
store::outcome plan_hosts(const store::cluster_view& view, const std::filesystem::path& path,
                          const hosts_request& req, system_change& change);

/// makehosts in the daemon (POST /nodes/{nr}/host, /services/host): the call's nodes (all
/// nodes for an empty target), one read snapshot, then the hosts file at `hosts_file`
/// published, or with `call.dry_run` its diff as `names` (lines) and nothing written. Runs
/// one at a time in the process (two runs would each start from the same old file).
/// @returns created (201, no body) on success; a failure with xCAT's error lines (the file
/// is still written, as xCAT's makehosts writes it), or the write's error (the old file
/// kept); warnings are not returned.
api_result run_make_hosts(const store::database& db, const api_call& call,
                          const authorization& auth, const store::noderange_options& opts,
                          const std::filesystem::path& hosts_file, std::size_t max_bytes);

} // namespace cws::api
