#include "daemon/link_bytes.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include <openssl/pem.h>
#include <openssl/x509.h>

namespace cws::daemon {

namespace {

struct counters {
  std::atomic<uint64_t> sent{0};
  std::atomic<uint64_t> received{0};
};

/// A connection looked at and found not to be a link (its ex_data slot points here).
counters not_a_link;

std::mutex mutex;
std::map<std::string, std::unique_ptr<counters>> peers; // (never shrinks: names are few)
/// The link CA's subject; null until count_links_issued_by (then nothing is looked at).
std::atomic<X509_NAME*> issuer{nullptr};

int slot() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

std::string common_name(X509* cert) {
  char buf[256] = {};
  int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string{};
}

/// The counters of `ssl`'s peer, or not_a_link; null while its handshake is not done.
counters* classify(SSL* ssl, X509_NAME* ca) {
  if (!SSL_is_init_finished(ssl)) {
    return nullptr;
  }
  counters* c = &not_a_link;
  if (X509* peer = SSL_get1_peer_certificate(ssl)) {
    if (X509_NAME_cmp(X509_get_issuer_name(peer), ca) == 0) {
      auto name = common_name(peer);
      std::lock_guard<std::mutex> guard{mutex};
      auto& slot_of = peers[name];
      if (!slot_of) {
        slot_of = std::make_unique<counters>();
      }
      c = slot_of.get();
    }
    X509_free(peer);
  }
  return c;
}

} // namespace

void count_links_issued_by(const std::filesystem::path& ca_file) {
  FILE* f = std::fopen(ca_file.c_str(), "r");
  if (f == nullptr) {
    throw std::runtime_error("cannot read " + ca_file.string());
  }
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (cert == nullptr) {
    throw std::runtime_error("no certificate in " + ca_file.string());
  }
  X509_NAME* name = X509_NAME_dup(X509_get_subject_name(cert));
  X509_free(cert);
  slot();
  if (X509_NAME* old = issuer.exchange(name)) {
    X509_NAME_free(old); // (once per process in practice: the link is set up once)
  }
}

std::vector<link_byte_count> link_bytes() {
  std::vector<link_byte_count> out;
  std::lock_guard<std::mutex> guard{mutex};
  for (const auto& [name, c] : peers) {
    out.push_back(
      {name, c->sent.load(std::memory_order_relaxed), c->received.load(std::memory_order_relaxed)});
  }
  return out;
}

void count_link_io(SSL* ssl, int n, bool sent) {
  X509_NAME* ca = issuer.load(std::memory_order_acquire);
  if (n <= 0 || ca == nullptr || ssl == nullptr) {
    return;
  }
  auto* c = static_cast<counters*>(SSL_get_ex_data(ssl, slot()));
  if (c == nullptr) {
    c = classify(ssl, ca);
    if (c == nullptr) {
      return;
    }
    SSL_set_ex_data(ssl, slot(), c);
  }
  if (c == &not_a_link) {
    return;
  }
  (sent ? c->sent : c->received).fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
}

} // namespace cws::daemon
