#pragma once

// makedns: named.conf fragment, zone files and TSIG-signed dynamic updates from the store, as
// xCAT's ddns.pm makes them (docs/provisioning.md, DNS). Render is pure (store snapshot ->
// files and records); apply publishes the files atomically, reloads named when a file
// changed, and sends only the records the server does not hold yet, in batches.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "api/auth.hpp"
#include "api/call.hpp"
#include "api/dns_message.hpp"
#include "api/result.hpp"
#include "store/database.hpp"

namespace cws::api {

/// Where makedns writes and whom it updates (the `dns_*` settings).
struct dns_config {
  std::filesystem::path
    conf_dir; ///< the named.conf fragments (clusterws.conf, clusterws-options.conf)
  std::filesystem::path zone_dir;   ///< the zone files (db.<zone>), writable by named
  std::string server;               ///< ADDR:PORT that takes the updates
  std::filesystem::path key_file;   ///< the TSIG key, made once when missing
  size_t batch = 300;               ///< records per UPDATE message (xCAT: 300)
  std::string reload_command;       ///< run after a file changed (`rndc reconfig`)
  unsigned timeout_s = 10;          ///< seconds to wait for an answer (and for named to load)
  std::filesystem::path state_file; ///< what the server was sent: <home>/dns-records
};

/// What makedns was asked.
struct makedns_request {
  bool fresh = false;    ///< -n: the whole configuration, every node, stale records removed
  bool remove = false;   ///< -d: delete the nodes' records
  bool external = false; ///< -e: updates only, no local named files
  bool dry_run = false;  ///< print the files' diffs and the updates, change nothing
  bool all = true;       ///< no noderange: every node (and stale records removed)
  std::vector<std::string> nodes; ///< the nodes (every node when `all`)
};

/// One record of a node, in the zone that holds it.
struct node_record {
  std::string node;
  std::string zone;
  dns::record rr;
};

/// What the store says DNS should hold (render's result).
struct dns_render {
  /// Forward zones (site.domain, networks.domain) then reverse zones, without final dots.
  std::vector<std::string> zones;
  /// Each file makedns owns and its new content: the fragments, then every zone's skeleton
  /// (SOA, NS, and the name server's A record), each `db.<zone>` in zone_dir.
  std::vector<std::pair<std::filesystem::path, std::string>> files;
  std::vector<node_record> records;
  std::vector<std::string> info;   ///< what xCAT prints (":Ignoring host ...")
  std::vector<std::string> errors; ///< refusals; nothing is done when there is one
};

/// Renders DNS for `req.nodes` from `txn`: zones of the networks table (reverse zones as
/// xCAT cuts them: /24 and longer masks per /24, shorter ones rounded to the octet),
/// site.domain or the network's domain, A and PTR per node and a CNAME per alias
/// (hosts.hostnames), site.forwarders (and site.forwardmode) in the options fragment.
/// `host` is this server's short name (its NS record), `serial` the SOA serial of new zones.
dns_render render_dns(const store::read_txn& txn, const makedns_request& req, const dns_config& cfg,
                      const std::string& host, uint32_t serial);

/// The messages and the outcome of a run.
struct makedns_result {
  std::vector<std::string> out; ///< informational lines (and the dry run's text)
  std::vector<std::string> errors;
  size_t sent = 0;     ///< records sent in updates
  size_t messages = 0; ///< UPDATE messages sent
};

/// makedns: renders from `txn`, then publishes, reloads and updates (or, in a dry run, only
/// prints what it would do). `now` is the clock of TSIG and new zones' serials.
makedns_result run_makedns(const store::read_txn& txn, const makedns_request& req,
                           const dns_config& cfg, uint64_t now);

/// The REST makedns (POST/DELETE /nodes/{nr}/dns, POST /services/dns; `call.command`
/// "dryrun" for a dry run): the nodes verified in one read of `db`, then run_makedns. Blocks
/// on the name server (up to dns_timeout per answer): run it on a thread of its own.
/// @returns 201 (POST) or 200 (DELETE) with nothing, the dry run's lines as `names`, or a
/// failure with makedns' errors.
api_result run_dns_call(const store::database& db, const api_call& call, const authorization& auth,
                        const store::noderange_options& opts, const dns_config& cfg);

} // namespace cws::api
