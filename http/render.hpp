#pragma once

#include "api/result.hpp"
#include "http/router.hpp"

namespace cws::http {

/// One NDJSON line (with its newline) for a streamed nodeshell result.
std::string stream_line(const base::node_result& node);

/// The last NDJSON line of a stream: how many nodes ran and how many failed.
std::string stream_summary(const api::api_result& res);

/// Turns a call's result into the HTTP status and body xCAT's REST API gives
/// (xcat-compat.md §2.3, §3): the one place that maps results to status codes.
response_text render(const routed& req, const api::api_result& res);

} // namespace cws::http
