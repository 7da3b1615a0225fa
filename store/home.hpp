#pragma once

#include <filesystem>
#include <string>

namespace cws::store {

/// The state directory shared by clusterwsd and the tools (spec/design.md).
struct home {
  /// `--home DIR` if given, else $CLUSTERWS_HOME, else /var/lib/clusterws.
  static home resolve(const std::string& flag);

  std::filesystem::path dir;

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
    return dir / "clusterws.conf";
  }

  /// True once `clusterctl init` has created the database.
  bool initialized() const;
};

} // namespace cws::store
