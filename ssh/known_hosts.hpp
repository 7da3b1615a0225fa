#pragma once

#include <libssh2.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "ssh/engine.hpp"

namespace cws::ssh {

/// The known_hosts file (OpenSSH format) and the policy that checks servers' host keys
/// against it. Keys learned under `accept_new` are kept in memory until `save`. Engine
/// thread only.
class known_hosts {
 public:
  /// Reads `file` if it is set and exists; an empty path means: nothing known, nothing saved.
  known_hosts(std::filesystem::path file, host_key_policy policy);
  ~known_hosts();

  known_hosts(const known_hosts&) = delete;
  known_hosts& operator=(const known_hosts&) = delete;

  /// Checks the host key that `s` received in its handshake with `node` on `port`. Under
  /// `accept_new` an unknown key is learned.
  /// @returns empty if the key is accepted, else the refusal in ssh's words.
  std::string check(LIBSSH2_SESSION* s, const std::string& node, uint16_t port);

  /// Writes the file if a key was learned since the last save.
  void save();

 private:
  std::filesystem::path file_;
  host_key_policy policy_;
  /// libssh2_knownhost_init wants a session; this one never connects.
  LIBSSH2_SESSION* session_ = nullptr;
  LIBSSH2_KNOWNHOSTS* hosts_ = nullptr;
  bool dirty_ = false;
};

} // namespace cws::ssh
