#include "cli/remote.hpp"

#include <simdjson.h>

#include <algorithm>

#include "base/text.hpp"
#include "cli/defaults.hpp"

namespace cws::cli {

namespace {

using store::object_type;

/// xCAT's client text for xcatd's policy refusal (Client.pm prints it as `Error: ...`).
constexpr const char* permission_denied = "Permission denied for request";
/// Longest request target this client builds; a longer retry is not made.
constexpr size_t max_target = 8192;

std::string collection(object_type t) {
  switch (t) {
    case object_type::node: return "nodes";
    case object_type::group: return "groups";
    case object_type::network: return "networks";
    case object_type::osimage: return "osimages";
    case object_type::policy: return "policy";
    case object_type::site: return "globalconf";
    default: throw std::runtime_error("This object type is not served by clusterwsd.");
  }
}

std::string join_messages(const std::vector<std::string>& messages) {
  std::string out;
  for (const auto& m : messages) {
    out += (out.empty() ? "" : "\nError: ") + m;
  }
  return out;
}

simdjson::dom::element parse(simdjson::dom::parser& parser, const std::string& body) {
  simdjson::dom::element doc;
  if (parser.parse(body).get(doc) != simdjson::SUCCESS) {
    throw std::runtime_error("clusterwsd sent an answer that is not JSON.");
  }
  return doc;
}

std::string text_of(simdjson::dom::element e) {
  std::string_view s;
  return e.get_string().get(s) == simdjson::SUCCESS ? std::string{s} : std::string{};
}

std::vector<std::string> strings_of(simdjson::dom::element e) {
  std::vector<std::string> out;
  simdjson::dom::array a;
  if (e.get_array().get(a) == simdjson::SUCCESS) {
    for (auto item : a) {
      out.push_back(text_of(item));
    }
  } else if (e.is_string()) {
    out.push_back(text_of(e));
  }
  return out;
}

/// The messages of an error answer (`{"error": "..." | [...]}`); a policy refusal (401) is
/// xCAT's `Permission denied for request`.
std::vector<std::string> error_messages(const local_reply& r) {
  if (r.status == 401) {
    return {permission_denied};
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  simdjson::dom::element err;
  if (parser.parse(r.body).get(doc) == simdjson::SUCCESS
      && doc["error"].get(err) == simdjson::SUCCESS) {
    auto messages = strings_of(err);
    if (!messages.empty()) {
      return messages;
    }
  }
  return {"clusterwsd answered " + std::to_string(r.status) + "."};
}

/// The name in store's `Could not find an object named 'x' of type 't'.`, or "".
std::string missing_name(const std::string& message) {
  constexpr std::string_view head = "Could not find an object named '";
  if (message.compare(0, head.size(), head) != 0) {
    return {};
  }
  auto end = message.rfind("' of type '");
  return end == std::string::npos || end < head.size()
           ? std::string{}
           : message.substr(head.size(), end - head.size());
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string joined_lines(simdjson::dom::element e) {
  std::string out;
  for (const auto& l : strings_of(e)) {
    out += l + "\n";
  }
  return out;
}

} // namespace

remote_error::remote_error(std::vector<std::string> messages)
    : std::runtime_error(join_messages(messages)), messages_(std::move(messages)) {
  // nop
}

remote::remote(std::filesystem::path socket) : client_(std::move(socket)) {
  // nop
}

std::vector<std::string> remote::names(object_type t) const {
  if (t == object_type::site) {
    return {"clustersite"};
  }
  auto r = client_.request("GET", "/clusterws/" + collection(t));
  if (r.status == 403) {
    auto messages = error_messages(r);
    if (messages.size() == 1 && messages.front().rfind("Could not get objects of type", 0) == 0) {
      return {}; // none of the type: the tool says so in its own words
    }
    throw remote_error(std::move(messages));
  }
  if (r.status != 200) {
    throw remote_error(error_messages(r));
  }
  if (r.body.empty()) {
    return {};
  }
  simdjson::dom::parser parser;
  return strings_of(parse(parser, r.body));
}

std::vector<store::listed_object> remote::fetch(object_type t, const std::string& spec,
                                                std::vector<std::string>& missing) const {
  std::string target = "/clusterws/" + collection(t);
  if (t != object_type::site) {
    target += "/" + url_encode(spec);
  }
  auto r = client_.request("GET", target);
  if (r.status == 403 && t != object_type::site) {
    // as in xCAT's REST, a missing object fails the whole listing; lsdef lists the others
    auto messages = error_messages(r);
    std::vector<std::string> names;
    for (const auto& m : messages) {
      names.push_back(missing_name(m));
    }
    if (!names.empty()
        && std::none_of(names.begin(), names.end(), [](auto& n) { return n.empty(); })) {
      missing.insert(missing.end(), messages.begin(), messages.end());
      std::string rest;
      if (t == object_type::node) {
        rest = spec;
        for (const auto& n : names) {
          rest += ",-" + n; // exclusions apply last, wherever they are
        }
      } else {
        for (const auto& n : base::split_list(spec)) {
          if (std::find(names.begin(), names.end(), n) == names.end()) {
            rest += (rest.empty() ? "" : ",") + n;
          }
        }
        if (rest.empty()) {
          return {};
        }
      }
      target = "/clusterws/" + collection(t) + "/" + url_encode(rest);
      if (target.size() > max_target) {
        return {};
      }
      r = client_.request("GET", target);
    }
  }
  if (r.status != 200) {
    throw remote_error(error_messages(r));
  }
  std::vector<store::listed_object> out;
  if (r.body.empty()) {
    return out;
  }
  simdjson::dom::parser parser;
  simdjson::dom::object objects;
  if (parse(parser, r.body).get_object().get(objects) != simdjson::SUCCESS) {
    throw std::runtime_error("clusterwsd sent a listing that is not a JSON object.");
  }
  for (auto field : objects) {
    store::listed_object o;
    o.name = std::string{field.key};
    simdjson::dom::object attrs;
    if (field.value.get_object().get(attrs) == simdjson::SUCCESS) {
      for (auto a : attrs) {
        o.attrs[std::string{a.key}] = text_of(a.value);
      }
    }
    out.push_back(std::move(o));
  }
  if (t != object_type::node && t != object_type::site) {
    // the order asked (the answer's keys are sorted)
    auto order = base::split_list(spec);
    auto rank = [&](const std::string& n) {
      return std::find(order.begin(), order.end(), n) - order.begin();
    };
    std::stable_sort(out.begin(), out.end(),
                     [&](const auto& a, const auto& b) { return rank(a.name) < rank(b.name); });
  }
  return out;
}

store::listing remote::objects(object_type t, const std::string& spec) const {
  store::listing l;
  l.objects = fetch(t, spec, l.errors);
  return l;
}

std::vector<std::string> remote::nodels(const std::string& spec) const {
  if (spec.empty()) {
    return names(object_type::node);
  }
  auto r = client_.request("GET", "/clusterws/nodes/" + url_encode(spec) + "/nodels");
  if (r.status != 200) {
    throw remote_error(error_messages(r));
  }
  if (r.body.empty()) {
    return {};
  }
  simdjson::dom::parser parser;
  return strings_of(parse(parser, r.body));
}

void remote::nodeshell(const std::string& spec, const std::string& command, long long fanout,
                       long long timeout_s,
                       const std::function<void(base::node_result)>& on_node) const {
  std::string target = "/clusterws/nodes/" + url_encode(spec) + "/nodeshell?stream=1";
  if (fanout > 0) {
    target += "&fanout=" + std::to_string(fanout);
  }
  if (timeout_s >= 0) {
    target += "&timeout=" + std::to_string(timeout_s);
  }
  run("POST", target, "{\"command\":" + json_string(command) + "}", on_node);
}

void remote::nodecopy(const std::string& spec, const std::vector<std::string>& sources,
                      const std::string& destination, bool recursive, bool preserve,
                      long long fanout, long long timeout_s,
                      const std::function<void(base::node_result)>& on_node) const {
  std::string target = "/clusterws/nodes/" + url_encode(spec) + "/nodecopy?stream=1";
  if (fanout > 0) {
    target += "&fanout=" + std::to_string(fanout);
  }
  if (timeout_s >= 0) {
    target += "&timeout=" + std::to_string(timeout_s);
  }
  std::string body = "{\"src\":[";
  for (size_t i = 0; i < sources.size(); ++i) {
    body += (i > 0 ? "," : "") + json_string(sources[i]);
  }
  body += "],\"target\":" + json_string(destination);
  if (recursive) {
    body += ",\"recursive\":\"1\"";
  }
  if (preserve) {
    body += ",\"preserve\":\"1\"";
  }
  run("POST", target, body + "}", on_node);
}

void remote::run(std::string_view method, const std::string& target, const std::string& body,
                 const std::function<void(base::node_result)>& on_node) const {
  std::string pending; // NDJSON text not yet a whole line
  std::string whole;   // an answer that is not a stream (an error), kept for its messages
  bool streamed = false;
  std::vector<std::string> failure;
  simdjson::dom::parser parser;
  auto line = [&](const std::string& text) {
    simdjson::dom::element doc = parse(parser, text);
    simdjson::dom::element e;
    if (doc["node"].get(e) != simdjson::SUCCESS) {
      if (doc["error"].get(e) == simdjson::SUCCESS) {
        failure = strings_of(e); // the summary of a run that failed on the way
      }
      return;
    }
    base::node_result n;
    n.name = text_of(e);
    int64_t rc = -1;
    if (doc["rc"].get(rc) == simdjson::SUCCESS) {
      n.rc = static_cast<int>(rc);
    }
    if (doc["stdout"].get(e) == simdjson::SUCCESS) {
      n.out = joined_lines(e);
    }
    if (doc["stderr"].get(e) == simdjson::SUCCESS) {
      n.err = joined_lines(e);
    }
    if (doc["error"].get(e) == simdjson::SUCCESS) {
      n.error = text_of(e);
    }
    if (doc["message"].get(e) == simdjson::SUCCESS) {
      n.message = text_of(e);
    }
    n.truncated = doc["truncated"].get(e) == simdjson::SUCCESS;
    on_node(std::move(n));
  };
  // format=detail: every operation's nodes come in nodeshell's shape, output as printed
  // cancel_on_close=1: when this process ends (Ctrl-C), the daemon cancels the call, on the
  // service nodes too, instead of letting its job run on
  auto with_detail = target + (target.find('?') == std::string::npos ? "?" : "&")
                     + "format=detail&cancel_on_close=1";
  unsigned status
    = client_.request(method, with_detail, body, [&](unsigned code, std::string_view piece) {
        if (code != 201) {
          whole.append(piece); // refused before anything ran: an ordinary error answer
          return;
        }
        streamed = true;
        pending.append(piece);
        size_t eol;
        while ((eol = pending.find('\n')) != std::string::npos) {
          auto text = pending.substr(0, eol);
          pending.erase(0, eol + 1);
          if (!text.empty()) {
            line(text);
          }
        }
      });
  if (!streamed && status != 201) {
    throw remote_error(error_messages({status, whole}));
  }
  if (!failure.empty()) {
    throw remote_error(std::move(failure));
  }
}

void strip_xcatdefaults(store::attr_map& attrs) {
  for (auto [key, defaults] :
       {std::pair<const char*, std::string_view>{"postscripts", xcatdefaults_postscripts},
        {"postbootscripts", xcatdefaults_postbootscripts}}) {
    auto it = attrs.find(key);
    if (it == attrs.end()) {
      continue;
    }
    auto& v = it->second;
    if (v == defaults) {
      attrs.erase(it);
    } else if (v.size() > defaults.size() && v.compare(0, defaults.size(), defaults) == 0
               && v[defaults.size()] == ',') {
      v.erase(0, defaults.size() + 1);
    }
  }
}

} // namespace cws::cli
