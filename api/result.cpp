#include "api/result.hpp"

namespace cws::api {

errc from_store(store::store_errc code) {
  return code == store::store_errc::database ? errc::unavailable : errc::failed;
}

api_result api_result::failure(errc e, std::string message) {
  api_result r;
  r.error = e;
  r.messages.push_back(std::move(message));
  return r;
}

api_result api_result::failure(std::vector<std::string> messages) {
  api_result r;
  r.error = errc::failed;
  r.messages = std::move(messages);
  return r;
}

} // namespace cws::api
