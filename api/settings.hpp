#pragma once

// The settings of clusterws.conf: one table of every key (type, default, range, doc) that
// feeds every configuration struct. docs/configuration.md is checked against it by a test.

#include <filesystem>

#include "api/copy.hpp"
#include "api/delegation.hpp"
#include "api/hardware.hpp"
#include "api/makedns.hpp"
#include "api/nodestat.hpp"
#include "api/shell.hpp"
#include "api/template.hpp"
#include "api/template_cache.hpp"
#include "base/settings.hpp"
#include "ssh/engine.hpp"
#include "store/noderange.hpp"

namespace cws::api {

/// Every setting of clusterws.conf, in the order `clusterctl init` writes them.
const base::settings_schema& settings_schema();

/// Reads `<home>/clusterws.conf` against the schema.
/// @throws std::invalid_argument naming the file, line and key of a bad line.
base::settings load_settings(const std::filesystem::path& config);

/// The noderange limits (`noderange_max`, `noderange_regex_max`).
store::noderange_options noderange_limits(const base::settings& s);

/// How commands run on nodes (`ssh_*`); keys live under `<home>/ssh` unless configured.
shell_config shell_settings(const base::settings& s, const std::filesystem::path& home);

/// Copy limits (`copy_*`); nodecopy's sources live under `<home>/copy` unless configured.
copy_config copy_settings(const base::settings& s, const std::filesystem::path& home);
/// How nodestat probes (`nodestat_*`, and `ssh_port` for nodes without `sshport`).
/// @throws std::invalid_argument for a bad `nodestat_ports`.
nodestat_config nodestat_settings(const base::settings& s);

/// How the head delegates to service nodes (`sn_fallback`, `sn_credits`, `sn_batch_*`).
delegation_settings delegation_settings_from(const base::settings& s);

/// The bounds a service node checks a share against: its copy's bytes (sn_copy_max) and
/// files (copy_files_max); the rest as api::wire::request_limits has them.
wire::request_limits sn_request_limits(const base::settings& s);

/// The bounds of install templates (`template_max_bytes`, `template_include_depth`).
template_limits template_settings(const base::settings& s);

/// The compiled-template cache's bounds (`template_cache_entries`, `template_cache_bytes`).
template_cache_limits template_cache_settings(const base::settings& s);

/// The SSH engine's settings (`ssh_*`).
ssh::engine_config engine_settings(const base::settings& s, const std::filesystem::path& home);

/// How hardware control runs (`ipmi_fanout`, `ipmi_port`).
hardware_config hardware_settings(const base::settings& s);

/// Power control of virtual machines (`kvm_*`).
virt::hypervisor_config virt_settings(const base::settings& s);

/// The IPMI engine's settings (`ipmi_pool_idle`, `ipmi_max_pooled`).
ipmi::engine_config ipmi_settings(const base::settings& s);

/// Where makedns writes and whom it updates (`dns_*`); what it sent is kept in
/// `<home>/dns-records`.
dns_config dns_settings(const base::settings& s, const std::filesystem::path& home);

} // namespace cws::api
