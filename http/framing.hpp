#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/result.hpp"

namespace cws::http {

/// Why a request's framing is refused: bad_request or not_implemented, and the message.
struct framing_error {
  api::errc code = api::errc::bad_request;
  std::string message;
};

/// Checks how the request says its body is framed, before its body or the next request is
/// read (RFC 9112 6.1, 6.3). `transfer_encodings` holds every Transfer-Encoding field value
/// in order. Refused: a last coding other than `chunked` (400: the body's end is unknown, so
/// its bytes could be read as another request), `chunked` twice, an empty list, and
/// Transfer-Encoding beside Content-Length (bad_request); codings other than `chunked`
/// (not_implemented).
/// The connection must be closed after such an answer.
std::optional<framing_error> check_framing(const std::vector<std::string_view>& transfer_encodings,
                                           bool has_content_length);

} // namespace cws::http
