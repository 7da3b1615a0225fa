#include "cli/pki.hpp"

#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
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
                   long days, const std::string& san, const char* usage = "serverAuth") {
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
    add_ext(cert.get(), signer, NID_ext_key_usage, usage);
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

/// Replaces `path` with what `fn` writes: written aside, then renamed over it.
void replace_pem(const std::filesystem::path& path, mode_t mode,
                 const std::function<bool(FILE*)>& fn) {
  auto aside = path.string() + ".new";
  std::filesystem::remove(aside);
  write_pem(aside, mode, fn);
  std::filesystem::rename(aside, path);
}

[[noreturn]] void fail(const std::string& message) {
  throw std::runtime_error(message);
}

pkey_ptr read_key(const std::filesystem::path& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) {
    fail("Cannot read the key " + path.string() + ".");
  }
  pkey_ptr key{PEM_read_PrivateKey(f, nullptr, nullptr, nullptr)};
  std::fclose(f);
  if (!key) {
    fail(path.string() + " holds no PEM private key (or one protected by a passphrase).");
  }
  return key;
}

/// Every certificate of a PEM file, the first being the leaf.
std::vector<x509_ptr> read_certs(const std::filesystem::path& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) {
    fail("Cannot read the certificate " + path.string() + ".");
  }
  std::vector<x509_ptr> out;
  while (X509* c = PEM_read_X509(f, nullptr, nullptr, nullptr)) {
    out.emplace_back(c);
  }
  ERR_clear_error(); // the end of the file reads as an error
  std::fclose(f);
  if (out.empty()) {
    fail(path.string() + " holds no PEM certificate.");
  }
  return out;
}

std::string name_cn(const X509_NAME* name) {
  char buf[256] = {};
  X509_NAME_get_text_by_NID(const_cast<X509_NAME*>(name), NID_commonName, buf, sizeof buf);
  return buf;
}

std::string san_text(const std::vector<std::string>& names) {
  std::string san;
  for (const auto& n : names) {
    san += (san.empty() ? "" : ",") + std::string{is_ip(n) ? "IP:" : "DNS:"} + n;
  }
  return san;
}

/// Does `ca` (with `chain`) verify `leaf`? "" if it does, else OpenSSL's reason.
std::string verify_with(X509* leaf, const std::vector<x509_ptr>& chain, X509* ca) {
  std::unique_ptr<X509_STORE, deleter<X509_STORE, X509_STORE_free>> store{X509_STORE_new()};
  X509_STORE_add_cert(store.get(), ca);
  std::unique_ptr<STACK_OF(X509), void (*)(STACK_OF(X509)*)> untrusted{sk_X509_new_null(),
                                                                       [](STACK_OF(X509) * s) {
                                                                         sk_X509_free(s);
                                                                       }};
  for (size_t i = 1; i < chain.size(); ++i) {
    sk_X509_push(untrusted.get(), chain[i].get());
  }
  std::unique_ptr<X509_STORE_CTX, deleter<X509_STORE_CTX, X509_STORE_CTX_free>> ctx{
    X509_STORE_CTX_new()};
  X509_STORE_CTX_init(ctx.get(), store.get(), leaf, untrusted.get());
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_SERVER);
  if (X509_verify_cert(ctx.get()) == 1) {
    return {};
  }
  return X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()));
}

} // namespace

void make_pki(const std::filesystem::path& dir, const std::vector<std::string>& names) {
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  auto ca_key = make_key();
  auto ca = make_cert(ca_key.get(), "clusterws cluster CA", nullptr, nullptr, 3650, {});
  auto key = make_key();
  auto cert = make_cert(key.get(), names.empty() ? "localhost" : names.front(), ca.get(),
                        ca_key.get(), server_cert_days, san_text(names));
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

cert_info read_server_cert(const std::filesystem::path& dir) {
  auto certs = read_certs(dir / "server-cert.pem");
  X509* cert = certs.front().get();
  cert_info info;
  info.subject = name_cn(X509_get_subject_name(cert));
  info.issuer = name_cn(X509_get_issuer_name(cert));
  auto* sans
    = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; sans != nullptr && i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* g = sk_GENERAL_NAME_value(sans, i);
    if (g->type == GEN_DNS) {
      info.names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(g->d.dNSName)),
                              ASN1_STRING_length(g->d.dNSName));
    } else if (g->type == GEN_IPADD) {
      char buf[INET6_ADDRSTRLEN] = {};
      int len = ASN1_STRING_length(g->d.iPAddress);
      inet_ntop(len == 4 ? AF_INET : AF_INET6, ASN1_STRING_get0_data(g->d.iPAddress), buf,
                sizeof buf);
      info.names.emplace_back(buf);
    }
  }
  GENERAL_NAMES_free(sans);
  std::tm tm{};
  ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm);
  info.not_after = timegm(&tm);
  if (std::filesystem::exists(dir / "ca-cert.pem")) {
    auto ca = read_certs(dir / "ca-cert.pem");
    info.by_cluster_ca = verify_with(cert, certs, ca.front().get()).empty();
  }
  return info;
}

