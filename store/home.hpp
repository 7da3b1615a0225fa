#pragma once

#include <filesystem>
#include <string>

namespace cws::store {

/// Where clusterwsd and the tools find their files (docs/operations.md, "Files").
///
/// A home named by `--home DIR` or $CLUSTERWS_HOME keeps everything under DIR (tests, the
/// demo, several instances on one machine). Without either, the installed layout is used:
/// state in /var/lib/clusterws, the configuration file in /etc/clusterws, the audit log in
/// /var/log/clusterws.
struct home {
  /// `--home DIR` if given, else $CLUSTERWS_HOME, else the installed layout (system()).
  static home resolve(const std::string& flag);

  /// Everything under `dir`, its configuration at `dir/clusterws.conf`.
  static home under(std::filesystem::path dir);

  /// The installed (FHS) layout.
  static home system();

  /// The state directory: database, PKI, SSH keys.
  std::filesystem::path dir;

  /// The configuration file.
  std::filesystem::path config_file;

  /// Where the audit log goes by default.
  std::filesystem::path log_dir;

  /// True for the installed layout, which the tools name without `--home`.
  bool installed = false;

  /// The LMDB environment.
  std::filesystem::path db() const {
    return dir / "db";
  }

  /// Cluster CA and server certificate.
  std::filesystem::path pki() const {
    return dir / "pki";
  }

  /// The daemon's configuration file.
  std::filesystem::path config() const {
    return config_file;
  }

  /// The default audit log (setting `audit_log` empty).
  std::filesystem::path audit_log() const {
    return log_dir / "audit.log";
  }

  /// Where clusterwsd listens for local tools by default (setting `local_socket`): outside
  /// the 0700 state directory, so that any local user can reach it.
  /// `/run/clusterws/clusterws.sock` for the installed layout; for a home DIR,
  /// `/run/clusterws/home-<16 hex of the SHA-256 of DIR's absolute path>.sock`, so that a
  /// tool finds it from `--home` or $CLUSTERWS_HOME alone (it cannot read DIR).
  std::filesystem::path local_socket() const;

  /// True once `clusterctl init` has created the database.
  bool initialized() const;

  /// @throws std::runtime_error naming the `clusterctl init` command line to run, when the
  /// home is not initialized.
  void require_initialized() const;
};

} // namespace cws::store
