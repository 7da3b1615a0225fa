#include "http/credentials.hpp"

#include <openssl/evp.h>

namespace cws::http {

namespace {

std::string base64_decode(std::string_view in) {
  if (in.empty() || in.size() % 4 != 0) {
    return {};
  }
  std::string out(in.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  if (n < 0) {
    return {};
  }
  // EVP_DecodeBlock counts the '=' padding as decoded zero bytes
  size_t pad = in.size() >= 2 && in[in.size() - 2] == '=' ? 2 : in.back() == '=' ? 1 : 0;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

} // namespace

bool is_general_parameter(const std::string& key) {
  return key == "userName" || key == "userPW" || key == "pretty" || key == "debug" || key == "xcoll"
         || key == "ver";
}

api::credentials
collect_credentials(const std::vector<std::pair<std::string, std::string>>& body_fields,
                    const query_params& query, std::string_view token_header,
                    std::string_view authorization_header) {
  api::credentials creds;
  for (const auto& [k, v] : body_fields) {
    if (k == "userName") {
      creds.user = v;
    } else if (k == "userPW") {
      creds.password = v;
    }
  }
  if (const auto* user = query.find("userName")) {
    creds.user = *user;
  }
  if (const auto* password = query.find("userPW")) {
    creds.password = *password;
  }
  creds.token = std::string{token_header};
  constexpr std::string_view basic = "Basic ";
  if (creds.user.empty() && authorization_header.substr(0, basic.size()) == basic) {
    auto decoded = base64_decode(authorization_header.substr(basic.size()));
    auto colon = decoded.find(':');
    if (colon != std::string::npos) {
      creds.user = decoded.substr(0, colon);
      creds.password = decoded.substr(colon + 1);
    }
  }
  return creds;
}

} // namespace cws::http
