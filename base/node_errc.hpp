#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace cws::base {

/// Why one node's part of a fan-out operation failed: the one per-node error vocabulary of
/// every engine (ssh, ipmi, probe, virt) and of the planners in api/. Its strings are wire
/// format (`"error":"connect-timeout"`): clients test them, so a spelling never changes.
/// docs/api.md "Per-node error codes" is the table of what each means.
enum class node_errc : uint8_t {
  none,            ///< "": the node's work ran (its exit status may still be non-zero)
  resolve,         ///< the node's (or BMC's) name did not resolve
  refused,         ///< the connection was refused
  unreachable,     ///< the network cannot reach the node, or no socket could be opened
  connect_timeout, ///< no connection (or SSH login) within the connect timeout
  handshake,       ///< the SSH key exchange failed
  host_key,        ///< the node's host key is unknown (strict) or changed
  auth,            ///< the node (or BMC) refused the credentials
  channel,         ///< the SSH channel, pty or exec request was refused
  copy,            ///< an SFTP transfer failed
  timeout,         ///< the work did not end within its own deadline
  disconnected,    ///< the connection broke, or the service stopped
  signal,          ///< the command was killed by a signal
  cancelled,       ///< the call was cancelled (by its client, call_timeout or stop)
  not_found,       ///< the node, or its virtual machine, does not exist
  ipmi,            ///< the BMC answered the command with an error completion code
  unsupported,     ///< the node's hardware does not do this
  no_bmc,          ///< the node has no BMC address (ipmi.bmc)
  no_vmhost,       ///< the virtual machine has no hypervisor (vm.host)
  libvirt,         ///< the hypervisor refused the call
  resources,       ///< the management node ran out of sockets or ports
  servicenode,     ///< the node's service node is down, or went away after the work was sent
  boot_state,      ///< rinstall: the node's boot state could not be set (nodeset)
};

/// The wire spelling of `e` ("" for `none`).
std::string_view to_string(node_errc e) noexcept;

/// The code spelled `text`; nothing for an unknown spelling.
std::optional<node_errc> parse_node_errc(std::string_view text) noexcept;

/// The one wording of each way a node's work ends without running to its end, for every
/// engine: cancelled while running, cancelled before it started, the service stopping while
/// it ran, the service stopped before it started.
namespace node_message {
inline constexpr std::string_view cancelled = "The request was cancelled.";
/// Cancelled, but the node may not have heard (an SSH command without its process group).
inline constexpr std::string_view cancelled_may_run
  = "The request was cancelled (it may still run on the node).";
inline constexpr std::string_view cancelled_unstarted
  = "The request was cancelled before it started.";
inline constexpr std::string_view stopping = "the service is stopping";
inline constexpr std::string_view stopped_unstarted
  = "The service stopped before the request started.";
} // namespace node_message

} // namespace cws::base
