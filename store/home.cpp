#include "store/home.hpp"

#include <cstdlib>
#include <stdexcept>

#include "store/credentials.hpp"

namespace cws::store {

home home::resolve(const std::string& flag) {
  if (!flag.empty()) {
    return under(flag);
  }
  if (const char* env = std::getenv("CLUSTERWS_HOME"); env != nullptr && *env != '\0') {
    return under(env);
  }
  return system();
}

home home::under(std::filesystem::path dir) {
  home h;
  h.config_file = dir / "clusterws.conf";
  h.log_dir = dir;
  h.dir = std::move(dir);
  return h;
}

home home::system() {
  // Fixed, not derived from the install prefix: the unit, the logrotate file and the docs
  // name these paths, and a tool built in a tree must find the installed service's files.
  home h;
  h.dir = "/var/lib/clusterws";
  h.config_file = "/etc/clusterws/clusterws.conf";
  h.log_dir = "/var/log/clusterws";
  h.installed = true;
  return h;
}

std::filesystem::path home::local_socket() const {
  const std::filesystem::path run = "/run/clusterws";
  if (installed) {
    return run / "clusterws.sock";
  }
  // lexical only: the caller may not be allowed to resolve anything inside DIR
  auto where = std::filesystem::absolute(dir).lexically_normal().string();
  while (where.size() > 1 && where.back() == '/') {
    where.pop_back();
  }
  return run / ("home-" + sha256_hex(where).substr(0, 16) + ".sock");
}

bool home::initialized() const {
  return std::filesystem::exists(db() / "data.mdb");
}

void home::require_initialized() const {
  if (!initialized()) {
    throw std::runtime_error("The clusterws home '" + dir.string()
                             + "' is not initialized; run 'clusterctl init"
                             + (installed ? "" : " --home " + dir.string()) + "' first.");
  }
}

} // namespace cws::store
