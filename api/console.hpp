#pragma once

// Which consoles the console server holds (docs/consoles.md): every node whose `cons`
// attribute is set (nodehm.cons, inherited from groups), with the BMC it is reached through,
// resolved exactly as the hardware verbs resolve it (api/hardware.hpp resolve_bmc). Pure: one
// read of the store, no I/O.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "api/hardware.hpp"
#include "store/change_feed.hpp"
#include "store/database.hpp"

namespace cws::api {

/// One node's console as the definitions say it.
struct console_spec {
  std::string node;
  /// `cons`: ipmi (Serial-over-LAN through the node's BMC) or kvm (its libvirt domain's
  /// serial console); any other value is an `error`.
  std::string method;
  /// For ipmi: the BMC (address may be a name: the console server resolves it).
  bmc_access bmc;
  /// For kvm: the hypervisor's URI and the domain (resolve_vm, as rpower finds them).
  vm_access vm;
  /// Why the console cannot be held ("" when it can): no bmc, a method not supported, a bad
  /// bmcport. Shown per node in the console status.
  std::string error;
  /// False when `consoleenabled` says the console is not held: `0` or `no` (makeconservercf
  /// -d writes 0, as xCAT clears it when it takes a node out of the console server; unset
  /// holds, since clusterwsd holds every node with `cons` without being asked).
  bool held = true;

  friend bool operator==(const console_spec& a, const console_spec& b) {
    return a.node == b.node && a.method == b.method && a.bmc.address == b.bmc.address
           && a.bmc.port == b.bmc.port && a.bmc.user == b.bmc.user
           && a.bmc.password == b.bmc.password && a.vm.uri == b.vm.uri && a.vm.domain == b.vm.domain
           && a.error == b.error && a.held == b.held;
  }
  friend bool operator!=(const console_spec& a, const console_spec& b) {
    return !(a == b);
  }
};

/// Every node with `cons` set, in name order, from one read of `db`. `default_port`: the
/// RMCP+ port of BMCs without `bmcport`.
/// @throws store::error when the database cannot be read.
std::vector<console_spec> read_consoles(const store::database& db, uint16_t default_port);

/// The consoles of `nodes` only (those of them that exist and have `cons` set), in name
/// order, from one read of `db`: what a change to a few nodes needs, at a cost that does not
/// grow with the cluster (read_consoles reads every node).
/// @throws store::error when the database cannot be read.
std::vector<console_spec> read_consoles(const store::database& db, uint16_t default_port,
                                        const std::vector<std::string>& nodes);

/// Which consoles a change set may change.
struct console_scope {
  /// Any console: the set changed a group (its members inherit), the site or the passwd
  /// table (the ipmi fallback credentials).
  bool all = false;
  /// Else the consoles of these nodes only (name order, no duplicates): each created,
  /// removed, or changed in cons, consoleenabled, bmc, bmcport, bmcusername,
  /// bmcpassword, vmhost or groups.
  std::vector<std::string> nodes;

  /// True if nothing the console server holds can have changed.
  bool empty() const noexcept {
    return !all && nodes.empty();
  }
};

/// What `set` may change of which consoles are held or how they are reached.
console_scope consoles_affected(const store::change_set& set);

/// The `consoleenabled` value that stops holding a console ("0"), and whether `value`
/// holds (anything but 0 or no, in any case).
constexpr const char* console_not_held = "0";
bool console_enabled(const std::string& value);

/// A node name that is safe as a file name in the log directory (no '/', not "." or "..",
/// no NUL, not empty, at most 255 bytes).
bool console_file_name_ok(const std::string& node);

/// What a console's transport reports (SOL, or libvirt's console stream).
struct console_io_event {
  enum class kind : uint8_t {
    up,             ///< characters flow
    already_active, ///< another session holds the console (ends it: open again with force)
    error,          ///< it could not be opened (a wrong password, a refusal; ends it)
    lost,           ///< the BMC stopped answering or dropped it (ends it)
    closed,         ///< close() finished (ends it)
    dropped,        ///< keystrokes were not delivered (count)
    break_detected, ///< the host's side sent a break
  };
  kind what = kind::up;
  std::string message;
  size_t count = 0;
};

/// The consoles' I/O as the console server drives it: opens, keystrokes, closes, and every
/// console byte written to the node's log before it is reported (so the log never depends
/// on the console server's thread). The daemon's is SOL on one event loop
/// (api/sol_consoles.hpp); tests use a fake. Every call may come from any thread.
class console_io {
 public:
  /// Where bytes and events go (called on the I/O's own thread, in order per console).
  struct handlers {
    std::function<void(uint64_t id, std::string bytes)> output;
    std::function<void(uint64_t id, console_io_event e)> event;
  };

  virtual ~console_io() = default;
  /// Starts reporting to `h`; called once, before anything else.
  virtual void start(handlers h) = 0;
  /// Opens console `id` (never used before) for `spec`; `force` takes it over from another
  /// session. `up`, or an ending event, follows.
  virtual void open(uint64_t id, const console_spec& spec, bool force) = 0;
  virtual void write(uint64_t id, std::string keys) = 0;
  virtual void send_break(uint64_t id) = 0;
  /// Closes console `id` (`closed` follows; nothing when it already ended).
  virtual void close(uint64_t id) = 0;
  /// Writes one of clusterws's notes into node `node`'s log, on a line of its own.
  virtual void note(const std::string& node, std::string text) = 0;
  /// Node `node`'s log is no longer written (its file stays).
  virtual void forget(const std::string& node) = 0;
};

} // namespace cws::api
