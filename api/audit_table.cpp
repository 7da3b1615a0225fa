#include "api/audit_table.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cws::api {

namespace {

/// The top-level string and number members of one JSON object line (nested objects skipped);
/// false if the line is not one.
bool flat_object(std::string_view s, std::map<std::string, std::string>& out) {
  size_t i = 0;
  auto ws = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) {
      ++i;
    }
  };
  auto string = [&](std::string& v) {
    if (i >= s.size() || s[i] != '"') {
      return false;
    }
    for (++i; i < s.size() && s[i] != '"'; ++i) {
      if (s[i] != '\\') {
        v += s[i];
        continue;
      }
      if (++i >= s.size()) {
        return false;
      }
      switch (s[i]) {
        case 'n': v += '\n'; break;
        case 't': v += '\t'; break;
        case 'r': v += '\r'; break;
        case 'b': v += '\b'; break;
        case 'f': v += '\f'; break;
        case 'u': {
          if (i + 4 >= s.size()) {
            return false;
          }
          auto code = std::strtoul(std::string{s.substr(i + 1, 4)}.c_str(), nullptr, 16);
          v += code < 0x80 ? static_cast<char>(code) : '?';
          i += 4;
          break;
        }
        default: v += s[i];
      }
    }
    if (i >= s.size()) {
      return false;
    }
    ++i;
    return true;
  };
  ws();
  if (i >= s.size() || s[i] != '{') {
    return false;
  }
  ++i;
  for (;;) {
    ws();
    if (i < s.size() && s[i] == '}') {
      return true;
    }
    std::string key;
    if (!string(key)) {
      return false;
    }
    ws();
    if (i >= s.size() || s[i] != ':') {
      return false;
    }
    ++i;
    ws();
    if (i >= s.size()) {
      return false;
    }
    if (s[i] == '"') {
      std::string v;
      if (!string(v)) {
        return false;
      }
      out[key] = std::move(v);
    } else if (s[i] == '{' || s[i] == '[') {
      int depth = 0;
      bool in_string = false;
      for (; i < s.size(); ++i) {
        char c = s[i];
        if (in_string) {
          if (c == '\\') {
            ++i;
          } else if (c == '"') {
            in_string = false;
          }
        } else if (c == '"') {
          in_string = true;
        } else if (c == '{' || c == '[') {
          ++depth;
        } else if ((c == '}' || c == ']') && --depth == 0) {
          ++i;
          break;
        }
      }
      if (depth != 0) {
        return false;
      }
    } else {
      auto end = s.find_first_of(",}", i);
      if (end == std::string_view::npos) {
        return false;
      }
      auto v = std::string{s.substr(i, end - i)};
      while (!v.empty() && v.back() == ' ') {
        v.pop_back();
      }
      out[key] = v;
      i = end;
    }
    ws();
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == '}') {
      return true;
    }
    return false;
  }
}

std::time_t parse_time(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return end != nullptr && *end == '\0' ? timegm(&tm) : -1;
}

/// The file at `path`, opened and locked as clusterwsd locks it (flock, exclusive), its inode
/// still the one the path names (a rotation between the open and the lock is seen and the
/// new file taken). fd -1: there is no file.
struct locked_file {
  int fd = -1;

  explicit locked_file(const std::filesystem::path& path) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
      if (fd < 0) {
        if (errno == ENOENT) {
          return;
        }
        throw std::runtime_error(path.string() + ": " + std::strerror(errno));
      }
      while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
      struct stat held {};
      struct stat named {};
      if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0
          && held.st_ino == named.st_ino && held.st_dev == named.st_dev) {
        return;
      }
      ::close(fd); // moved aside meanwhile: the path names a new file
      fd = -1;
    }
    throw std::runtime_error(path.string() + ": keeps being replaced");
  }

  ~locked_file() {
    if (fd >= 0) {
      ::close(fd); // the lock goes with it
    }
  }

  locked_file(const locked_file&) = delete;
  locked_file& operator=(const locked_file&) = delete;

  std::string read_all(const std::filesystem::path& path) const {
    std::string text;
    char buf[65536];
    for (off_t off = 0;;) {
      auto n = ::pread(fd, buf, sizeof buf, off);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n < 0) {
        throw std::runtime_error(path.string() + ": " + std::strerror(errno));
      }
      if (n == 0) {
        return text;
      }
      text.append(buf, static_cast<size_t>(n));
      off += n;
    }
  }
};

