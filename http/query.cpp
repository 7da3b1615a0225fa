#include "http/query.hpp"

#include "base/text.hpp"

namespace cws::http {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

} // namespace

bool percent_decode(std::string_view in, std::string& out, bool query) {
  out.clear();
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) {
        return false;
      }
      int hi = hex_value(in[i + 1]);
      int lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) {
        return false;
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && query) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return true;
}

bool query_params::parse(std::string_view text) {
  while (!text.empty()) {
    auto amp = text.find('&');
    auto part = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view{} : text.substr(amp + 1);
    if (part.empty()) {
      continue;
    }
    auto eq = part.find('=');
    std::string k;
    std::string v;
    if (!percent_decode(part.substr(0, eq), k, true)
        || (eq != std::string_view::npos && !percent_decode(part.substr(eq + 1), v, true))) {
      return false;
    }
    values_[std::move(k)] = std::move(v);
  }
  return true;
}

const std::string* query_params::find(const std::string& key) const {
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

bool query_params::flag(const std::string& key) const {
  const auto* v = find(key);
  return v != nullptr && !v->empty() && *v != "0";
}

bool query_params::equals(const std::string& key, std::string_view value) const {
  const auto* v = find(key);
  return v != nullptr && *v == value;
}

std::optional<long long> query_params::number(const std::string& key, long long max,
                                              long long fallback) const {
  const auto* v = find(key);
  if (v == nullptr) {
    return fallback;
  }
  unsigned long long n = 0;
  if (!base::parse_unsigned(*v, n) || n > static_cast<unsigned long long>(max)) {
    return std::nullopt;
  }
  return static_cast<long long>(n);
}

} // namespace cws::http
