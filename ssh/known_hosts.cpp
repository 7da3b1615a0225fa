#include "ssh/known_hosts.hpp"

#include <stdexcept>

#include "ssh/connection.hpp"

namespace cws::ssh {

namespace {

/// The known_hosts key type for a libssh2 host key type.
int knownhost_key_type(int hostkey_type) {
  switch (hostkey_type) {
    case LIBSSH2_HOSTKEY_TYPE_RSA: return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
    case LIBSSH2_HOSTKEY_TYPE_DSS: return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_256: return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_384: return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
    case LIBSSH2_HOSTKEY_TYPE_ECDSA_521: return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
    case LIBSSH2_HOSTKEY_TYPE_ED25519: return LIBSSH2_KNOWNHOST_KEY_ED25519;
    default: return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
  }
}

} // namespace

host_key_policy parse_host_key_policy(const std::string& text) {
  if (text == "strict") {
    return host_key_policy::strict;
  }
  if (text == "accept-new") {
    return host_key_policy::accept_new;
  }
  if (text == "off") {
    return host_key_policy::off;
  }
  throw std::invalid_argument("ssh_host_key_policy must be strict, accept-new or off, not '" + text
                              + "'");
}

known_hosts::known_hosts(std::filesystem::path file, host_key_policy policy)
    : file_(std::move(file)), policy_(policy) {
  init_libssh2();
  session_ = libssh2_session_init();
  hosts_ = libssh2_knownhost_init(session_);
  if (!file_.empty()) {
    libssh2_knownhost_readfile(hosts_, file_.c_str(), LIBSSH2_KNOWNHOST_FILE_OPENSSH);
  }
}

known_hosts::~known_hosts() {
  libssh2_knownhost_free(hosts_);
  libssh2_session_free(session_);
}

std::string known_hosts::check(LIBSSH2_SESSION* s, const std::string& node, uint16_t port) {
  if (policy_ == host_key_policy::off) {
    return {};
  }
  size_t len = 0;
  int type = 0;
  const char* key = libssh2_session_hostkey(s, &len, &type);
  if (key == nullptr) {
    return "ssh: no host key from " + node;
  }
  int kt = knownhost_key_type(type);
  int rc = libssh2_knownhost_checkp(
    hosts_, node.c_str(), port, key, len,
    LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | kt, nullptr);
  if (rc == LIBSSH2_KNOWNHOST_CHECK_MATCH) {
    return {};
  }
  if (rc == LIBSSH2_KNOWNHOST_CHECK_NOTFOUND && policy_ == host_key_policy::accept_new) {
    // OpenSSH's spelling of a non-default port, so that ssh itself reads the entry
    std::string host = port == 22 ? node : "[" + node + "]:" + std::to_string(port);
    libssh2_knownhost_addc(hosts_, host.c_str(), nullptr, key, len, nullptr, 0,
                           LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | kt,
                           nullptr);
    dirty_ = true;
    return {};
  }
  return rc == LIBSSH2_KNOWNHOST_CHECK_MISMATCH
           ? "ssh: REMOTE HOST IDENTIFICATION HAS CHANGED for " + node
               + "; host key verification failed."
           : "ssh: No host key is known for " + node + "; host key verification failed.";
}

void known_hosts::save() {
  if (dirty_ && !file_.empty()) {
    libssh2_knownhost_writefile(hosts_, file_.c_str(), LIBSSH2_KNOWNHOST_FILE_OPENSSH);
  }
  dirty_ = false;
}

} // namespace cws::ssh