std::filesystem::path rotated(const std::filesystem::path& path) {
  return path.string() + ".1";
}

/// Keeps the lines of `text` whose row `keep` accepts: moved to the front of the file in
/// place, the rest cut off. A crash half way leaves lines twice, never loses a kept one: the
/// kept lines are the newest, moved towards the start over lines already read.
void rewrite(const locked_file& f, const std::filesystem::path& path, const std::string& text,
             const std::function<bool(const audit_row&)>& keep, prune_result& result) {
  std::string kept;
  size_t start = 0;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    auto end = nl == std::string::npos ? text.size() : nl + 1;
    auto line = text.substr(start, end - start);
    auto rows = audit_rows(line);
    if (!rows.empty() && !keep(rows.front())) {
      result.removed.push_back(std::move(rows.front()));
    } else {
      kept += line;
    }
    start = end;
  }
  if (kept.size() == text.size()) {
    return;
  }
  for (size_t done = 0; done < kept.size();) {
    auto n = ::pwrite(f.fd, kept.data() + done, kept.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      throw std::runtime_error(path.string() + ": " + std::strerror(n < 0 ? errno : ENOSPC));
    }
    done += static_cast<size_t>(n);
  }
  if (::ftruncate(f.fd, static_cast<off_t>(kept.size())) != 0 || ::fsync(f.fd) != 0) {
    throw std::runtime_error(path.string() + ": " + std::strerror(errno));
  }
}

} // namespace

const std::vector<std::string>& auditlog_columns() {
  static const std::vector<std::string> columns{
    "recid",     "audittime", "userid", "clientname", "clienttype", "command",
    "noderange", "args",      "status", "comments",   "disable"};
  return columns;
}

const std::vector<std::string>& eventlog_columns() {
  static const std::vector<std::string> columns{
    "recid",     "eventtime", "eventtype", "monitor", "monnode", "node",     "application",
    "component", "id",        "severity",  "message", "rawdata", "comments", "disable"};
  return columns;
}

