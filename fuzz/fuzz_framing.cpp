// libFuzzer: raw request bytes through Beast's parser and the framing check, as a session
// reads them. A request the check lets through has no Transfer-Encoding, or exactly one
// final `chunked` coding and no Content-Length; nothing crashes.

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cctype>
#include <cstdint>
#include <string>

#include "http/framing.hpp"

namespace bhttp = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(16 * 1024);
  parser.body_limit(64 * 1024);
  parser.eager(true);
  boost::beast::error_code ec;
  boost::asio::const_buffer in{data, size};
  while (in.size() > 0 && !parser.is_done()) {
    auto used = parser.put(in, ec);
    if (ec == bhttp::error::need_more) {
      return 0;
    }
    if (ec || used == 0) {
      return 0;
    }
    in += used;
  }
  if (!parser.is_header_done()) {
    return 0;
  }
  const auto& head = parser.get();
  std::vector<std::string_view> codings;
  for (auto [it, end] = head.equal_range(bhttp::field::transfer_encoding); it != end; ++it) {
    codings.push_back(it->value());
  }
  bool has_length = head.count(bhttp::field::content_length) > 0;
  auto bad = cws::http::check_framing(codings, has_length);
  if (!bad && !codings.empty()) {
    // accepted: the only coding is chunked, and no Content-Length beside it
    std::string all;
    for (auto c : codings) {
      for (char ch : c) {
        all.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
      }
      all.push_back(',');
    }
    if (has_length || all.find("chunked") == std::string::npos) {
      __builtin_trap();
    }
  }
  if (bad && bad->code != cws::api::errc::bad_request
      && bad->code != cws::api::errc::not_implemented) {
    __builtin_trap();
  }
  return 0;
}
