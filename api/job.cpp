#include "api/job.hpp"

#include "api/call.hpp"
#include "base/text.hpp"
#include "store/codec.hpp"

namespace cws::api {

namespace {

constexpr const char* state_names[]
  = {"queued", "running", "done", "cancelled", "failed", "interrupted"};

bool parse_number(const store::attr_map& m, const char* key, uint64_t& out) {
  auto it = m.find(key);
  unsigned long long v = 0;
  if (it == m.end() || !base::parse_unsigned(it->second, v)) {
    return false;
  }
  out = v;
  return true;
}

} // namespace

const char* job_state_name(job_state s) {
  auto i = static_cast<size_t>(s);
  return i < std::size(state_names) ? state_names[i] : "failed";
}

bool job_ended(job_state s) {
  return s != job_state::queued && s != job_state::running;
}

const char* operation_name(operation op) {
  switch (op) {
    case operation::nodeshell: return "nodeshell";
    case operation::nodecopy: return "nodecopy";
    case operation::power: return "power";
    case operation::nextboot: return "nextboot";
    case operation::eventlog: return "eventlog";
    case operation::beacon: return "beacon";
    case operation::vitals: return "vitals";
    case operation::inventory: return "inventory";
    case operation::nodestat: return "nodestat";
    default: return "";
  }
}

std::string encode_job_record(const job_info& job) {
  store::attr_map m;
  m["id"] = job.id;
  m["user"] = job.user;
  m["operation"] = job.operation;
  m["op"] = std::to_string(static_cast<unsigned>(job.op));
  m["state"] = job_state_name(job.state);
  m["targets"] = std::to_string(job.targets);
  m["created"] = std::to_string(job.created_ms);
  m["started"] = std::to_string(job.started_ms);
  m["ended"] = std::to_string(job.ended_ms);
  // the counts of a job that ended, so a restart still tells how it went (its nodes' output
  // is never kept)
  m["finished"] = std::to_string(job.finished);
  m["failed"] = std::to_string(job.failed);
  m["truncated"] = std::to_string(job.truncated);
  return store::encode(m);
}

bool decode_job_record(std::string_view text, job_info& out) {
  store::attr_map m;
  try {
    m = store::record_view{text}.to_map();
  } catch (const std::exception&) {
    return false;
  }
  job_info j;
  j.id = m["id"];
  j.user = m["user"];
  j.operation = m["operation"];
  uint64_t op = 0;
  uint64_t targets = 0;
  uint64_t created = 0;
  uint64_t started = 0;
  uint64_t ended = 0;
  if (j.id.empty() || j.user.empty() || !parse_number(m, "op", op) || op > 255
      || !parse_number(m, "targets", targets) || !parse_number(m, "created", created)
      || !parse_number(m, "started", started) || !parse_number(m, "ended", ended)) {
    return false;
  }
  bool known = false;
  for (size_t i = 0; i < std::size(state_names); ++i) {
    if (m["state"] == state_names[i]) {
      j.state = static_cast<job_state>(i);
      known = true;
    }
  }
  if (!known) {
    return false;
  }
  j.op = static_cast<operation>(op);
  j.targets = targets;
  j.created_ms = static_cast<int64_t>(created);
  j.started_ms = static_cast<int64_t>(started);
  j.ended_ms = static_cast<int64_t>(ended);
  // (absent from records written before they were kept: 0)
  uint64_t n = 0;
  j.finished = parse_number(m, "finished", n) && n <= targets ? n : 0;
  j.failed = parse_number(m, "failed", n) && n <= j.finished ? n : 0;
  j.truncated = parse_number(m, "truncated", n) && n <= j.finished ? n : 0;
  out = std::move(j);
  return true;
}

} // namespace cws::api
