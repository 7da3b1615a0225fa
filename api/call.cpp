#include "api/call.hpp"

namespace cws::api {

bool is_write(operation op) {
  switch (op) {
    case operation::make:
    case operation::change:
    case operation::remove:
    case operation::rename:
    case operation::table_set_nodes:
    case operation::table_set_rows:
    case operation::table_delete_rows:
    case operation::make_networks:
    case operation::token_create:
    case operation::token_revoke: return true;
    default: return false;
  }
}

bool is_fan_out(operation op) {
  return op == operation::nodeshell || op == operation::nodecopy || op == operation::power
         || op == operation::nextboot || op == operation::nodestat || op == operation::eventlog
         || op == operation::beacon || op == operation::vitals || op == operation::inventory;
}

} // namespace cws::api
