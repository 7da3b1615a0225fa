#include "cli/pki.hpp"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>
#include <cstdio>
#include <functional>
#include <memory>
#include <stdexcept>
#include <sys/stat.h>

namespace cws::cli {

namespace {

template<class T, void (*F)(T*)>
struct deleter {
  void operator()(T* p) const {
    F(p);
  }
};
using pkey_ptr = std::unique_ptr<EVP_PKEY, deleter<EVP_PKEY, EVP_PKEY_free>>;
using x509_ptr = std::unique_ptr<X509, deleter<X509, X509_free>>;

void check(bool ok, const char* what) {
  if (!ok) {
    throw std::runtime_error(std::string{"certificate generation failed: "} + what);
  }
}

pkey_ptr make_key() {
  pkey_ptr key{EVP_EC_gen("P-256")};
  check(key != nullptr, "EVP_EC_gen");
  return key;
}

bool is_ip(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

void add_ext(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  check(ext != nullptr, "X509V3_EXT_conf_nid");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

x509_ptr make_cert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key,
                   long days, const std::string& san) {
  x509_ptr cert{X509_new()};
  check(cert != nullptr, "X509_new");
  X509_set_version(cert.get(), 2);
  unsigned char serial[16];
  check(RAND_bytes(serial, sizeof serial) == 1, "RAND_bytes");
  serial[0] &= 0x7f; // keep the serial positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 60L * 60 * 24 * days);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("clusterws"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  add_ext(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (issuer == nullptr) {
    add_ext(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE,pathlen:0");
    add_ext(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    add_ext(cert.get(), signer, NID_authority_key_identifier, "keyid");
    add_ext(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    add_ext(cert.get(), signer, NID_key_usage, "critical,digitalSignature");
    add_ext(cert.get(), signer, NID_ext_key_usage, "serverAuth");
    add_ext(cert.get(), signer, NID_subject_alt_name, san);
  }
  check(X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) > 0,
        "X509_sign");
  return cert;
}

void write_pem(const std::filesystem::path& path, mode_t mode,
               const std::function<bool(FILE*)>& fn) {
  FILE* f = std::fopen(path.c_str(), "wx"); // never overwrite a key
  check(f != nullptr, path.c_str());
  fchmod(fileno(f), mode);
  bool ok = fn(f);
  check(std::fclose(f) == 0 && ok, path.c_str());
}

} // namespace

void make_pki(const std::filesystem::path& dir, const std::vector<std::string>& names) {
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  auto ca_key = make_key();
  auto ca = make_cert(ca_key.get(), "clusterws cluster CA", nullptr, nullptr, 3650, {});
  auto key = make_key();
  std::string san;
  for (const auto& n : names) {
    san += (san.empty() ? "" : ",") + std::string{is_ip(n) ? "IP:" : "DNS:"} + n;
  }
  auto cert = make_cert(key.get(), names.empty() ? "localhost" : names.front(), ca.get(),
                        ca_key.get(), 825, san);
  write_pem(dir / "ca-key.pem", 0600, [&](FILE* f) {
    return PEM_write_PrivateKey(f, ca_key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
  write_pem(dir / "ca-cert.pem", 0644, [&](FILE* f) { return PEM_write_X509(f, ca.get()) == 1; });
  write_pem(dir / "server-key.pem", 0600, [&](FILE* f) {
    return PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
  write_pem(dir / "server-cert.pem", 0644,
            [&](FILE* f) { return PEM_write_X509(f, cert.get()) == 1; });
}

} // namespace cws::cli
