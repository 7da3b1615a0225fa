#include "http/event_stream.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "http/json_writer.hpp"
#include "http/response_stream.hpp"

namespace cws::http {

namespace {

using store::object_type;

constexpr object_type streamed[]
  = {object_type::node,   object_type::group, object_type::network, object_type::osimage,
     object_type::policy, object_type::site,  object_type::passwd};

std::string_view stream_type_name(object_type t) {
  return t == object_type::passwd ? "passwd" : store::type_name(t);
}

bool passes(const store::logged_change& c, const event_filter& f) {
  if (!f.objects) {
    return false;
  }
  if (c.type == object_type::passwd && !f.sees_users) {
    return false;
  }
  if (!f.types.empty() && std::find(f.types.begin(), f.types.end(), c.type) == f.types.end()) {
    return false;
  }
  return c.type != object_type::node || !f.nodes_only
         || std::binary_search(f.nodes.begin(), f.nodes.end(), c.name);
}

} // namespace

std::optional<std::string> parse_event_types(std::string_view list, event_filter& f) {
  f.jobs = false;
  f.power = false;
  f.consoles = false;
  bool objects = false;
  for (const auto& name : base::split_list(std::string{list})) {
    if (name == "job" || name == "power" || name == "console") {
      (name == "job" ? f.jobs : name == "power" ? f.power : f.consoles) = true;
      continue;
    }
    objects = true;
    auto it = std::find_if(std::begin(streamed), std::end(streamed),
                           [&](object_type t) { return stream_type_name(t) == name; });
    if (it == std::end(streamed)) {
      return "Unknown event type '" + name
             + "': use node, group, network, osimage, policy, site, passwd, job, power or "
               "console.";
    }
    f.types.push_back(*it);
  }
  f.objects = objects;
  return std::nullopt;
}

std::string changes_json(const store::change_set& set, const event_filter& f) {
  json_writer w;
  w.begin_object();
  w.key("seq");
  w.number(static_cast<long long>(set.seq));
  w.key("changes");
  w.begin_array();
  bool any = false;
  for (const auto& c : set.changes) {
    if (!passes(c, f)) {
      continue;
    }
    any = true;
    w.begin_object();
    w.key("type");
    w.value(stream_type_name(c.type));
    w.key("name");
    w.value(c.name);
    w.key("change");
    w.value(store::change_kind_name(c.kind));
    w.key("attributes");
    w.begin_array();
    for (const auto& a : c.attrs) {
      w.value(a);
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return any ? w.str() : std::string{};
}

std::string sse_changes(const store::change_set& set, const event_filter& f) {
  auto data = changes_json(set, f);
  if (data.empty()) {
    return {};
  }
  // JSON text has no line break (json_writer escapes them), so one data line holds it
  return "id: " + std::to_string(set.seq) + "\nevent: changes\ndata: " + data + "\n\n";
}

namespace {

/// Whether `a` and `b` let the same changes through (what changes_json reads of them).
bool same_changes(const event_filter& a, const event_filter& b) {
  return &a == &b
         || (!a.nodes_only && !b.nodes_only && a.types == b.types && a.sees_users == b.sees_users
             && a.objects == b.objects);
}

/// Distinct filters of one thread's streams that share texts; past that many, a set is
/// rendered for each stream (no scan of a long list per stream).
constexpr size_t max_shared_texts = 16;

} // namespace

const shared_text& change_texts::render(form kind, const event_filter& f) {
  for (const auto& t : texts_) {
    if (t.kind == kind && same_changes(*t.filter, f)) {
      return t.value;
    }
  }
  std::string value;
  if (kind == form::sse) {
    value = sse_changes(*set_, f);
    if (!value.empty()) {
      value = chunk(value);
    }
  } else {
    auto data = changes_json(*set_, f);
    if (!data.empty()) {
      value = ws_event(set_->seq, "changes", data);
    }
  }
  if (texts_.size() == max_shared_texts) {
    texts_.pop_back(); // the last one is the least shared: replaced
  }
  texts_.push_back(
    {kind, &f, value.empty() ? nullptr : std::make_shared<const std::string>(std::move(value))});
  return texts_.back().value;
}

namespace {

const std::string& text_of(const shared_text& t) {
  static const std::string none;
  return t ? *t : none;
}

} // namespace

const std::string& change_texts::sse_chunk(const event_filter& f) {
  return text_of(render(form::sse, f));
}

shared_text change_texts::sse_text(const event_filter& f) {
  return render(form::sse, f);
}

const std::string& change_texts::ws_frame(const event_filter& f) {
  return text_of(render(form::ws, f));
}

void write_job_summary(json_writer& w, const api::job_info& job) {
  w.key("user");
  w.value(job.user);
  w.key("operation");
  w.value(job.operation);
  w.key("state");
  w.value(api::job_state_name(job.state));
  w.key("targets");
  w.number(static_cast<long long>(job.targets));
  w.key("finished");
  w.number(static_cast<long long>(job.finished));
  w.key("failed");
  w.number(static_cast<long long>(job.failed));
}

std::string job_json(const api::job_info& job, std::string_view what, const event_filter& f) {
  if (!f.jobs || (f.user != "root" && f.user != job.user)) {
    return {};
  }
  json_writer w;
  w.begin_object();
  w.key("job");
  w.value(job.id);
  w.key("event");
  w.value(what);
  write_job_summary(w, job);
  w.end_object();
  return w.str();
}

std::string sse_job(const api::job_info& job, std::string_view what, const event_filter& f) {
  auto data = job_json(job, what, f);
  return data.empty() ? data : "event: job\ndata: " + data + "\n\n";
}

std::string console_json(const std::string& node, const std::string& what, const std::string& user,
                         const std::string& mode, const event_filter& f) {
  if (!f.consoles || (f.user != "root" && f.user != user)
      || (f.nodes_only && !std::binary_search(f.nodes.begin(), f.nodes.end(), node))) {
    return {};
  }
  json_writer w;
  w.begin_object();
  w.key("node");
  w.value(node);
  w.key("console");
  w.value(what);
  w.key("user");
  w.value(user);
  w.key("mode");
  w.value(mode);
  w.end_object();
  return w.str();
}

std::string power_json(const std::string& node, const std::string& state, const event_filter& f) {
  if (!f.power || (f.nodes_only && !std::binary_search(f.nodes.begin(), f.nodes.end(), node))) {
    return {};
  }
  json_writer w;
  w.begin_object();
  w.key("node");
  w.value(node);
  w.key("power");
  w.value(state);
  w.end_object();
  return w.str();
}

std::string sse_power(const std::string& node, const std::string& state, const event_filter& f) {
  auto data = power_json(node, state, f);
  return data.empty() ? data : "event: power\ndata: " + data + "\n\n";
}

std::string servicenode_json(const std::string& name, const std::string& what,
                             const std::string& why, const event_filter& f) {
  if (!f.sees_users || f.nodes_only || !f.types.empty()) {
    return {};
  }
  json_writer w;
  w.begin_object();
  w.key("name");
  w.value(name);
  w.key("event");
  w.value(what);
  if (!why.empty()) {
    w.key("reason");
    w.value(why);
  }
  w.end_object();
  return w.str();
}

std::string sse_servicenode(const std::string& name, const std::string& what,
                            const std::string& why, const event_filter& f) {
  auto data = servicenode_json(name, what, why, f);
  return data.empty() ? data : "event: servicenode\ndata: " + data + "\n\n";
}

std::string reset_json(std::optional<uint64_t> seq, std::string_view why) {
  json_writer w;
  w.begin_object();
  if (seq) {
    w.key("seq");
    w.number(static_cast<long long>(*seq));
  }
  w.key("reason");
  w.value(why);
  w.end_object();
  return w.str();
}

std::string sse_reset(std::optional<uint64_t> seq, std::string_view why) {
  auto id = seq ? "id: " + std::to_string(*seq) + "\n" : std::string{};
  return id + "event: reset\ndata: " + reset_json(seq, why) + "\n\n";
}

std::string ws_event(std::optional<uint64_t> id, std::string_view event, std::string_view data) {
  // data is JSON text already: written as it is
  std::string out = "{";
  if (id) {
    out += "\"id\":" + std::to_string(*id) + ",";
  }
  out += "\"event\":\"";
  out += event;
  out += "\",\"data\":";
  out += data;
  out += "}";
  return out;
}

event_filter allowed_filter(event_request& req, const std::string& user,
                            const std::vector<std::string>& names) {
  auto f = std::move(req.filter);
  f.sees_users = user == "root";
  f.user = user; // job events of that user's jobs only
  if (f.nodes_only) {
    f.nodes = names; // the noderange as it expanded now
    std::sort(f.nodes.begin(), f.nodes.end());
  }
  return f;
}

std::string_view sse_heartbeat() {
  return ": keep-alive\n\n";
}

} // namespace cws::http
