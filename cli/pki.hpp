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

} // namespace cws::cli
