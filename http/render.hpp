#pragma once

#include "actors/messages.hpp"
#include "http/router.hpp"

namespace cws::http {

/// Turns a call's result into the HTTP status and body xCAT's REST API gives
/// (xcat-compat.md §2.3, §3): the one place that maps results to status codes.
response_text render(const routed& req, const actors::api_result& res);

} // namespace cws::http
