#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cws::cli {

/// Creates the cluster CA (`ca-cert.pem`, `ca-key.pem`) and a server certificate signed by it
/// (`server-cert.pem`, `server-key.pem`) in `dir`. Keys are EC P-256 (fast handshakes), private
/// keys are mode 0600. `names` become the server's subjectAltNames (DNS names and IP
/// addresses); the first is its common name.
/// @throws std::runtime_error on failure.
void make_pki(const std::filesystem::path& dir, const std::vector<std::string>& names);

/// Days a server certificate issued by the cluster CA is valid (825: what browsers and
/// macOS accept for a TLS server certificate).
constexpr long server_cert_days = 825;

/// What a certificate says about itself.
struct cert_info {
  std::string subject;
  std::string issuer;
  /// subjectAltNames, DNS names and IP addresses as text, in order.
  std::vector<std::string> names;
  /// notAfter, seconds since the epoch.
  long long not_after = 0;
  /// True if the cluster CA in the same directory (ca-cert.pem) signed it.
  bool by_cluster_ca = false;
};

/// Reads `dir`/server-cert.pem. @throws std::runtime_error if it cannot be read.
cert_info read_server_cert(const std::filesystem::path& dir);

/// Issues a new server key and certificate for `names` with the cluster CA of `dir`, valid
/// `days`, and puts them in place (written aside, then renamed: a reader sees the old pair
/// or the new one). @throws std::runtime_error (no CA key: a site certificate is installed).
void issue_server_cert(const std::filesystem::path& dir, const std::vector<std::string>& names,
                       long days);

/// Installs a site's certificate (`cert`, which may hold its chain) and key, checked to
/// belong together and, with `ca`, to verify against that CA, which then replaces
/// ca-cert.pem (the CA clients trust). @throws std::runtime_error saying what is wrong.
void install_server_cert(const std::filesystem::path& dir, const std::filesystem::path& cert,
                         const std::filesystem::path& key, const std::filesystem::path& ca);

/// Days a service-node link certificate is valid (the link's own CAs sign nothing else).
constexpr long link_cert_days = 3650;

/// Creates a CA of its own for the service-node link (docs/service-nodes.md): `cert` and
/// `key` (0600; neither may exist), EC P-256, valid 10 years. @throws std::runtime_error.
void make_link_ca(const std::filesystem::path& cert, const std::filesystem::path& key,
                  const std::string& cn);

/// Issues a link certificate for `cn` (server and client use) signed by that CA, replacing
/// `cert` and `key` (0600). @throws std::runtime_error.
void issue_link_cert(const std::filesystem::path& ca_cert, const std::filesystem::path& ca_key,
                     const std::filesystem::path& cert, const std::filesystem::path& key,
                     const std::string& cn);

} // namespace cws::cli
