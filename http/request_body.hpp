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
  /// xcatws.cgi's `options` object (`{"options":{"--template":"x86_64-template"}}`): the
  /// command-line options a request passes, with their (string) values, in order.
  std::vector<std::pair<std::string, std::string>> options;
  /// True if the body had an `options` object.
  bool has_options = false;
  /// Set when the body is not acceptable; the message for a 400 answer.
  std::string error;
};

/// Parses `body` (simdjson DOM: the whole text is validated, trailing content rejected).
/// Refuses nesting deeper than `max_depth`, duplicate keys, non-objects, and values of a kind
/// an attribute cannot hold (objects, arrays where no list is meant); `options` must be an
/// object of scalar values. With `tables` another value may be an object of scalars, read as
/// fields `key.sub` (`{"nodehm":{"mgt":"ipmi"}}`: the body of PUT /tables/{t}/nodes/{nr}).
request_body parse_request_body(const std::string& body, size_t max_depth, bool tables = false);

} // namespace cws::http
