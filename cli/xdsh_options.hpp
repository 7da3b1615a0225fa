#pragma once

// xdsh's command line (xdsh.1): flags, the DSH_* environment, the ssh options the engine can
// honour, and the remote command string. Pure: no store, no network.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ssh/engine.hpp"

namespace cws::cli {

/// xdsh's options after the command line and the DSH_* environment (the flag wins).
struct xdsh_options {
  std::string noderange;
  /// The command words (with -e: the script and its arguments).
  std::vector<std::string> words;
  /// 0: the configured default (ssh_fanout).
  long fanout = 0;
  /// Seconds; -1: none.
  long timeout = -1;
  /// -E / DSH_ENVIRONMENT: a local file of definitions run before the command.
  std::string env_file;
  /// -o / DSH_NODE_OPTS.
  std::string node_options;
  /// -S / DSH_SYNTAX: `ksh` (sh syntax) or `csh`.
  std::string syntax = "ksh";
  /// DSH_PATH: the remote PATH.
  std::string path;
  /// --home.
  std::string home;
  bool execute = false;     ///< -e
  bool stream = false;      ///< -s
  bool exit_status = false; ///< -z
  bool verify = false;      ///< -v
  bool silent = false;      ///< -Q
  bool trace = false;       ///< -T
  bool monitor = false;     ///< -m
  bool show_config = false; ///< -q
  bool no_locale = false;   ///< -L
  bool cleanup = false;     ///< -c
  bool sudo = false;        ///< --sudo
  bool help = false;        ///< -h
  bool version = false;     ///< -V
};

/// Reads an environment variable; null when unset.
using getenv_fn = std::function<const char*(const char*)>;

/// Parses xdsh's arguments: options may come before and after the noderange; the first word
/// after the noderange starts the command, and everything from there is the command. Short
/// flags bundle (`-sz`); values may be attached (`-f64`, `-o"-p 22"`). `self` is the caller:
/// -l and DSH_TO_USERID may only name them.
/// @throws usage_error for a bad or refused option, with the reason.
xdsh_options parse_xdsh(const std::vector<std::string>& argv, const std::string& self,
                        const getenv_fn& env);

/// What `-o` may change in the engine: only what it can honour, never the identity.
struct ssh_overrides {
  /// The port of nodes without `sshport` (`-p N`, `-o Port=N`); 0: unchanged.
  uint16_t port = 0;
  std::optional<std::chrono::milliseconds> connect_timeout;
  std::optional<ssh::host_key_policy> host_keys;
  /// `-v` (`-vv`, `-vvv`), `LogLevel=VERBOSE|DEBUG*`: the connection trace on each node's stderr.
  bool trace = false;
  /// `-t` (`-tt`), `RequestTTY=yes|force`: a pty for every command.
  bool pty = false;
};

/// Parses ssh options (`-p 22 -o ConnectTimeout=5 -x -v`). Options that change nothing here
/// (-x, -q, -T, -n, BatchMode=yes, LogLevel=ERROR, PasswordAuthentication=no, ...) are
/// accepted; host key checking may only get stricter than `configured`; any other option is
/// refused, named.
/// @throws usage_error naming a refused option and why.
ssh_overrides parse_node_options(const std::string& text, ssh::host_key_policy configured);

/// `text` in single quotes for sh and csh.
std::string shell_quote(const std::string& text);

/// The command run on each node: DSH_PATH, the local locale (unless -L), the environment
/// file's text, then the command (under `sudo -n` with --sudo), in the syntax -S names.
/// `locale` holds the caller's LANG/LC_* variables.
std::string remote_command(const xdsh_options& o, const std::string& command,
                           const std::vector<std::pair<std::string, std::string>>& locale,
                           const std::string& env_text);

} // namespace cws::cli
