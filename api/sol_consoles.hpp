#pragma once

// The daemon's console I/O (api::console_io): Serial-over-LAN consoles (cons=ipmi) on one
// event loop (ipmi::console_sessions), BMC names looked up on a thread of their own; libvirt
// console streams (cons=kvm) on libvirt's event loop (virt::console_streams, made with the
// first kvm console); every byte appended to the node's log (api/console_log.hpp) on the
// loop's thread before the console server hears of it: the log never waits for an actor, an
// io thread or a watcher.

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "api/console.hpp"
#include "api/console_log.hpp"
#include "base/task_thread.hpp"
#include "ipmi/console_session.hpp"
#include "virt/console_streams.hpp"

namespace cws::api {

class sol_consoles : public console_io {
 public:
  struct config {
    console_log_config log;
    ipmi::sol_options options;
    /// cons=kvm consoles (libvirt's console streams)
    virt::console_stream_config kvm;
  };

  explicit sol_consoles(config c);
  /// Lookups still queued finish, then every console's payload is deactivated (not awaited).
  ~sol_consoles() override;

  void start(handlers h) override;
  void open(uint64_t id, const console_spec& spec, bool force) override;
  void write(uint64_t id, std::string keys) override;
  void send_break(uint64_t id) override;
  void close(uint64_t id) override;
  void note(const std::string& node, std::string text) override;
  void forget(const std::string& node) override;

 private:
  struct log_entry {
    std::mutex mu;
    console_log log;
    log_entry(console_log_config c, std::string node) : log(std::move(c), std::move(node)) {
    }
  };
  std::shared_ptr<log_entry> log_of(const std::string& node);
  void on_output(uint64_t id, std::string bytes);
  /// A console's end: its log is no longer written through its id.
  void ended(uint64_t id);
  bool is_kvm(uint64_t id);
  virt::console_streams& kvm();

  config cfg_;
  handlers h_;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<log_entry>> logs_;
  std::unordered_map<uint64_t, std::shared_ptr<log_entry>> open_;
  base::task_thread names_;
  std::unique_ptr<ipmi::console_sessions> sessions_;
  std::unordered_set<uint64_t> kvm_ids_;       // under mu_
  std::unique_ptr<virt::console_streams> kvm_; // made by the first kvm open
};

} // namespace cws::api
