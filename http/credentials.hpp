#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/call.hpp"
#include "http/query.hpp"

namespace cws::http {

/// Whether a query or body key is a general parameter rather than an attribute
/// (xcatws.cgi fetchParameters: userName, userPW, pretty, debug, xcoll, ver).
bool is_general_parameter(const std::string& key);

/// The caller's credentials as xcatws.cgi collects them: `userName`/`userPW` from the body,
/// overridden by the query; the X-Auth-Token header; HTTP Basic only when no user is named.
api::credentials
collect_credentials(const std::vector<std::pair<std::string, std::string>>& body_fields,
                    const query_params& query, std::string_view token_header,
                    std::string_view authorization_header);

} // namespace cws::http
