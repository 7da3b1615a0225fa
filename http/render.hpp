#pragma once

#include "api/result.hpp"
#include "http/json_writer.hpp"
#include "http/router.hpp"

namespace cws::http {

/// One NDJSON line (with its newline) for a streamed node result: nodeshell's detail, or with
/// `value_key` (power, nextboot, eventlog, beacon) the node's rc and value or error; eventlog's
/// value is the array of its lines.
std::string stream_line(const base::node_result& node, std::string_view value_key = {});

/// The key of a hardware operation's value in xCAT's actionout (`power`, `nextboot`,
/// `eventlog`, `beacon`), or "" for other operations.
const char* action_key(api::operation op);

/// The last NDJSON line of a stream: how many nodes ran and how many failed.
std::string stream_summary(const api::api_result& res);

/// Renders a large listing (api_result::pages) a page at a time, as `render` would render it
/// whole: `{"name":{attrs},...}` in name order.
class listing_writer {
 public:
  explicit listing_writer(const routed& req);

  /// The text of one page (the opening brace with the first).
  std::string page(const std::vector<api::object_record>& objects);

  /// The closing text.
  std::string end();

 private:
  json_writer w_;
  bool pretty_;
  bool ver1_;
  bool begun_ = false;
  size_t last_page_ = 0;
};

/// `{"error":"<msg>","errorcode":"<code>"}` (a string errorcode, as xCAT's CGI gives it).
std::string error_text(const std::string& message, const std::string& code, bool pretty);

/// Turns a call's result into the HTTP status and body xCAT's REST API gives
/// (xcat-compat.md §2.3, §3): the one place that maps results to status codes.
response_text render(const routed& req, const api::api_result& res);

} // namespace cws::http
