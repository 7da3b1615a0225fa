#include "http/render.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "api/operation_traits.hpp"
#include "base/text.hpp"
#include "http/json_writer.hpp"
#include "http/openapi.hpp"
#include "store/database.hpp"

namespace cws::http {

namespace {

using api::errc;

std::string finish(json_writer& w, bool pretty) {
  // Perl's JSON adds a newline in pretty mode and the CGI one more; no copy of a large answer
  auto text = w.take();
  text += pretty ? "\n\n" : "\n";
  return text;
}

/// ver=1.0: these attributes become arrays.
char array_separator(const std::string& attr) {
  if (attr == "groups" || attr == "members" || attr == "postscripts" || attr == "postbootscripts") {
    return ',';
  }
  return attr.rfind("nicips.", 0) == 0 ? '|' : 0;
}

/// False for an attribute xcatws's defout leaves out: with ver=1.0, a list attribute whose
/// value is empty (`split` gives no items, and defout then sets nothing).
bool shown(std::string_view attr, std::string_view value, bool ver1) {
  return !ver1 || !value.empty() || array_separator(std::string{attr}) == 0;
}

/// True if an object shows any attribute. defout makes an object's key only when it sets an
/// attribute, so an object without one is not in the answer at all (`lsdef -i nicips.eth0`
/// of a node without it prints only its `Object name:` line).
bool shows_attributes(std::string_view encoded, bool ver1) {
  bool any = false;
  store::record_view{encoded}.for_each(
    [&](std::string_view k, std::string_view v) { any = any || shown(k, v, ver1); });
  return any;
}

/// An object's attributes, decoded straight into the writer.
void write_attrs(json_writer& w, std::string_view encoded, bool ver1) {
  w.begin_object();
  store::record_view{encoded}.for_each([&](std::string_view k, std::string_view v) {
    if (!shown(k, v, ver1)) {
      return;
    }
    w.key(k);
    char sep = ver1 ? array_separator(std::string{k}) : 0;
    if (sep == 0) {
      w.value(v);
      return;
    }
    w.begin_array();
    size_t pos = 0;
    while (pos <= v.size() && !v.empty()) {
      auto end = v.find(sep, pos);
      if (end == std::string_view::npos) {
        end = v.size();
      }
      w.value(v.substr(pos, end - pos));
      pos = end + 1;
    }
    w.end_array();
  });
  w.end_object();
}

/// xcoll=1: objects with identical attributes (identical encodings: attributes are sorted)
/// are merged under the key "n1,n2".
std::vector<api::object_record> collate(const std::vector<api::object_record>& objs) {
  std::map<std::string_view, std::vector<std::string>> groups;
  for (const auto& o : objs) {
    groups[o.encoded].push_back(o.name);
  }
  std::vector<api::object_record> out;
  for (auto& [encoded, names] : groups) {
    std::sort(names.begin(), names.end());
    api::object_record merged;
    merged.name = base::join_list(names);
    merged.encoded = std::string{encoded};
    out.push_back(std::move(merged));
  }
  return out;
}

bool node_failed(const base::node_result& n) {
  return n.failed();
}

void write_lines(json_writer& w, const std::vector<std::string>& lines) {
  w.begin_array();
  for (const auto& l : lines) {
    w.value(l);
  }
  w.end_array();
}

/// The per node object of format=detail and of streamed lines.
void write_detail(json_writer& w, const base::node_result& n) {
  w.key("rc");
  w.number(n.rc);
  w.key("stdout");
  write_lines(w, base::output_lines(n.out));
  w.key("stderr");
  write_lines(w, base::output_lines(n.err));
  if (!n.error.empty()) {
    w.key("error");
    w.value(n.error);
    w.key("message");
    w.value(n.message);
  }
  if (n.truncated) {
    w.key("truncated");
    w.value("true");
  }
}

using node_entries = std::vector<std::pair<std::string, const base::node_result*>>;

/// The nodes of `res` sorted by name; with `xcoll`, nodes whose `signature` is equal share one
/// entry under their names joined by commas.
node_entries gather(const api::api_result& res, bool xcoll,
                    const std::function<std::string(const base::node_result&)>& signature) {
  node_entries entries;
  std::map<std::string, size_t> same;
  for (const auto& n : res.nodes) {
    if (xcoll) {
      auto [it, fresh] = same.emplace(signature(n), entries.size());
      if (!fresh) {
        entries[it->second].first += "," + n.name;
        continue;
      }
    }
    entries.emplace_back(n.name, &n);
  }
  std::sort(entries.begin(), entries.end());
  return entries;
}

/// An action's value: the text, or (eventlog) the array of its lines, as xCAT pushes them.
void write_value(json_writer& w, const std::string& out, bool lines) {
  if (!lines) {
    w.value(out);
    return;
  }
  std::vector<std::string> each;
  for (size_t at = 0; at <= out.size() && !out.empty();) {
    auto nl = out.find('\n', at);
    each.push_back(out.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
    if (nl == std::string::npos) {
      break;
    }
    at = nl + 1;
  }
  write_lines(w, each);
}

/// rvitals' and rinv's lines as xCAT's actionout keeps them (xcat-compat.md §3): each
/// `desc: contents` line a key (a repeated name keeps its last value, as xCAT's hash does),
/// the lines without a description in the `Message` array.
void write_readings(json_writer& w, const std::string& out) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::vector<std::string> messages;
  auto trim = [](std::string_view t) {
    size_t b = t.find_first_not_of(" \t");
    size_t e = t.find_last_not_of(" \t");
    return b == std::string_view::npos ? std::string{} : std::string{t.substr(b, e - b + 1)};
  };
  for (const auto& line : base::output_lines(out)) {
    auto colon = line.find(':');
    std::string desc
      = colon == std::string::npos ? "" : trim(std::string_view{line}.substr(0, colon));
    if (desc.empty()) {
      auto text = trim(colon == std::string::npos ? std::string_view{line}
                                                  : std::string_view{line}.substr(colon + 1));
      if (!text.empty()) {
        messages.push_back(std::move(text));
      }
      continue;
    }
    auto value = trim(std::string_view{line}.substr(colon + 1));
    auto same = std::find_if(pairs.begin(), pairs.end(),
                             [&desc](const auto& p) { return p.first == desc; });
    if (same != pairs.end()) {
      same->second = std::move(value);
    } else {
      pairs.emplace_back(std::move(desc), std::move(value));
    }
  }
  for (const auto& [k, v] : pairs) {
    w.key(k);
    w.value(v);
  }
  if (!messages.empty()) {
    w.key("Message");
    write_lines(w, messages);
  }
}

/// xCAT's actionout for power, nextboot, beacon and eventlog (xcat-compat.md §1): 200 with
/// {"node":{"power":"on"}} (eventlog: {"node":{"eventlog":[lines]}}; rvitals and rinv: their
/// readings as pairs, `write_readings`); a failed node makes it 403 with every node's error
/// line, as xcatd does (format=detail keeps every node: {"node":{"rc":0,"power":"on"}} or its
/// error). PUT and DELETE answer nothing on success.
response_text render_action(const routed& req, const api::api_result& res) {
  bool pretty = req.render.pretty;
  auto op = req.call->op;
  const char* key = action_key(op);
  bool lines = op == api::operation::eventlog;
  bool readings = op == api::operation::vitals || op == api::operation::inventory;
  json_writer w{pretty};
  if (!req.call->detail) {
    std::vector<std::string> errors;
    for (const auto& n : res.nodes) {
      if (node_failed(n)) {
        errors.push_back(n.name + ": " + (n.message.empty() ? n.error : n.message));
      }
    }
    if (!errors.empty()) {
      w.begin_object();
      w.key("error");
      write_lines(w, errors);
      w.key("errorcode");
      w.value("1");
      w.end_object();
      return {403, finish(w, pretty)};
    }
    bool answers = !api::changes_state(*req.call); // a stat or a reading: what it found
    if (!answers) {
      return {200, {}}; // a PUT (DELETE): xCAT's CGI has no output handler for it
    }
  }
  // node -> {power: value}; xcoll merges nodes with the same answer
  auto entries = gather(res, req.render.xcoll, [](const base::node_result& n) {
    return std::to_string(n.rc) + '\n' + n.out + '\n' + n.error + '\n' + n.message;
  });
  w.begin_object();
  for (const auto& [name, n] : entries) {
    w.key(name);
    w.begin_object();
    if (req.call->detail) {
      w.key("rc");
      w.number(n->rc);
    }
    if (!n->failed() && readings) {
      write_readings(w, n->out);
    } else if (!n->failed()) {
      w.key(key);
      write_value(w, n->out, lines);
    } else {
      w.key("error");
      w.value(n->error);
      w.key("message");
      w.value(n->message);
    }
    w.end_object();
  }
  w.end_object();
  return {200, finish(w, pretty)};
}

/// xCAT's nodeshell answer (xcat-compat.md §3.5): 201 with each node's stdout lines, each kept
/// with its leading space (`" line"`); any failure makes the whole answer 403 with the error
/// lines (401 on "Permission denied").
response_text render_nodeshell(const routed& req, const api::api_result& res) {
  bool pretty = req.render.pretty;
  json_writer w{pretty};
  if (req.call->detail) {
    // node -> detail; xcoll merges nodes whose whole result is identical
    auto entries = gather(res, req.render.xcoll, [](const base::node_result& n) {
      json_writer sig;
      sig.begin_object();
      write_detail(sig, n);
      sig.end_object();
      return sig.str();
    });
    w.begin_object();
    for (const auto& [name, n] : entries) {
      w.key(name);
      w.begin_object();
      write_detail(w, *n);
      w.end_object();
    }
    w.end_object();
    return {201, finish(w, pretty)};
  }
  size_t failed = 0;
  std::vector<std::string> errors;
  for (const auto& n : res.nodes) {
    bool bad = node_failed(n);
    failed += bad ? 1 : 0;
    auto err_lines = base::output_lines(n.err);
    if (!bad && err_lines.empty()) {
      continue;
    }
    auto out_lines = base::output_lines(n.out);
    if (!out_lines.empty()) {
      errors.push_back(n.name + ": " + out_lines.front());
    }
    for (const auto& l : err_lines) {
      errors.push_back(n.name + ": " + l);
    }
    if (!n.message.empty()) {
      errors.push_back(n.name + ": " + n.message);
    }
  }
  if (failed > 0 || !errors.empty()) {
    for (const auto& e : errors) {
      if (e.find("Permission denied") != std::string::npos) {
        return {401, error_text("Authentication failure", "2", pretty)};
      }
    }
    if (errors.empty()) {
      errors.emplace_back("Failed with unknown reason.");
    }
    w.begin_object();
    w.key("error");
    write_lines(w, errors);
    w.key("errorcode");
    w.value(std::to_string(failed));
    w.end_object();
    return {403, finish(w, pretty)};
  }
  if (req.out == output::nodecopy) { // xCAT's infoout for xdcp: a flat array of its lines
    std::vector<std::string> lines;
    for (const auto& n : res.nodes) {
      for (auto& l : base::output_lines(n.out)) {
        lines.push_back(n.name + ": " + l);
      }
    }
    write_lines(w, lines);
    return {201, finish(w, pretty)};
  }
  // node -> [" line", ...]: lines of only blanks are dropped, as xCAT's infoout does
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  std::map<std::vector<std::string>, size_t> same;
  for (const auto& n : res.nodes) {
    std::vector<std::string> lines;
    for (auto& l : base::output_lines(n.out)) {
      if (l.find_first_not_of(" \t") != std::string::npos) {
        lines.push_back(" " + l);
      }
    }
    if (lines.empty()) {
      continue;
    }
    if (req.render.xcoll) {
      auto sorted = lines;
      std::sort(sorted.begin(), sorted.end());
      auto [it, fresh] = same.emplace(sorted, groups.size());
      if (!fresh) {
        groups[it->second].first += "," + n.name;
        continue;
      }
    }
    groups.emplace_back(n.name, std::move(lines));
  }
  std::sort(groups.begin(), groups.end());
  w.begin_object();
  for (const auto& [name, lines] : groups) {
    w.key(name);
    write_lines(w, lines);
  }
  w.end_object();
  return {201, finish(w, pretty)};
}

} // namespace

namespace {

/// A node's fields in a streamed line and in a job: nodeshell's detail, or with `value_key`
/// (power, nextboot, ...) the rc and value or error.
void write_node_fields(json_writer& w, const base::node_result& node, std::string_view value_key) {
  if (value_key.empty()) {
    write_detail(w, node);
    return;
  }
  // power, nextboot: {"node":"n1","rc":0,"power":"on"} or its error
  w.key("rc");
  w.number(node.rc);
  if (node.failed()) {
    w.key("error");
    w.value(node.error);
    w.key("message");
    w.value(node.message);
  } else if (value_key == "vitals" || value_key == "inventory") {
    // {"node":"n1","rc":0,"vitals":{"CPU Temp":"45 C (113 F)",...}}
    w.key(std::string{value_key});
    w.begin_object();
    write_readings(w, node.out);
    w.end_object();
  } else {
    w.key(std::string{value_key});
    write_value(w, node.out, value_key == "eventlog");
  }
  if (node.truncated) {
    w.key("truncated");
    w.value("true");
  }
}

/// A job: its record, counts and times, and (`with_nodes`) its nodes so far.
void write_job(json_writer& w, const api::job_info& job, bool with_nodes) {
  w.begin_object();
  w.key("id");
  w.value(job.id);
  write_job_summary(w, job);
  w.key("truncated");
  w.number(static_cast<long long>(job.truncated));
  w.key("created");
  w.number(job.created_ms);
  w.key("started");
  w.number(job.started_ms);
  w.key("ended");
  w.number(job.ended_ms);
  if (!job.messages.empty()) {
    w.key("messages");
    write_lines(w, job.messages);
  }
  if (with_nodes) {
    w.key("nodes");
    w.begin_array();
    for (const auto& n : job.nodes) {
      w.begin_object();
      w.key("node");
      w.value(n.name);
      write_node_fields(w, n, action_key(job.op));
      w.end_object();
    }
    w.end_array();
  }
  w.end_object();
}

} // namespace

std::string stream_line(const base::node_result& node, std::string_view value_key) {
  json_writer w;
  w.begin_object();
  w.key("node");
  w.value(node.name);
  write_node_fields(w, node, value_key);
  w.end_object();
  return w.str() + "\n";
}

const char* action_key(api::operation op) {
  return api::traits(op).result_key.data(); // (the row's literal: NUL-terminated)
}

std::string stream_summary(const api::api_result& res) {
  json_writer w;
  w.begin_object();
  w.key("done");
  w.value("true");
  if (res.ok()) {
    w.key("nodes");
    w.number(static_cast<long long>(res.nodes.size()));
    w.key("failed");
    w.number(
      static_cast<long long>(std::count_if(res.nodes.begin(), res.nodes.end(), node_failed)));
  } else {
    w.key("error");
    write_lines(w, res.messages);
  }
  w.end_object();
  return w.str() + "\n";
}

listing_writer::listing_writer(const routed& req)
    : w_(req.render.pretty), pretty_(req.render.pretty), ver1_(req.render.ver1) {
  // nop
}

std::string listing_writer::page(const std::vector<api::object_record>& objects) {
  if (!begun_) {
    begun_ = true;
    w_.begin_object();
  }
  // pages are alike: room for one like the last, not a regrowth (and its copies) per page
  w_.reserve(last_page_ + last_page_ / 8);
  for (const auto& o : objects) {
    if (shows_attributes(o.encoded, ver1_)) {
      w_.key(o.name);
      write_attrs(w_, o.encoded, ver1_);
    }
  }
  auto text = w_.take();
  last_page_ = text.size();
  return text;
}

std::string listing_writer::end() {
  if (!begun_) {
    return {};
  }
  w_.end_object();
  return finish(w_, pretty_);
}

std::string error_text(const std::string& message, const std::string& code, bool pretty) {
  json_writer w{pretty};
  w.begin_object();
  w.key("error");
  w.value(message);
  w.key("errorcode");
  w.value(code);
  w.end_object();
  return finish(w, pretty);
}

response_text render(const routed& req, const api::api_result& res) {
  bool pretty = req.render.pretty;
  auto first = [&](const char* fallback) {
    return res.messages.empty() ? std::string{fallback} : res.messages.front();
  };
  if (res.ok() && res.accepted) {
    // async=1: the job runs on; the session sets Location /clusterws/jobs/{id}
    json_writer w{pretty};
    w.begin_object();
    w.key("job");
    w.value(res.job_id);
    w.end_object();
    return {202, finish(w, pretty)};
  }
  switch (res.error) {
    case errc::none: break;
    case errc::unauthorized: return {401, error_text("Authentication failure", "2", pretty)};
    case errc::bad_request: return {400, error_text(first("Bad request."), "2", pretty)};
    case errc::not_found: return {404, error_text(first("Unsupported resource."), "2", pretty)};
    case errc::not_allowed: return {405, error_text(first("Method not allowed."), "2", pretty)};
    case errc::body_too_large: return {413, error_text(first("Body too large."), "2", pretty)};
    case errc::header_too_large: return {431, error_text(first("Header too large."), "2", pretty)};
    case errc::not_implemented: return {501, error_text(first("Not implemented."), "2", pretty)};
    case errc::forbidden: return {403, error_text(first("Forbidden."), "2", pretty)};
    case errc::missing_data: {
      // xCAT gives this one errorcode as a number
      json_writer w{pretty};
      w.begin_object();
      w.key("error");
      w.value(first("Lack of operation data."));
      w.key("errorcode");
      w.number(3);
      w.end_object();
      return {400, finish(w, pretty)};
    }
    case errc::unavailable:
    case errc::stale: // never reaches a client: the dispatcher authorizes again
      return {503, error_text(first("Service unavailable."), "2", pretty)};
    case errc::failed: {
      // xCAT's errorcode of a failed command is "1"
      json_writer w{pretty};
      w.begin_object();
      w.key("error");
      write_lines(w, res.messages);
      w.key("errorcode");
      w.value("1");
      w.end_object();
      return {403, finish(w, pretty)};
    }
  }
  unsigned status = req.post ? 201 : 200;
  json_writer w{pretty};
  switch (req.out) {
    case output::none: return {status, {}};
    case output::text: return {status, res.text, "text/plain"};
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
      std::vector<api::object_record> merged;
      if (req.render.xcoll) {
        merged = collate(res.objects);
      }
      const auto& objs = req.render.xcoll ? merged : res.objects;
      // sort pointers, not the (possibly 100,000) objects
      std::vector<const api::object_record*> order;
      order.reserve(objs.size());
      for (const auto& o : objs) {
        if (shows_attributes(o.encoded, req.render.ver1)) {
          order.push_back(&o);
        }
      }
      if (order.empty()) {
        return {status, {}}; // xCAT: no attribute lines, no body
      }
      std::sort(order.begin(), order.end(), [](auto a, auto b) { return a->name < b->name; });
      size_t estimate = 16;
      for (const auto* o : order) {
        estimate += o->name.size() + o->encoded.size() * 5 / 4 + 8;
      }
      w.reserve(pretty ? estimate * 2 : estimate);
      w.begin_object();
      for (const auto* o : order) {
        w.key(o->name);
        write_attrs(w, o->encoded, req.render.ver1);
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
    case output::nodeshell:
    case output::nodecopy: return render_nodeshell(req, res);
    case output::action: return render_action(req, res);
    case output::nodestat:
      // actionout (xcat-compat.md §3): {"node":{"nodestat":"sshd"}}; 200, as xCAT's GET
      w.begin_object();
      for (const auto& n : res.nodes) {
        w.key(n.name);
        w.begin_object();
        w.key("nodestat");
        w.value(n.out.empty() ? n.message : n.out);
        w.end_object();
      }
      w.end_object();
      return {200, finish(w, pretty)};
    case output::tables: {
      w.begin_object();
      for (const auto& t : req.call->tables) {
        w.key(t);
        w.begin_array();
        for (const auto& o : res.objects) {
          if (o.name == t) {
            write_attrs(w, o.encoded, false);
          }
        }
        w.end_array();
      }
      w.end_object();
      return {status, finish(w, pretty)};
    }
    case output::metrics: return {status, {}}; // (written by the session: http/metrics_page)
    case output::events: return {status, {}};  // (streamed by the session: http/event_stream)
    case output::console: return {status, {}}; // (http/ws_console, after the upgrade)
    case output::session: return {status, {}}; // (written by the session: answer_session)
    case output::openapi: return {status, std::string{openapi_text()}, "application/yaml"};
    case output::jobs: {
      w.begin_object();
      w.key("jobs");
      w.begin_array();
      if (res.jobs) {
        for (const auto& j : *res.jobs) {
          write_job(w, j, false);
        }
      }
      w.end_array();
      w.end_object();
      return {200, finish(w, pretty)};
    }
    case output::job: {
      if (!res.jobs || res.jobs->empty()) {
        return {404, error_text("No such job.", "2", pretty)};
      }
      write_job(w, res.jobs->front(), req.call->op == api::operation::job_show);
      return {200, finish(w, pretty)};
    }
    case output::nodetable: {
      w.begin_object();
      w.key("total");
      w.number(static_cast<long long>(res.total));
      w.key("offset");
      w.number(static_cast<long long>(res.offset));
      w.key("rows");
      w.begin_array();
      for (const auto& o : res.objects) {
        w.begin_object();
        w.key("node");
        w.value(o.name);
        store::record_view rec{o.encoded};
        for (const auto& a : req.call->attrs) {
          w.key(a);
          w.value(std::string{rec.find(a).value_or("")});
        }
        w.end_object();
      }
      w.end_array();
      w.end_object();
      return {200, finish(w, pretty)};
    }
    case output::per_node:
      w.begin_object();
      for (const auto& n : res.nodes) {
        w.key(n.name);
        w.begin_object();
        w.key("result");
        w.value(n.message);
        w.end_object();
      }
      w.end_object();
      return {status, finish(w, pretty)};
  }
  return {status, {}};
}

} // namespace cws::http
