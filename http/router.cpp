#include "http/router.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "base/text.hpp"
#include "http/json_writer.hpp"
#include "http/request_body.hpp"
#include "store/database.hpp"

namespace cws::http {

namespace {

using api::operation;
using store::object_type;

/// Query and body keys that are not attributes (xcatws.cgi fetchParameters).
bool is_general(const std::string& k) {
  return k == "userName" || k == "userPW" || k == "pretty" || k == "debug" || k == "xcoll"
         || k == "ver";
}

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

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    auto end = s.find(sep, pos);
    out.push_back(s.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    if (end == std::string::npos) {
      return out;
    }
    pos = end + 1;
  }
}

std::string base64_decode(const std::string& in) {
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

response_text answer(unsigned status, const std::string& msg, const std::string& code,
                     bool pretty) {
  return {status, error_text(msg, code, pretty)};
}

/// A route: what the path names, and how each method maps to an operation.
struct resource {
  object_type type = object_type::node;
  std::string target;
  std::vector<std::string> attrs;
  bool only_attrs = false;
  bool nodels = false;
  bool nodeshell = false;
  bool site = false;
  bool tokens = false;
  bool list = false;
};

} // namespace

std::string error_text(const std::string& message, const std::string& code, bool pretty) {
  json_writer w{pretty};
  w.begin_object();
  w.key("error");
  w.value(message);
  w.key("errorcode");
  w.value(code);
  w.end_object();
  return w.str() + (pretty ? "\n\n" : "\n");
}

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

routed route(const http_input& in, const router_limits& limits) {
  routed r;
  // -- query ------------------------------------------------------------------
  auto qpos = in.target.find('?');
  std::string raw_path = in.target.substr(0, qpos);
  std::map<std::string, std::string> query;
  if (qpos != std::string::npos) {
    for (const auto& part : split(in.target.substr(qpos + 1), '&')) {
      if (part.empty()) {
        continue;
      }
      auto eq = part.find('=');
      std::string k;
      std::string v;
      if (!percent_decode(part.substr(0, eq), k, true)
          || (eq != std::string::npos && !percent_decode(part.substr(eq + 1), v, true))) {
        r.answer = answer(400, "Malformed query string.", "2", false);
        return r;
      }
      query[k] = v; // a repeated key: the last wins
    }
  }
  auto flag = [&](const char* k) {
    auto it = query.find(k);
    return it != query.end() && !it->second.empty() && it->second != "0";
  };
  r.render.pretty = flag("pretty");
  r.render.xcoll = flag("xcoll");
  r.render.ver1 = query.count("ver") > 0 && query["ver"] == "1.0";
  bool pretty = r.render.pretty;

  // -- path -------------------------------------------------------------------
  // An encoded '/' cannot be part of a name (Apache refuses %2F by default).
  std::string lowered = raw_path;
  std::transform(lowered.begin(), lowered.end(), lowered.begin(), ::tolower);
  std::string path;
  if (lowered.find("%2f") != std::string::npos || !percent_decode(raw_path, path, false)
      || path.find('\0') != std::string::npos) {
    r.answer = answer(404, "Unsupported resource.", "2", pretty);
    return r;
  }
  std::string rest;
  for (const char* base : {"/clusterws", "/xcatws"}) {
    std::string b = base;
    if (path.compare(0, b.size(), b) == 0 && (path.size() == b.size() || path[b.size()] == '/')) {
      rest = path.substr(b.size());
      break;
    }
    if (b == "/xcatws") {
      r.answer = answer(404, "Unsupported resource.", "2", pretty);
      return r;
    }
  }
  if (!rest.empty() && rest.back() == '/') {
    rest.pop_back(); // one trailing slash is removed
  }
  const std::string& m = in.method;
  r.post = m == "POST";
  if (rest.empty()) {
    if (m != "GET") {
      r.answer
        = answer(405, "request method '" + m + "' is not supported on resource '/'", "2", pretty);
      return r;
    }
    json_writer w{pretty};
    w.begin_array();
    for (auto name :
         {"globalconf", "groups", "networks", "nodes", "osimages", "policy", "tokens"}) {
      w.value(name);
    }
    w.end_array();
    r.answer = response_text{200, w.str() + (pretty ? "\n\n" : "\n")};
    return r;
  }
  auto seg = split(rest.substr(1), '/');
  const std::string& group = seg[0];
  resource res;
  std::vector<std::string> methods; // the methods the matched resource has
  size_t n = seg.size();
  auto attrs_route = [&](size_t at) {
    return n == at + 2 && seg[at] == "attrs" && !seg[at + 1].empty();
  };
  auto take_attrs = [&](const std::string& a) {
    std::string list = a;
    std::replace(list.begin(), list.end(), ';', ',');
    res.attrs = base::split_list(list);
    res.only_attrs = true;
  };
  if (group == "nodes") {
    res.type = object_type::node;
    if (n == 1) {
      res.list = true;
      methods = {"GET"};
    } else if (n == 2) {
      res.target = seg[1];
      methods = {"GET", "PUT", "POST", "DELETE"};
    } else if (attrs_route(2)) {
      res.target = seg[1];
      take_attrs(seg[3]);
      methods = {"GET"};
    } else if (n == 3 && seg[2] == "nodels") {
      res.target = seg[1];
      res.nodels = true;
      methods = {"GET"};
    } else if (n == 3 && seg[2] == "nodeshell") {
      res.target = seg[1];
      res.nodeshell = true;
      methods = {"POST"};
    }
  } else if (group == "groups" || group == "networks" || group == "osimages" || group == "policy") {
    res.type = group == "groups"     ? object_type::group
               : group == "networks" ? object_type::network
               : group == "osimages" ? object_type::osimage
                                     : object_type::policy;
    if (n == 1) {
      res.list = true;
      methods = {"GET"};
    } else if (n == 2 && !seg[1].empty()) {
      res.target = seg[1];
      methods = group == "groups" ? std::vector<std::string>{"GET", "PUT"}
                                  : std::vector<std::string>{"GET", "PUT", "POST", "DELETE"};
    } else if (attrs_route(2)) {
      res.target = seg[1];
      take_attrs(seg[3]);
      methods = {"GET"};
    }
  } else if (group == "globalconf") {
    res.type = object_type::site;
    res.site = true;
    if (n == 1) {
      methods = {"GET"};
    } else if (attrs_route(1)) {
      take_attrs(seg[2]);
      methods = {"GET", "PUT", "DELETE"};
    }
  } else if (group == "tokens" && n <= 2) {
    res.tokens = true;
    methods = n == 1 ? std::vector<std::string>{"GET", "POST"}
                     : std::vector<std::string>{"POST", "DELETE"};
    if (n == 2) {
      res.target = seg[1];
    }
  }
  if (methods.empty()) {
    r.answer = answer(404, "Unsupported resource.", "2", pretty);
    return r;
  }
  if (std::find(methods.begin(), methods.end(), m) == methods.end()) {
    r.answer = answer(405, "request method '" + m + "' is not supported on resource '" + rest + "'",
                      "2", pretty);
    return r;
  }
  if (res.target == "ALLRESOURCES" && res.type == object_type::node && !res.tokens) {
    if (m != "GET") {
      r.answer = answer(404, "Keyword ALLRESOURCES is only supported for GET Action.", "2", pretty);
      return r;
    }
    res.target = "all";
  }

  // -- body -------------------------------------------------------------------
  std::vector<std::pair<std::string, std::string>> fields;
  bool has_body = m == "PUT" || m == "POST" || in.content_type.find("json") != std::string::npos;
  if (has_body && !in.body.empty()) {
    auto parsed = parse_request_body(in.body, limits.max_json_depth);
    if (!parsed.error.empty()) {
      r.answer = answer(400, parsed.error, "2", pretty);
      return r;
    }
    fields = std::move(parsed.fields);
  }
  // General parameters move out of the body; the query wins over the body.
  auto& call = *r.call;
  call.client = in.client;
  std::vector<std::pair<std::string, std::string>> attrs;
  for (auto& [k, v] : fields) {
    if (k == "userName") {
      call.creds.user = v;
    } else if (k == "userPW") {
      call.creds.password = v;
    } else if (!is_general(k)) {
      attrs.emplace_back(k, v);
    }
  }
  if (auto it = query.find("userName"); it != query.end()) {
    call.creds.user = it->second;
  }
  if (auto it = query.find("userPW"); it != query.end()) {
    call.creds.password = it->second;
  }
  if (!in.token.empty()) {
    call.creds.token = in.token;
  }
  if (in.authorization.compare(0, 6, "Basic ") == 0 && call.creds.user.empty()) {
    auto decoded = base64_decode(in.authorization.substr(6));
    auto colon = decoded.find(':');
    if (colon != std::string::npos) {
      call.creds.user = decoded.substr(0, colon);
      call.creds.password = decoded.substr(colon + 1);
    }
  }
  if (m == "PUT" || m == "POST") {
    // other query parameters become attributes, the query winning (xcatws.cgi)
    for (const auto& [k, v] : query) {
      if (is_general(k)) {
        continue;
      }
      const std::string& key = k; // (structured bindings cannot be captured in C++17)
      auto it = std::find_if(attrs.begin(), attrs.end(), [&](auto& a) { return a.first == key; });
      if (it != attrs.end()) {
        it->second = v;
      } else {
        attrs.emplace_back(k, v);
      }
    }
  }

  // -- the call -----------------------------------------------------------------
  call.type = res.type;
  call.target = res.target;
  call.attrs = res.attrs;
  call.only_attrs = res.only_attrs;
  if (res.tokens) {
    call.op = m == "POST"  ? operation::token_create
              : m == "GET" ? operation::token_list
                           : operation::token_revoke;
    r.out = m == "POST" ? output::token : m == "GET" ? output::objects : output::none;
    return r;
  }
  auto detail = query.count("format") > 0 && query["format"] == "detail";
  if (query.count("format") > 0 && !detail) {
    r.answer = answer(400, "format must be 'detail'.", "2", pretty);
    return r;
  }
  call.detail = detail;
  if (res.nodeshell) {
    call.op = operation::nodeshell;
    call.policy_command = "xdsh";
    r.out = output::nodeshell;
    r.stream = flag("stream");
    auto number = [&](const char* k, long long max, long long& out) {
      auto it = query.find(k);
      if (it == query.end()) {
        return true;
      }
      char* end = nullptr;
      auto v = std::strtoll(it->second.c_str(), &end, 10);
      if (it->second.empty() || *end != '\0' || v < 0 || v > max) {
        r.answer = answer(
          400, std::string{k} + " must be a whole number from 0 to " + std::to_string(max) + ".",
          "2", pretty);
        return false;
      }
      out = v;
      return true;
    };
    long long fanout = 0;
    long long timeout = -1;
    if (!number("fanout", 100000, fanout) || !number("timeout", 86400, timeout)) {
      return r;
    }
    call.fanout = static_cast<size_t>(fanout);
    call.timeout_ms = timeout < 0 ? -1 : timeout * 1000;
    for (const auto& [k, v] : attrs) {
      if (k == "command") {
        call.command = v;
      } else if (k == "ENV" || k == "raw") {
        r.answer = answer(400,
                          "'" + k
                            + "' is not accepted: nodeshell runs as the "
                              "authenticated user with the service's options.",
                          "2", pretty);
        return r;
      }
    }
    if (call.command.empty()) {
      json_writer w{pretty};
      w.begin_object();
      w.key("error");
      w.value("Lack of operation data.");
      w.key("errorcode");
      w.number(3);
      w.end_object();
      r.answer = response_text{400, w.str() + (pretty ? "\n\n" : "\n")};
    }
    return r;
  }
  if (m == "GET") {
    call.policy_command = res.nodels ? "nodels" : "lsdef";
    call.op = res.list     ? operation::list
              : res.nodels ? operation::nodels
              : res.site   ? operation::site_show
                           : operation::show;
    r.out = res.list || res.nodels ? output::names : output::objects;
    return r;
  }
  r.out = output::none;
  for (auto& [k, v] : attrs) {
    call.changes.push_back({k, v});
  }
  if (res.site) {
    call.op = operation::change;
    call.policy_command = "chdef";
    if (m == "DELETE") {
      // each named key is cleared, which deletes it
      call.changes.clear();
      for (const auto& a : res.attrs) {
        call.changes.push_back({a, ""});
      }
    }
    return r;
  }
  if (m == "DELETE") {
    call.op = operation::remove;
    call.policy_command = "rmdef";
    if (detail && res.type == object_type::node) {
      r.out = output::per_node;
    }
  } else if (m == "PUT" || res.type == object_type::policy) {
    call.op = operation::change; // POST on policy is chdef in xCAT too
    call.policy_command = "chdef";
  } else {
    call.op = operation::make;
    call.policy_command = "mkdef";
  }
  return r;
}

} // namespace cws::http
