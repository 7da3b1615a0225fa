#pragma once

#include <libssh2.h>

#include <string>

#include "ssh/engine.hpp"

namespace cws::ssh {

/// Calls libssh2_init once per process. It is global and not thread-safe: call it before
/// the first libssh2 session is made (engine construction does).
void init_libssh2();

/// An SSH connection: a socket and its libssh2 session, owned by the engine thread.
/// Destroying it closes the socket, which ends every channel on it (a command's pty is hung
/// up on the node).
struct connection {
  int fd = -1;
  LIBSSH2_SESSION* session = nullptr;
  /// The pool key of the job it was opened for (see `pool_key`).
  std::string key;

  connection() = default;
  ~connection();

  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;
};

/// The key under which a job's authenticated connection is pooled: user, node, address, port
/// and private key must all match for another job to reuse it.
std::string pool_key(const job& j);

} // namespace cws::ssh
