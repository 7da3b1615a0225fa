#pragma once

// Serial consoles of virtual machines (cons=kvm) through libvirt: each console is its
// domain's console stream (virDomainOpenConsole), non-blocking, on libvirt's event loop.
// One thread runs that loop for every console of the process; connecting, looking the
// domain up and opening the console (calls that block, over ssh for qemu+ssh) run on
// threads per hypervisor (at most max_openers), so a hypervisor that does not answer never
// stalls the loop or the other hypervisors' consoles.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace cws::virt {

/// What a console stream reports.
struct console_event {
  enum class kind : uint8_t {
    up,             ///< the stream is open: characters flow
    already_active, ///< another client holds the domain's console (open again with force)
    error,          ///< it could not be opened: no connection, no domain, not running (ends it)
    lost,           ///< the stream or the hypervisor connection ended (ends it)
    closed,         ///< close() finished (ends it)
    dropped,        ///< keystrokes were not delivered (count)
  };
  kind what = kind::up;
  std::string message;
  size_t count = 0;
};

/// How a failed virDomainOpenConsole reads: libvirt's "Active console session exists for
/// this domain" (another client, e.g. `virsh console`, holds it) is `already_active`, any
/// other failure `error`. Pure: `message` is libvirt's last error message.
console_event::kind open_failure_kind(std::string_view message);

/// Every limit is explicit (docs/consoles.md).
struct console_stream_config {
  /// Keystrokes queued and not yet taken by the stream; more are `dropped`.
  size_t max_keystrokes = 4096;
  /// Bytes read from one console per wake-up of the loop (the rest waits in libvirt's
  /// stream for the next turn, so one busy console cannot starve the others).
  size_t max_read_per_wake = 65536;
  /// libvirt's keepalive on each hypervisor connection: a connection silent for
  /// interval x (count + 1) is closed, and its consoles are `lost`.
  int keepalive_interval_s = 5;
  unsigned keepalive_count = 3;
  /// Hypervisors whose consoles are opened (or closed) at once, each on a thread of its own
  /// while it has work: libvirt's calls block, and a hypervisor that does not answer holds
  /// one of them (its own consoles wait; the others' do not).
  size_t max_openers = 8;
  /// How long the destructor waits for an open in progress (a hypervisor that does not
  /// answer): after it, the opening thread is left to end with the process.
  std::chrono::milliseconds stop_wait{2000};
};

/// Console streams of many domains. Connections are shared per hypervisor URI, opened with
/// the first console on it and closed with the last; a connection that closes (libvirtd
/// stopped, keepalive) ends each of its consoles with `lost`.
class console_streams {
 public:
  /// Called on the loop's thread, in order per console. `event` ends a console when its
  /// kind is already_active, error, lost or closed (its id may then be opened again).
  struct callbacks {
    std::function<void(uint64_t id, std::string bytes)> output;
    std::function<void(uint64_t id, const console_event& e)> event;
  };

  explicit console_streams(callbacks cb, console_stream_config cfg = {});
  /// Ends every console (no more callbacks) and closes the connections.
  ~console_streams();

  console_streams(const console_streams&) = delete;
  console_streams& operator=(const console_streams&) = delete;

  /// Opens console `id` (any thread): domain `domain` on hypervisor `uri`; `force` takes the
  /// console from another client (VIR_DOMAIN_CONSOLE_FORCE). `up` or an ending event follows;
  /// an id already open is an `error`.
  void open(uint64_t id, std::string uri, std::string domain, bool force);
  /// Keystrokes for console `id` (any thread), sent with virStreamSend; what is not up or
  /// past max_keystrokes is a `dropped` event.
  void write(uint64_t id, std::string keys);
  /// Closes console `id` (any thread): `closed` follows (nothing when it already ended).
  void close(uint64_t id);

  /// Hypervisor connections open now.
  size_t connections() const;

  struct impl;

 private:
  std::shared_ptr<impl> p_;
};

} // namespace cws::virt
