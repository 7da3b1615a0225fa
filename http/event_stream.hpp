#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/job.hpp"
#include "http/response_stream.hpp"
#include "store/change_feed.hpp"

namespace cws::http {

/// Which changes an event stream sends (`GET /clusterws/events?types=...&noderange=...`).
struct event_filter {
  /// The object types sent; empty: every type the caller may read.
  std::vector<store::object_type> types;
  /// With `nodes_only`: the node names sent (sorted; the noderange as it expanded when the
  /// stream began). Changes of other types pass as `types` says.
  std::vector<std::string> nodes;
  bool nodes_only = false;
  /// The caller may see the users' names (root): `passwd` changes are sent only then.
  bool sees_users = false;
  /// Object changes are sent (`types=` naming only job or power: not).
  bool objects = true;
  /// Job and power events are sent (`types=` without them: not).
  bool jobs = true;
  bool power = true;
  /// Console attach and detach events are sent (`types=` without `console`: not).
  bool consoles = true;
  /// The caller: job events of that user's jobs only (root: all).
  std::string user;
};

/// What `GET /clusterws/events` asked for.
struct event_request {
  event_filter filter;
  /// The last event the client saw (Last-Event-ID, or `after=`); none: from now on.
  std::optional<uint64_t> after;
};

/// Reads `types=` (a comma list of node, group, network, osimage, policy, site, passwd, job,
/// power, console) into `f`; the error message for an unknown name, nullopt when all are known.
std::optional<std::string> parse_event_types(std::string_view list, event_filter& f);

/// What `f` lets through of one change set, as JSON:
/// {"seq":N,"changes":[{"type":..,"name":..,"change":..,"attributes":[..]}]}; "" when nothing
/// passes. The `data` of both the SSE and the WebSocket event.
std::string changes_json(const store::change_set& set, const event_filter& f);

/// The `data` of a reset event: {"seq":N,"reason":".."} (no `seq` for a client cut off).
std::string reset_json(std::optional<uint64_t> seq, std::string_view why);

/// One change set as a Server-Sent Event (`id: <seq>`, `event: changes`, one `data:` line of
/// JSON: {"seq":N,"changes":[{"type":..,"name":..,"change":..,"attributes":[..]}]}), holding
/// what `f` lets through; "" when nothing passes.
std::string sse_changes(const store::change_set& set, const event_filter& f);

/// One change set rendered for the streams of one io thread (http/event_hub.hpp): once per
/// form (SSE chunk, WebSocket frame) and filter, so that streams asking the same thing share
/// one text (bench/events.sh: 100 streams of one filter). A filter naming nodes is its
/// stream's alone: rendered for it only.
class change_texts {
 public:
  explicit change_texts(std::shared_ptr<const store::change_set> set) : set_(std::move(set)) {
    // nop
  }

  /// sse_changes as one chunk of a chunked answer ("" when nothing passes). Each text is
  /// valid until the next call.
  const std::string& sse_chunk(const event_filter& f);
  /// The same text, shared by the streams of one filter: queued as it is, not copied
  /// (null when nothing passes).
  shared_text sse_text(const event_filter& f);
  /// The WebSocket frame ws_event(seq, "changes", changes_json) ("" when nothing passes).
  const std::string& ws_frame(const event_filter& f);

  const store::change_set& set() const noexcept {
    return *set_;
  }

 private:
  enum class form : uint8_t { sse, ws };
  struct text {
    form kind;
    const event_filter* filter;
    shared_text value; // (null: nothing passes)
  };
  const shared_text& render(form kind, const event_filter& f);

  std::shared_ptr<const store::change_set> set_;
  std::vector<text> texts_;
};

/// The event that tells a client it missed changes and must read the state again: the log no
/// longer holds them (the stream goes on after `seq`, its id), or the client did not keep up
/// (no `seq`: no id, so a client that reconnects resumes after the last event it received).
std::string sse_reset(std::optional<uint64_t> seq, std::string_view why);

class json_writer;

/// A job's "user", "operation", "state", "targets", "finished" and "failed", as keys of the
/// object `w` is in: what a job event and the answer of GET /jobs/{id} share.
void write_job_summary(json_writer& w, const api::job_info& job);

/// A job event's data {"job":id,"event":created|progress|ended,"user","operation","state",
/// "targets","finished","failed"}, or "" when `f` does not let it through (another user's
/// job). Job and power events have no id: they are live only, never replayed.
std::string job_json(const api::job_info& job, std::string_view what, const event_filter& f);
/// The same as a Server-Sent Event (`event: job`).
std::string sse_job(const api::job_info& job, std::string_view what, const event_filter& f);

/// A console event's data {"node":..,"console":"attached"|"detached","user":..,"mode":..},
/// or "" when `f` does not let it through (the caller's own, root all).
std::string console_json(const std::string& node, const std::string& what, const std::string& user,
                         const std::string& mode, const event_filter& f);

/// A power event's data {"node":..,"power":"on"|"off"}, or "" when `f` does not let it
/// through (not a node of the stream's noderange).
std::string power_json(const std::string& node, const std::string& state, const event_filter& f);
/// The same as a Server-Sent Event (`event: power`).
std::string sse_power(const std::string& node, const std::string& state, const event_filter& f);

/// A service node joined or left the head (`what`; `why` it left): sent only to a caller who
/// sees the users' names (root) on a stream not narrowed to nodes or object types.
std::string servicenode_json(const std::string& name, const std::string& what,
                             const std::string& why, const event_filter& f);
std::string sse_servicenode(const std::string& name, const std::string& what,
                            const std::string& why, const event_filter& f);

/// One event as a WebSocket text frame: {"id":N,"event":"changes","data":{..}}, the SSE
/// event's id, event and data as JSON (`data` is JSON text; no `id` when `id` is none).
std::string ws_event(std::optional<uint64_t> id, std::string_view event, std::string_view data);

/// The filter of a stream policy allowed, taken from `req`: users' names for root only, and
/// with a noderange the nodes it expanded to (`names`, the answer of the authorizing call).
event_filter allowed_filter(event_request& req, const std::string& user,
                            const std::vector<std::string>& names);

/// A comment line that keeps idle proxies and clients from closing the stream.
std::string_view sse_heartbeat();

} // namespace cws::http