std::vector<audit_row> audit_rows(const std::string& text) {
  std::vector<audit_row> out;
  size_t start = 0;
  while (start < text.size()) {
    auto nl = text.find('\n', start);
    auto line = std::string_view{text}.substr(start, nl == std::string::npos ? std::string::npos
                                                                             : nl - start);
    start = nl == std::string::npos ? text.size() : nl + 1;
    std::map<std::string, std::string> f;
    if (!flat_object(line, f)) {
      continue;
    }
    auto get = [&](const char* k) -> std::optional<std::string> {
      auto it = f.find(k);
      if (it == f.end() || it->second.empty()) {
        return std::nullopt;
      }
      return it->second;
    };
    audit_row r;
    r.recid = std::strtoll(f["recid"].c_str(), nullptr, 10);
    r.when = parse_time(f["time"]);
    r.row.resize(auditlog_columns().size());
    r.row[0] = f["recid"].empty() ? std::optional<std::string>{} : f["recid"];
    r.row[1] = get("time");
    r.row[2] = get("user");
    r.row[3] = get("client");
    r.row[4] = std::string{"rest"}; // HTTPS and the local socket: both are REST requests
    if (auto event = get("event")) {
      // a summary of refusals without credentials, or the record of lines not written
      r.row[5] = event;
      r.row[7] = "count=" + f["count"];
      r.row[8] = std::string{*event == "refused without valid credentials" ? "Denied" : ""};
    } else {
      auto method = f["method"];
      auto path = f["path"];
      r.row[5] = method.empty() ? path : method + " " + path;
      r.row[6] = get("noderange");
      r.row[7] = get("command");
      auto status = f["status"];
      r.row[8] = std::string{status == "401" || status == "403" ? "Denied" : "Allowed"};
      if (!status.empty()) {
        r.row[9] = "HTTP " + status;
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<audit_row> read_audit_log(const std::filesystem::path& path) {
  locked_file current{path}; // clusterwsd cannot move it aside while this reads both
  std::vector<audit_row> out;
  {
    locked_file old{rotated(path)};
    if (old.fd >= 0) {
      out = audit_rows(old.read_all(rotated(path)));
    }
  }
  if (current.fd >= 0) {
    auto rows = audit_rows(current.read_all(path));
    out.insert(out.end(), std::make_move_iterator(rows.begin()),
               std::make_move_iterator(rows.end()));
  }
  return out;
}

prune_result prune_audit_log(const std::filesystem::path& path, const prune_request& req,
                             std::time_t now) {
  prune_result result;
  locked_file current{path};
  locked_file old{rotated(path)};
  std::string old_text = old.fd >= 0 ? old.read_all(rotated(path)) : std::string{};
  std::string text = current.fd >= 0 ? current.read_all(path) : std::string{};
  auto rows = audit_rows(old_text);
  auto newer = audit_rows(text);
  rows.insert(rows.end(), newer.begin(), newer.end());
  long long min = 0;
  long long max = 0;
  for (const auto& r : rows) {
    min = min == 0 ? r.recid : std::min(min, r.recid);
    max = std::max(max, r.recid);
  }
  long long below = 0; // rows with a recid below this go
  switch (req.what) {
    case prune_request::kind::all: below = max + 1; break;
    case prune_request::kind::number: below = min + req.value; break;
    case prune_request::kind::recid: below = req.value; break;
    case prune_request::kind::percent:
      below = min + static_cast<long long>((max - min + 1) * req.value / 100);
      break;
    case prune_request::kind::days: below = 0; break;
  }
  if (rows.empty()
      && (req.what == prune_request::kind::number || req.what == prune_request::kind::percent)) {
    result.empty = true;
    return result;
  }
  std::function<bool(const audit_row&)> keep = [&](const audit_row& r) {
    if (req.what == prune_request::kind::days) {
      return r.when < 0 || r.when >= now - req.value * 86400;
    }
    return r.recid >= below;
  };
  if (old.fd >= 0) {
    rewrite(old, rotated(path), old_text, keep, result);
  }
  if (current.fd >= 0) {
    rewrite(current, path, text, keep, result);
  }
  return result;
}

namespace {
std::mutex path_mu;
std::filesystem::path configured_path;
} // namespace

void set_audit_log_path(const std::filesystem::path& path) {
  std::lock_guard<std::mutex> guard{path_mu};
  configured_path = path;
}

std::filesystem::path audit_log_path() {
  std::lock_guard<std::mutex> guard{path_mu};
  return configured_path;
}

bool is_log_table(const std::string& name) {
  return name == "auditlog" || name == "eventlog";
}

long long next_audit_recid(const std::filesystem::path& path) {
  for (const auto& p : {path, rotated(path)}) {
    std::error_code ec;
    auto size = std::filesystem::file_size(p, ec);
    if (ec || size == 0) {
      continue;
    }
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      continue;
    }
    // the last lines are enough: a line is at most a few fields of audit_field_max
    std::string tail(std::min<uintmax_t>(size, 1 << 20), '\0');
    auto n = ::pread(fd, tail.data(), tail.size(), static_cast<off_t>(size - tail.size()));
    ::close(fd);
    tail.resize(static_cast<size_t>(std::max<ssize_t>(n, 0)));
    long long last = 0;
    for (const auto& r : audit_rows(tail)) {
      last = std::max(last, r.recid);
    }
    if (last > 0) {
      return last + 1;
    }
  }
  return 1;
}

} // namespace cws::api
