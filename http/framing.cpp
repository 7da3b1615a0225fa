#include "http/framing.hpp"

#include <algorithm>
#include <cctype>

#include "base/text.hpp"

namespace cws::http {

namespace {

bool is_chunked(std::string_view coding) {
  constexpr std::string_view chunked = "chunked";
  return coding.size() == chunked.size()
         && std::equal(coding.begin(), coding.end(), chunked.begin(), [](char a, char b) {
              return std::tolower(static_cast<unsigned char>(a)) == b;
            });
}

/// Printable without quotes, and short: the message names the coding.
std::string shown(std::string_view coding) {
  std::string out;
  for (char c : coding.substr(0, 64)) {
    auto u = static_cast<unsigned char>(c);
    out.push_back(u > 0x20 && u < 0x7f && c != '\'' && c != '"' ? c : '?');
  }
  return out;
}

} // namespace

std::optional<framing_error> check_framing(const std::vector<std::string_view>& transfer_encodings,
                                           bool has_content_length) {
  if (transfer_encodings.empty()) {
    return std::nullopt;
  }
  std::vector<std::string> codings;
  for (auto field : transfer_encodings) {
    // empty list elements are allowed and ignored (RFC 9110 5.6.1), as split_list does
    for (auto& coding : base::split_list(field)) {
      codings.push_back(std::move(coding));
    }
  }
  if (codings.empty() || !is_chunked(codings.back())) {
    return framing_error{api::errc::bad_request, "Transfer-Encoding must end with 'chunked'."};
  }
  if (has_content_length) {
    return framing_error{api::errc::bad_request,
                         "Transfer-Encoding and Content-Length cannot be used together."};
  }
  for (size_t i = 0; i + 1 < codings.size(); ++i) {
    if (is_chunked(codings[i])) {
      return framing_error{api::errc::bad_request,
                           "Transfer-Encoding names 'chunked' more than once."};
    }
    return framing_error{api::errc::not_implemented,
                         "The transfer coding '" + shown(codings[i]) + "' is not supported."};
  }
  return std::nullopt;
}

} // namespace cws::http
