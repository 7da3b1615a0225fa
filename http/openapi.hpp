#pragma once

#include <string_view>

namespace cws::http {

/// The OpenAPI 3.0 description of the REST API, docs/openapi.yaml compiled in, as
/// `GET /clusterws/openapi.yaml` serves it.
std::string_view openapi_text();

} // namespace cws::http
