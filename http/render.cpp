#include "http/render.hpp"

#include <algorithm>
#include <map>

#include "http/json_writer.hpp"
#include "store/database.hpp"

namespace cws::http {

namespace {

using actors::api_status;

std::string finish(const json_writer& w, bool pretty) {
  // Perl's JSON adds a newline in pretty mode and the CGI one more
  return w.str() + (pretty ? "\n\n" : "\n");
}

/// ver=1.0: these attributes become arrays.
char array_separator(const std::string& attr) {
  if (attr == "groups" || attr == "members" || attr == "postscripts" || attr == "postbootscripts") {
    return ',';
  }
  return attr.rfind("nicips.", 0) == 0 ? '|' : 0;
}

void write_attrs(json_writer& w, const store::attr_map& attrs, bool ver1) {
  w.begin_object();
  for (const auto& [k, v] : attrs) {
    w.key(k);
    char sep = ver1 ? array_separator(k) : 0;
    if (sep == 0) {
      w.value(v);
      continue;
    }
    w.begin_array();
    size_t pos = 0;
    while (pos <= v.size() && !v.empty()) {
      auto end = v.find(sep, pos);
      if (end == std::string::npos) {
        end = v.size();
      }
      w.value(std::string_view{v}.substr(pos, end - pos));
      pos = end + 1;
    }
    w.end_array();
  }
  w.end_object();
}

/// xcoll=1: objects with identical attributes are merged under the key "n1,n2".
std::vector<store::listed_object> collate(const std::vector<store::listed_object>& objs) {
  std::map<store::attr_map, std::vector<std::string>> groups;
  for (const auto& o : objs) {
    groups[o.attrs].push_back(o.name);
  }
  std::vector<store::listed_object> out;
  for (auto& [attrs, names] : groups) {
    std::sort(names.begin(), names.end());
    out.push_back({store::join_list(names), attrs});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

} // namespace

response_text render(const routed& req, const actors::api_result& res) {
  bool pretty = req.render.pretty;
  switch (res.status) {
    case api_status::unauthorized: return {401, error_text("Authentication failure", "2", pretty)};
    case api_status::bad_request:
      return {
        400, error_text(res.messages.empty() ? "Bad request." : res.messages.front(), "2", pretty)};
    case api_status::unavailable:
      return {503, error_text(res.messages.empty() ? "Service unavailable." : res.messages.front(),
                              "2", pretty)};
    case api_status::failed: {
      json_writer w{pretty};
      w.begin_object();
      w.key("error");
      w.begin_array();
      for (const auto& m : res.messages) {
        w.value(m);
      }
      w.end_array();
      w.key("errorcode");
      w.value(res.errorcode);
      w.end_object();
      return {403, finish(w, pretty)};
    }
    default: break;
  }
  unsigned status = req.post ? 201 : 200;
  json_writer w{pretty};
  switch (req.out) {
    case output::none: return {status, {}};
    case output::names:
      if (res.names.empty()) {
        return {status, {}};
      }
      w.begin_array();
      for (const auto& n : res.names) {
        w.value(n);
      }
      w.end_array();
      return {status, finish(w, pretty)};
    case output::objects: {
      bool any = std::any_of(res.objects.begin(), res.objects.end(),
                             [](const auto& o) { return !o.attrs.empty(); });
      if (!any) {
        return {status, {}}; // xCAT: no attribute lines, no body
      }
      auto objs = req.render.xcoll ? collate(res.objects) : res.objects;
      std::sort(objs.begin(), objs.end(),
                [](const auto& a, const auto& b) { return a.name < b.name; });
      w.begin_object();
      for (const auto& o : objs) {
        w.key(o.name);
        write_attrs(w, o.attrs, req.render.ver1);
      }
      w.end_object();
      return {status, finish(w, pretty)};
    }
    case output::token:
      w.begin_object();
      w.key("token");
      w.begin_object();
      w.key("id");
      w.value(res.token_id);
      w.key("expire");
      w.value(res.token_expire);
      w.end_object();
      w.end_object();
      return {201, finish(w, pretty)};
    case output::nodeshell: return {status, {}};
  }
  return {status, {}};
}

} // namespace cws::http
