#include "http/request_body.hpp"

#include <simdjson.h>

#include <set>

namespace cws::http {

namespace {

/// The separator an array value of `key` is joined with, or 0 if arrays are not allowed.
char list_separator(const std::string& key) {
  if (key == "groups" || key == "members" || key == "postscripts" || key == "postbootscripts") {
    return ',';
  }
  if (key.rfind("nicips", 0) == 0) {
    return '|';
  }
  if (key == "command") {
    return ';';
  }
  if (key == "src") {
    return '\n'; // nodecopy's sources (a path with a line break is refused)
  }
  return 0;
}

bool scalar_text(simdjson::dom::element v, std::string& out) {
  using simdjson::dom::element_type;
  switch (v.type()) {
    case element_type::STRING:
      out = std::string{std::string_view{v.get_string().value()}};
      return true;
    case element_type::INT64: out = std::to_string(v.get_int64().value()); return true;
    case element_type::UINT64: out = std::to_string(v.get_uint64().value()); return true;
    case element_type::DOUBLE: out = simdjson::minify(v); return true;
    case element_type::BOOL: out = v.get_bool().value() ? "1" : ""; return true;
    case element_type::NULL_VALUE: out.clear(); return true;
    default: return false;
  }
}

} // namespace

request_body parse_request_body(const std::string& body, size_t max_depth, bool tables) {
  request_body out;
  // one parser per io thread: parsers are not thread-safe and allocation is costly
  thread_local simdjson::dom::parser parser;
  thread_local size_t depth_set = 0;
  if (depth_set != max_depth) {
    parser = simdjson::dom::parser{};
    if (parser.allocate(std::max<size_t>(body.size(), 4096), max_depth) != simdjson::SUCCESS) {
      out.error = "The service cannot parse JSON right now.";
      return out;
    }
    depth_set = max_depth;
  }
  simdjson::dom::element doc;
  auto err = parser.parse(body).get(doc);
  if (err == simdjson::DEPTH_ERROR) {
    out.error = "The JSON body is nested deeper than " + std::to_string(max_depth) + " levels.";
    return out;
  }
  if (err) {
    out.error = std::string{"Malformed JSON body: "} + simdjson::error_message(err);
    return out;
  }
  simdjson::dom::object obj;
  if (doc.get_object().get(obj)) {
    out.error = "put or post data must be a json object (hash/dict).";
    return out;
  }
  std::set<std::string> seen;
  for (auto field : obj) {
    std::string key{field.key};
    if (!seen.insert(key).second) {
      out.error = "Duplicate key '" + key + "' in the JSON body.";
      return out;
    }
    std::string text;
    if (tables && field.value.is_object()) {
      for (auto sub : field.value.get_object()) {
        if (!scalar_text(sub.value, text)) {
          out.error = "The value of '" + key + "." + std::string{sub.key} + "' must be a string.";
          return out;
        }
        out.fields.emplace_back(key + "." + std::string{sub.key}, std::move(text));
      }
      continue;
    }
    if (key == "options") {
      simdjson::dom::object options;
      if (field.value.get_object().get(options)) {
        out.error = "The value of 'options' must be an object.";
        return out;
      }
      out.has_options = true;
      for (auto opt : options) {
        if (!scalar_text(opt.value, text)) {
          out.error = "The value of option '" + std::string{opt.key} + "' must be a string.";
          return out;
        }
        out.options.emplace_back(std::string{opt.key}, std::move(text));
      }
      continue;
    }
    if (field.value.is_array()) {
      char sep = list_separator(key);
      if (sep == 0) {
        out.error = "The value of '" + key + "' must be a string.";
        return out;
      }
      for (auto item : field.value.get_array()) {
        std::string part;
        if (!scalar_text(item, part)) {
          out.error = "The items of '" + key + "' must be strings.";
          return out;
        }
        text += (text.empty() ? "" : std::string(1, sep)) + part;
      }
    } else if (!scalar_text(field.value, text)) {
      out.error = "The value of '" + key + "' must be a string.";
      return out;
    }
    out.fields.emplace_back(std::move(key), std::move(text));
  }
  return out;
}

} // namespace cws::http
