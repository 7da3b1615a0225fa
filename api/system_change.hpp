#pragma once

// The one shape of every command that changes system files (makehosts, makedhcp, makedns;
// docs/provisioning.md): a pure render from one read snapshot fills a system_change (each
// file's whole new content, then the service actions), and the command either shows it
// (`--dry-run`, REST `dryrun=1`) or applies it. Rendering everything before publishing
// anything means a render error leaves every old file in place.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <sys/types.h>
#include <system_error>
#include <vector>

namespace cws::api {

/// One file a command owns, with its whole new content.
struct system_file {
  std::filesystem::path path;
  std::string content;
  /// The mode of a file created new; a replaced file keeps its own (base::publish_file).
  mode_t mode = 0644;
};

/// One thing to do after the files are in place (reload dnsmasq, Kea `config-set`, a DNS
/// update batch).
struct system_action {
  /// What `--dry-run` lists and an error names: "reload dnsmasq (kill -HUP 1234)".
  std::string description;
  /// Runs it. @returns an error with `message` set to what went wrong (for the caller).
  std::function<std::error_code(std::string& message)> run;
};

/// The files and actions of one command run, in the order they are applied.
struct system_change {
  std::vector<system_file> files;
  std::vector<system_action> actions;
  /// The largest old file dry_run_text reads to compare against.
  std::size_t read_limit = 256 * 1024 * 1024;

  /// What `--dry-run` prints: for each file `diff -u` of its current and new content
  /// (labels: the path; "<path>: unchanged" when equal; a missing file diffs as empty), then
  /// "would run: <description>" for each action. Reads the files, writes nothing.
  /// @param error set to the first unreadable file's message ("cannot read PATH: ...");
  /// that file's diff is left out.
  std::string dry_run_text(std::string* error = nullptr) const;

  /// Publishes the files together with base::publish_files (each replaced atomically, one
  /// flush for all), then runs each action in order. The first error stops: `message` names
  /// the file ("cannot write PATH: ...") or the action ("DESCRIPTION: ..."); files already
  /// published stay published.
  /// @returns the first error, or success.
  std::error_code apply(std::string& message) const;
};

} // namespace cws::api
