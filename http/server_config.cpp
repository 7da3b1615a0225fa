#include "http/server_config.hpp"

#include <stdexcept>

namespace cws::http {

namespace {

size_t number(const std::string& key, const std::string& v) {
  try {
    size_t pos = 0;
    auto n = std::stoull(v, &pos);
    if (pos != v.size()) {
      throw std::invalid_argument(v);
    }
    return n;
  } catch (const std::exception&) {
    throw std::invalid_argument("clusterws.conf: '" + key + "' must be a number, not '" + v + "'");
  }
}

} // namespace

void server_config::apply(const std::map<std::string, std::string>& s) {
  for (const auto& [k, v] : s) {
    if (k == "listen") {
      listen = v;
    } else if (k == "io_threads") {
      io_threads = static_cast<unsigned>(std::max<size_t>(1, number(k, v)));
    } else if (k == "max_connections") {
      max_connections = number(k, v);
    } else if (k == "max_header_bytes") {
      header_limit = number(k, v);
    } else if (k == "max_body_bytes") {
      body_limit = number(k, v);
    } else if (k == "max_json_depth") {
      max_json_depth = number(k, v);
    } else if (k == "handshake_timeout") {
      handshake_timeout = std::chrono::seconds(number(k, v));
    } else if (k == "request_timeout") {
      request_timeout = std::chrono::seconds(number(k, v));
    } else if (k == "call_timeout") {
      call_timeout = std::chrono::seconds(number(k, v));
    }
  }
}

} // namespace cws::http
