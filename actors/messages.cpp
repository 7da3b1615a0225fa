#include "actors/messages.hpp"

namespace cws::actors {

bool is_write(operation op) {
  switch (op) {
    case operation::make:
    case operation::change:
    case operation::remove:
    case operation::token_create:
    case operation::token_revoke: return true;
    default: return false;
  }
}

api_result api_result::failure(api_status s, std::string message, std::string code) {
  api_result r;
  r.status = s;
  r.messages.push_back(std::move(message));
  r.errorcode = std::move(code);
  return r;
}

} // namespace cws::actors