void issue_server_cert(const std::filesystem::path& dir, const std::vector<std::string>& names,
                       long days) {
  if (!std::filesystem::exists(dir / "ca-key.pem")) {
    fail("There is no cluster CA key (" + (dir / "ca-key.pem").string()
         + "): the server certificate comes from the site's CA; renew it there and install it "
           "with 'clusterctl pki install'.");
  }
  auto ca = read_certs(dir / "ca-cert.pem");
  auto ca_key = read_key(dir / "ca-key.pem");
  if (X509_check_private_key(ca.front().get(), ca_key.get()) != 1) {
    ERR_clear_error();
    fail("ca-cert.pem is not the cluster CA (a site CA was installed): renew the server "
         "certificate at the site's CA and install it with 'clusterctl pki install'.");
  }
  auto key = make_key();
  auto cert = make_cert(key.get(), names.empty() ? "localhost" : names.front(), ca.front().get(),
                        ca_key.get(), days, san_text(names));
  replace_pem(dir / "server-key.pem", 0600, [&](FILE* f) {
    return PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
  replace_pem(dir / "server-cert.pem", 0644,
              [&](FILE* f) { return PEM_write_X509(f, cert.get()) == 1; });
}

void install_server_cert(const std::filesystem::path& dir, const std::filesystem::path& cert,
                         const std::filesystem::path& key, const std::filesystem::path& ca) {
  auto chain = read_certs(cert);
  auto pkey = read_key(key);
  if (X509_check_private_key(chain.front().get(), pkey.get()) != 1) {
    ERR_clear_error();
    fail("The key " + key.string() + " does not belong to the certificate " + cert.string() + ".");
  }
  auto trust = read_certs(ca.empty() ? dir / "ca-cert.pem" : ca);
  if (auto why = verify_with(chain.front().get(), chain, trust.front().get()); !why.empty()) {
    fail("The certificate " + cert.string() + " does not verify against the CA "
         + (ca.empty() ? dir / "ca-cert.pem" : ca).string() + ": " + why + ".");
  }
  replace_pem(dir / "server-key.pem", 0600, [&](FILE* f) {
    return PEM_write_PrivateKey(f, pkey.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
  replace_pem(dir / "server-cert.pem", 0644, [&](FILE* f) {
    return std::all_of(chain.begin(), chain.end(),
                       [&](const x509_ptr& c) { return PEM_write_X509(f, c.get()) == 1; });
  });
  if (!ca.empty()) {
    replace_pem(dir / "ca-cert.pem", 0644,
                [&](FILE* f) { return PEM_write_X509(f, trust.front().get()) == 1; });
  }
}

void make_link_ca(const std::filesystem::path& cert, const std::filesystem::path& key,
                  const std::string& cn) {
  auto ca_key = make_key();
  auto ca = make_cert(ca_key.get(), cn, nullptr, nullptr, 3650, {});
  write_pem(key, 0600, [&](FILE* f) {
    return PEM_write_PrivateKey(f, ca_key.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
  write_pem(cert, 0644, [&](FILE* f) { return PEM_write_X509(f, ca.get()) == 1; });
}

void issue_link_cert(const std::filesystem::path& ca_cert, const std::filesystem::path& ca_key,
                     const std::filesystem::path& cert, const std::filesystem::path& key,
                     const std::string& cn) {
  auto signer_key = read_key(ca_key);
  auto signer = read_certs(ca_cert);
  auto k = make_key();
  // both ends of the link are TLS server and client (the head listens, service nodes dial)
  auto c = make_cert(k.get(), cn, signer.front().get(), signer_key.get(), link_cert_days,
                     "DNS:" + cn, "serverAuth,clientAuth");
  replace_pem(key, 0600, [&](FILE* f) {
    return PEM_write_PrivateKey(f, k.get(), nullptr, nullptr, 0, nullptr, nullptr) == 1;
  });
  replace_pem(cert, 0644, [&](FILE* f) { return PEM_write_X509(f, c.get()) == 1; });
}

} // namespace cws::cli
