#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace cws::store {

/// Error codes of the store layer. The HTTP layer maps them to status codes in one place.
enum class store_errc : uint8_t {
  /// An attribute name is not in the object type's schema.
  invalid_attribute = 1,
  /// The named object does not exist.
  not_found,
  /// mkdef on an existing object without force.
  already_exists,
  /// The noderange names nodes or groups that do not exist.
  invalid_noderange,
  /// The noderange is malformed or would expand past the configured cap.
  bad_noderange,
  /// The object type is not one the tools know.
  invalid_type,
  /// A request is incomplete or inconsistent (e.g. a node without groups).
  bad_request,
  /// The database could not be read or written (disk full, corruption, permissions).
  database,
  /// The request tests a value the caller may not read (a masked attribute: docs/security.md
  /// N1). Refused whatever the value is, so the refusal tells nothing about it.
  forbidden,
};

/// An error the store reports to its caller; `what()` is the exact user-facing message.
/// Thrown inside a write transaction it aborts the transaction: nothing is written.
class error : public std::runtime_error {
 public:
  error(store_errc code, const std::string& message) : std::runtime_error(message), code_(code) {
    // nop
  }

  /// The category of the failure.
  store_errc code() const noexcept {
    return code_;
  }

 private:
  store_errc code_;
};

} // namespace cws::store
