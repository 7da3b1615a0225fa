#include "ssh/connection.hpp"

#include <unistd.h>

namespace cws::ssh {

void init_libssh2() {
  static const int once = [] {
    libssh2_init(0);
    return 0;
  }();
  (void)once;
}

connection::~connection() {
  if (session != nullptr) {
    // best effort goodbye, then free with the socket closed so nothing can block
    libssh2_session_disconnect(session, "bye");
  }
  if (fd >= 0) {
    ::close(fd);
  }
  if (session != nullptr) {
    libssh2_session_set_blocking(session, 1);
    libssh2_session_free(session);
  }
}

std::string pool_key(const job& j) {
  return j.user + '\0' + j.node + '\0' + j.address + '\0' + std::to_string(j.port) + '\0'
         + j.private_key.string();
}

} // namespace cws::ssh
