#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cws::http {

/// A JSON request body as ordered (key, value) pairs of the top-level object. Values are
/// converted as xCAT's REST layer does: strings as they are, numbers as their text, `true` as
/// "1", `null`/`false` as "" (clears); arrays of strings are joined with `,` for groups,
/// members, postscripts and postbootscripts, with `|` for nicips*, and with `;` for a
/// nodeshell `command`.
struct request_body {
  std::vector<std::pair<std::string, std::string>> fields;
  /// Set when the body is not acceptable; the message for a 400 answer.
  std::string error;
};

/// Parses `body` (simdjson DOM: the whole text is validated, trailing content rejected).
/// Refuses nesting deeper than `max_depth`, duplicate keys, non-objects, and values of a kind
/// an attribute cannot hold (objects, arrays where no list is meant). With `tables` a value
/// may be an object of scalars, read as fields `key.sub` (`{"nodehm":{"mgt":"ipmi"}}`: the
/// body of PUT /tables/{t}/nodes/{nr}).
request_body parse_request_body(const std::string& body, size_t max_depth, bool tables = false);

} // namespace cws::http
