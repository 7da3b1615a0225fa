#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <system_error>
#include <vector>

namespace cws::base {

/// Replaces the file at `path` with `content` in one step: a temporary file beside it is
/// written, fsync'ed and renamed over it, then the directory is fsync'ed. A reader (dnsmasq,
/// named, a resolver) sees the old file or the new one, never a torn one, and a crash leaves
/// one of the two. The file keeps the old one's mode and owner; a new one gets `mode`.
/// @returns the first error; on error the old file is untouched and no temporary is left.
std::error_code publish_file(const std::filesystem::path& path, std::string_view content,
                             mode_t mode = 0644);

/// One file for publish_files.
struct file_to_publish {
  std::filesystem::path path;
  std::string_view content;
  /// The mode of a file created new (a replaced file keeps its own).
  mode_t mode = 0644;
};

/// Publishes several files as publish_file does each, with one flush for all rather than two
/// per file (2,000 nodes' xnba files took 59 s one by one here): every temporary is written,
/// then synced together (one syncfs per file system; a single file is fsync'ed), then each is
/// renamed over its file and each directory synced once. A crash leaves every file whole, old
/// or new. An error before the renames changes no file; one during them leaves the earlier
/// files new. No temporary is left. `failed` (optional) gets the index of the file at fault.
std::error_code publish_files(const std::vector<file_to_publish>& files,
                              std::size_t* failed = nullptr);

/// Reads a whole file of at most `max_bytes`. A missing file reads as empty (`exists` false).
/// @returns an error for an unreadable or larger file (errc::file_too_large).
std::error_code read_file(const std::filesystem::path& path, std::size_t max_bytes,
                          std::string& out, bool* exists = nullptr);

/// The difference of two texts as `diff -u` prints it (labels `--- old`, `+++ new`, hunks
/// with `context` lines around each change); empty when the texts are equal. What `--dry-run`
/// shows. Lines common to both ends are matched first; a changed middle of more than
/// `exact_limit`² line pairs (the table's memory) is shown as one hunk that removes and adds
/// it whole, still a correct diff, just not the shortest.
std::string unified_diff(std::string_view old_text, std::string_view new_text,
                         std::string_view old_label, std::string_view new_label,
                         std::size_t context = 3, std::size_t exact_limit = 2000);

} // namespace cws::base
