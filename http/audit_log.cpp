#include "http/audit_log.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <iostream>
#include <stdexcept>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/audit_table.hpp"

#include "http/json_writer.hpp"
#include "store/credentials.hpp"

namespace cws::http {

namespace {

/// The current UTC time as text: formatted once per second per io thread (strftime showed in
/// the write profile).
const char* now_text() {
  thread_local std::time_t formatted = -1;
  thread_local char when[32];
  std::time_t now = std::time(nullptr);
  if (now != formatted) {
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    formatted = now;
  }
  return when;
}

/// flock(LOCK_EX) on `fd` until its end: the lock tabprune takes to prune the file in place
/// (api/audit_table), so a line is never written into a file being rewritten.
class file_lock {
 public:
  explicit file_lock(int fd) : fd_(fd) {
    while (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~file_lock() {
    release();
  }
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;
  /// The file is closed (or replaced): its lock went with it.
  void release() {
    if (fd_ >= 0) {
      ::flock(fd_, LOCK_UN);
      fd_ = -1;
    }
  }
  void take(int fd) {
    release();
    fd_ = fd;
    while (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }

 private:
  int fd_;
};

} // namespace

audit_log::audit_log(const std::filesystem::path& path, audit_limits limits)
    : path_(path), limits_(limits), required_(limits.required), max_field_(limits.max_field) {
  if (!path_.empty()) {
    next_recid_ = api::next_audit_recid(path_); // xCAT's auditlog.recid, continued
  }
  if (!path_.empty() && !open()) {
    throw std::runtime_error("cannot open the audit log " + path_.string());
  }
}

audit_log::~audit_log() {
  if (path_.empty()) {
    return;
  }
  std::lock_guard<std::mutex> guard{mu_};
  write_summary(std::chrono::steady_clock::now(), true);
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

std::string audit_log::bounded(const std::string& text, size_t max) {
  if (text.size() <= max) {
    return text;
  }
  return text.substr(0, max) + "...[sha256:" + store::sha256_hex(text).substr(0, 16) + ", "
         + std::to_string(text.size()) + " bytes]";
}

bool audit_log::open() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
  // created 0600 from the start: a new file (after logrotate) is never readable by others
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    return false;
  }
  ::fchmod(fd_, 0600); // an older file: 0600 now; one we cannot chmod is still written
  struct stat st {};
  bytes_ = ::fstat(fd_, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  return true;
}

bool audit_log::reopen() {
  if (path_.empty()) {
    return true;
  }
  std::lock_guard<std::mutex> guard{mu_};
  return open();
}

void audit_log::failed(const char* what, int err) {
  ++lost_;
  failures_.note(path_.string() + ": " + what + ": " + std::strerror(err) + " ("
                 + std::to_string(lost_) + " lines lost so far)");
  if (fd_ >= 0) {
    ::close(fd_); // opened again at the next line: the disk may be another one by then
    fd_ = -1;
  }
}

bool audit_log::write_whole(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    auto n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      int err = n < 0 ? errno : ENOSPC;
      if (done > 0) {
        // a line cut by ENOSPC is cut off again, so no later line is glued to its half
        struct stat st {};
        if (::fstat(fd_, &st) != 0 || static_cast<uint64_t>(st.st_size) < done
            || ::ftruncate(fd_, st.st_size - static_cast<off_t>(done)) != 0) {
          torn_ = true;
        }
      }
      errno = err;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  bytes_ += text.size();
  return true;
}

bool audit_log::write_lost_record() {
  // the gap is recorded in the log itself, before the next line
  json_writer w;
  w.begin_object();
  w.key("recid");
  w.number(next_recid_);
  w.key("time");
  w.value(now_text());
  w.key("event");
  w.value("audit lines not written");
  w.key("count");
  w.number(lost_);
  w.end_object();
  if (!write_whole((torn_ ? "\n" : "") + w.str() + '\n')) {
    return false;
  }
  torn_ = false;
  ++next_recid_;
  base::log(base::log_level::notice, "audit log " + path_.string() + " written again; "
                                       + std::to_string(lost_) + " lines were lost");
  lost_ = 0;
  return true;
}

bool audit_log::append(const std::string& object) {
  if (fd_ < 0 && !open()) {
    failed("cannot open it", errno);
    return false;
  }
  // tabprune (another process) may have cut the file meanwhile: its size is read under the
  // lock, and O_APPEND writes at its end whatever it is now
  file_lock lock{fd_};
  struct stat st {};
  if (::fstat(fd_, &st) == 0) {
    bytes_ = static_cast<uint64_t>(st.st_size);
  }
  // the recid first: xCAT's auditlog key, one more than the last line's
  auto line = "{\"recid\":" + std::to_string(next_recid_) + (object.size() > 2 ? "," : "")
              + object.substr(1);
  if (bytes_ + line.size() + 1 > limits_.max_bytes && bytes_ > 0) {
    std::error_code ec;
    std::filesystem::rename(path_, path_.string() + ".1", ec); // under the old file's lock
    std::cerr << "clusterwsd: the audit log reached " << bytes_ << " bytes (audit_log_max_bytes)"
              << (ec ? "; it cannot be moved aside: " + ec.message() : ": moved to audit.log.1")
              << '\n';
    lock.release();
    ::close(fd_);
    fd_ = -1;
    if (!open()) {
      failed("cannot open it", errno);
      return false;
    }
    lock.take(fd_);
  }
  if (lost_ > 0) {
    if (!write_lost_record()) {
      failed("cannot write", errno);
      return false;
    }
    line = "{\"recid\":" + std::to_string(next_recid_) + (object.size() > 2 ? "," : "")
           + object.substr(1);
  }
  if (!write_whole((torn_ ? "\n" : "") + line + '\n')) {
    failed("cannot write", errno);
    return false;
  }
  ++next_recid_;
  torn_ = false;
  return true;
}

bool audit_log::refuses_changes() {
  if (path_.empty() || !required_.load(std::memory_order_relaxed)) {
    return false;
  }
  std::lock_guard<std::mutex> guard{mu_};
  if (lost_ == 0) {
    return false;
  }
  auto now = std::chrono::steady_clock::now();
  if (now - last_try_ < limits_.retry_every) {
    return true;
  }
  last_try_ = now;
  // the record of the lost lines is the test line: written, the log works again
  if (fd_ < 0 && !open()) {
    return true;
  }
  file_lock lock{fd_};
  if (!write_lost_record()) {
    failures_.note(path_.string() + ": still cannot write: " + std::strerror(errno));
    return true;
  }
  return false;
}

void audit_log::set_limits(audit_limits limits) {
  std::lock_guard<std::mutex> guard{mu_};
  limits_ = limits;
  required_ = limits.required;
  max_field_ = limits.max_field;
}

bool audit_log::write(const audit_entry& e) {
  if (path_.empty()) {
    return true;
  }
  auto max_field = max_field_.load(std::memory_order_relaxed);
  json_writer w;
  w.begin_object();
  w.key("time");
  w.value(now_text());
  w.key("client");
  w.value(e.client);
  w.key("user");
  w.value(bounded(e.user, max_field));
  w.key("method");
  w.value(e.method);
  w.key("path");
  w.value(bounded(e.path, max_field));
  if (!e.noderange.empty()) {
    w.key("noderange");
    w.value(bounded(e.noderange, max_field));
  }
  if (!e.command.empty()) {
    w.key("command");
    w.value(bounded(e.command, max_field));
  }
  w.key("status");
  w.number(e.status);
  w.end_object();
  std::lock_guard<std::mutex> guard{mu_};
  bool ok = write_summary(std::chrono::steady_clock::now(), false);
  return append(w.str()) && ok;
}

bool audit_log::refused(const std::string& client) {
  if (path_.empty()) {
    return true;
  }
  auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> guard{mu_};
  if (refused_total_ == 0) {
    since_ = now;
  }
  ++refused_total_;
  if (auto it = refused_.find(client); it != refused_.end()) {
    ++it->second;
  } else if (refused_.size() < limits_.summary_clients) {
    refused_.emplace(client, 1);
  } else {
    ++refused_other_;
  }
  return write_summary(now, false);
}

bool audit_log::write_summary(std::chrono::steady_clock::time_point now, bool force) {
  if (refused_total_ == 0 || (!force && now - since_ < limits_.summary_period)) {
    return true;
  }
  json_writer w;
  w.begin_object();
  w.key("time");
  w.value(now_text());
  w.key("event");
  w.value("refused without valid credentials");
  w.key("seconds");
  w.number(std::chrono::duration_cast<std::chrono::seconds>(now - since_).count());
  w.key("count");
  w.number(refused_total_);
  w.key("clients");
  w.begin_object();
  for (const auto& [client, n] : refused_) {
    w.key(client);
    w.number(n);
  }
  w.end_object();
  if (refused_other_ > 0) {
    w.key("other_clients");
    w.number(refused_other_);
  }
  w.end_object();
  refused_.clear();
  refused_other_ = refused_total_ = 0;
  return append(w.str());
}

} // namespace cws::http
