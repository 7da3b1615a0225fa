#pragma once

// xdcp, nodecopy and xdsh -e: the files of a copy request, checked and read once on the
// head node, become one ssh::copy_spec that every node's job shares (docs/nodeshell.md,
// "Copying files").

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

#include "api/call.hpp"
#include "api/result.hpp"
#include "ssh/transfer.hpp"

namespace cws::api {

/// Copy limits. Every limit is explicit (docs/configuration.md).
struct copy_config {
  /// REST nodecopy: sources must lie under this directory (symlinks and `..` resolved).
  std::filesystem::path root;
  /// Files are read into memory, once for every node, while their sizes add up to at most
  /// this; the rest are streamed from disk by each node.
  size_t memory_max = 64 * 1024 * 1024;
  /// Bytes in flight per node (one SFTP write or read).
  size_t chunk = 256 * 1024;
  /// Most files and directories one request copies.
  size_t files_max = 10000;
  /// xdcp -P: most bytes pulled from one node, from all nodes of a run, and the bytes the
  /// local file system keeps free (ssh::copy_spec).
  uint64_t pull_node_max = 4ULL << 30;
  uint64_t pull_run_max = 64ULL << 30;
  uint64_t pull_free_min = 1ULL << 30;
};

/// Checks `req` and builds what each node copies: sources exist, are regular files (or
/// directories with -R), and are no more than `cfg.files_max`. Every source is opened once,
/// here, and read (small files now, the rest by each node) only through that descriptor;
/// trees are walked from directory descriptors, never by path again.
///
/// A confined request (REST, the local socket) opens its sources beneath `cfg.root`, with
/// no symbolic link anywhere on the way (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), and
/// with the rights of `caller`'s Unix account of the same name (its uid, gid and groups, on
/// this thread only), or of `nobody` when there is no such account: nodecopy copies only what
/// its caller could read (docs/security.md, N2 and N4). An empty `caller` reads with this
/// process's rights (the command-line xdcp).
/// @returns a bad_request failure naming the first bad source (nothing is copied), or
/// success with `out` set.
api_result build_copy(const copy_request& req, const copy_config& cfg,
                      std::shared_ptr<const ssh::copy_spec>& out, const std::string& caller = {});

/// The copy as an xdcp command line, for the audit log (`xdcp -R src... target`, or for
/// xdsh -e `xdsh -e script args`).
std::string describe(const copy_request& req, const std::string& command);

/// The largest synclist xdcp -F reads (its lines become copy entries; copy_files_max bounds
/// the files).
constexpr size_t synclist_max = 16 * 1024 * 1024;

/// Parses an xCAT synclist (xdcp -F) in its common form: `src... -> dest` lines (several
/// sources, or a dest ending in '/', copy into the directory dest), blank lines and `#`
/// comments. The EXECUTE, EXECUTEALWAYS, APPEND and MERGE sections are refused.
/// @returns an empty string and `out` set, or what is wrong (with its line number).
std::string parse_synclist(const std::string& text, std::vector<copy_entry>& out);

/// True if `path`, resolved (symlinks, `..`), lies in the resolved directory `root`.
bool inside_root(const std::filesystem::path& path, const std::filesystem::path& root);

} // namespace cws::api
