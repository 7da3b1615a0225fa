// CAF 0.17's TLS sessions (caf::openssl, the service-node link) never clear OpenSSL's
// per-thread error queue before an I/O call, and Debian's CAF (logging compiled out) never
// reads it after one: the error one link leaves there when its peer dies (kill -9: an
// unexpected EOF or a reset) stays in the middleman thread's queue, and the next SSL_read of
// every *other* link on that thread that would block is reported by SSL_get_error as a
// failure, so CAF closes them all (seen: one service node killed, the other two dropped).
// OpenSSL's rule is that the queue must be empty before each TLS I/O call (SSL_get_error(3));
// Boost.Asio keeps it, CAF does not. These definitions, in the executable, take the place of
// libssl's for every caller in the process (CAF's calls go through the PLT), empty the
// calling thread's queue and call libssl's own. SSL_read and SSL_write also count the bytes
// of the service-node links (daemon/link_bytes.hpp).

#include <dlfcn.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "daemon/link_bytes.hpp"

namespace {

template<class Fn>
Fn real(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

} // namespace

extern "C" {

int SSL_read(SSL* ssl, void* buf, int num) {
  static auto fn = real<int (*)(SSL*, void*, int)>("SSL_read");
  ERR_clear_error();
  int n = fn(ssl, buf, num);
  cws::daemon::count_link_io(ssl, n, false);
  return n;
}

int SSL_write(SSL* ssl, const void* buf, int num) {
  static auto fn = real<int (*)(SSL*, const void*, int)>("SSL_write");
  ERR_clear_error();
  int n = fn(ssl, buf, num);
  cws::daemon::count_link_io(ssl, n, true);
  return n;
}

int SSL_accept(SSL* ssl) {
  static auto fn = real<int (*)(SSL*)>("SSL_accept");
  ERR_clear_error();
  return fn(ssl);
}

int SSL_connect(SSL* ssl) {
  static auto fn = real<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  return fn(ssl);
}

} // extern "C"
