#pragma once

// Bytes on the service-node links (docs/service-nodes.md, "Liveness"; docs/observability.md).
// CAF 0.17 counts nothing on its connections, so clusterwsd counts them where every TLS
// byte passes: its own SSL_read and SSL_write (daemon/tls_error_queue.cpp). A connection is
// a link when its peer's certificate was issued by the link CA this side trusts (the
// service-node CA on the head, the head CA on a service node); it is counted under that
// certificate's common name (`clusterctl sn add NAME` issues it for NAME). Every other TLS
// connection (the HTTPS server's) is looked at once and then skipped.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <openssl/ssl.h>

namespace cws::daemon {

/// One peer's TLS payload bytes (what the application wrote and read, before TLS framing).
struct link_byte_count {
  std::string name;
  uint64_t sent = 0;
  uint64_t received = 0;
};

/// Counts, from now on, the connections whose peer certificate was issued by the CA in
/// `ca_file` (its subject is compared with the peer certificate's issuer).
/// @throws std::runtime_error when the file holds no certificate.
void count_links_issued_by(const std::filesystem::path& ca_file);

/// Every peer counted so far, by name.
std::vector<link_byte_count> link_bytes();

/// Called by SSL_read/SSL_write with what they returned (`n` > 0: bytes moved).
void count_link_io(SSL* ssl, int n, bool sent);

} // namespace cws::daemon
