#pragma once

// A private L2 network for tests of the provisioning services (DHCP, TFTP, PXE): two network
// namespaces joined by a veth pair, the "server" end (`srv0`, 10.99.0.1/24) and the "client"
// end (`cli0`, no address, its MAC set per request), plus the processes a test starts inside
// them (stopped by their pid) and a busybox udhcpc client that reports what it was offered.
// Names carry the test's tag and pid: other engineers' tests run beside these.

#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace cws::test {

/// Two namespaces `<tag>-<pid>-s` and `<tag>-<pid>-c` and the veth pair between them.
/// Needs root and iproute2; `ok()` says whether they exist. Deleted at the end.
class netns_pair {
 public:
  /// `tag`: what the test is (the namespaces' names start with it), e.g. "cws-dhcp".
  explicit netns_pair(const std::string& tag);
  ~netns_pair();

  netns_pair(const netns_pair&) = delete;
  netns_pair& operator=(const netns_pair&) = delete;

  bool ok() const noexcept {
    return ok_;
  }

  const std::string& server() const noexcept {
    return server_;
  }

  const std::string& client() const noexcept {
    return client_;
  }

  /// The server end's interface and address.
  static constexpr const char* server_if = "srv0";
  static constexpr const char* server_ip = "10.99.0.1";
  static constexpr const char* client_if = "cli0";

  /// `ip netns exec <server> ` / `<client> `: a prefix for shell command lines.
  std::string in_server() const;
  std::string in_client() const;

  /// Sets the client end's MAC (down, address, up).
  bool set_client_mac(const std::string& mac) const;

  /// One DHCP exchange from the client end with busybox udhcpc (`-n -q -t tries -T 1`,
  /// `-O bootfile`, plus `extra`: `-V PXEClient:Arch:00007`, `-x 0x5d:0007`, `-x 0xaf:0101`
  /// for iPXE). Returns what the lease script saw (`ip`, `hostname`, `siaddr`, `boot_file`,
  /// `bootfile`, `router`, `dns`, `domain`, `mask`), empty when nothing was offered.
  std::map<std::string, std::string> dhcp_request(const std::vector<std::string>& extra = {},
                                                  int tries = 4) const;

 private:
  std::string server_;
  std::string client_;
  std::string dir_;
  bool ok_ = false;
};

/// A process started for a test (argv[0] looked up in PATH), stopped by its pid (SIGTERM,
/// then SIGKILL after 5 s) at the end.
class test_process {
 public:
  /// Starts `argv` with `env` added to the environment; stdout and stderr go to `log`.
  test_process(const std::vector<std::string>& argv, const std::string& log,
               const std::vector<std::string>& env = {});
  ~test_process();

  test_process(const test_process&) = delete;
  test_process& operator=(const test_process&) = delete;

  pid_t pid() const noexcept {
    return pid_;
  }

  /// True while it runs.
  bool running();

  /// Stops it and waits for it.
  void stop();

 private:
  pid_t pid_ = -1;
};

} // namespace cws::test
