#include "store/home.hpp"

#include <cstdlib>
#include <fstream>

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

std::map<std::string, std::string> home::settings() const {
  std::map<std::string, std::string> out;
  std::ifstream in{config()};
  std::string line;
  auto trim = [](std::string s) {
    auto b = s.find_first_not_of(" \t\r");
    auto e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string{} : s.substr(b, e - b + 1);
  };
  while (std::getline(in, line)) {
    line = trim(line.substr(0, line.find('#')));
    auto eq = line.find('=');
    if (eq != std::string::npos) {
      out[trim(line.substr(0, eq))] = trim(line.substr(eq + 1));
    }
  }
  return out;
}

} // namespace cws::store
