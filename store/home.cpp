#include "store/home.hpp"

#include <cstdlib>

namespace cws::store {

home home::resolve(const std::string& flag) {
  if (!flag.empty()) {
    return home{flag};
  }
  if (const char* env = std::getenv("CLUSTERWS_HOME"); env != nullptr && *env != '\0') {
    return home{env};
  }
  return home{"/var/lib/clusterws"};
}

bool home::initialized() const {
  return std::filesystem::exists(db() / "data.mdb");
}

} // namespace cws::store
