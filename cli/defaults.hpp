#pragma once

#include <string_view>

namespace cws::cli {

/// config/site.defaults: `key = value` lines of the clustersite object a new database gets
/// (`@MASTER@` is init's --master, `@TIMEZONE@` the machine's time zone).
extern const std::string_view site_defaults_text;

/// config/policy.defaults: `priority name commands rule` rows (`-` for empty, `@HOSTNAME@`
/// for the management node's short host name).
extern const std::string_view policy_defaults_text;

/// The xcatdefaults postscripts `init` stores (listed in front of every node's own, as xCAT's
/// lsdef does; lsdef -z leaves them out).
constexpr std::string_view xcatdefaults_postscripts = "syslog,remoteshell,syncfiles";
constexpr std::string_view xcatdefaults_postbootscripts = "otherpkgs";

/// This build's version (the CMake project's).
extern const std::string_view version_text;

} // namespace cws::cli
