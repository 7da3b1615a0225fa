#include "http/audit_log.hpp"

#include <ctime>
#include <fcntl.h>
#include <iostream>
#include <stdexcept>
#include <unistd.h>

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

} // namespace

audit_log::audit_log(const std::filesystem::path& path, audit_limits limits)
    : path_(path), limits_(limits) {
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
}

std::string audit_log::bounded(const std::string& text, size_t max) {
  if (text.size() <= max) {
    return text;
  }
  return text.substr(0, max) + "...[sha256:" + store::sha256_hex(text).substr(0, 16) + ", "
         + std::to_string(text.size()) + " bytes]";
}

bool audit_log::open() {
  out_.close();
  out_.clear();
  // created 0600 from the start: a new file (after logrotate) is never readable by others,
  // not even for the moment an ofstream's umask-made file would be
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd >= 0) {
    ::close(fd);
  }
  out_.open(path_, std::ios::app);
  if (!out_.is_open()) {
    return false;
  }
  std::error_code ec; // a file we cannot chmod or size is still written (an older file: 0600)
  std::filesystem::permissions(
    path_, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
  auto size = std::filesystem::file_size(path_, ec);
  bytes_ = ec ? 0 : size;
  return true;
}

bool audit_log::reopen() {
  if (path_.empty()) {
    return true;
  }
  std::lock_guard<std::mutex> guard{mu_};
  return open();
}

void audit_log::append(const std::string& line) {
  if (bytes_ + line.size() + 1 > limits_.max_bytes && bytes_ > 0) {
    std::error_code ec;
    std::filesystem::rename(path_, path_.string() + ".1", ec);
    std::cerr << "clusterwsd: the audit log reached " << bytes_ << " bytes (audit_log_max_bytes)"
              << (ec ? "; it cannot be moved aside: " + ec.message() : ": moved to audit.log.1")
              << '\n';
    out_.close();
  }
  if (!out_.is_open() && !open()) {
    std::cerr << "clusterwsd: cannot open the audit log " << path_.string() << '\n';
    return;
  }
  out_ << line << '\n' << std::flush;
  bytes_ += line.size() + 1;
}

void audit_log::write(const audit_entry& e) {
  if (path_.empty()) {
    return;
  }
  json_writer w;
  w.begin_object();
  w.key("time");
  w.value(now_text());
  w.key("client");
  w.value(e.client);
  w.key("user");
  w.value(bounded(e.user, limits_.max_field));
  w.key("method");
  w.value(e.method);
  w.key("path");
  w.value(bounded(e.path, limits_.max_field));
  if (!e.noderange.empty()) {
    w.key("noderange");
    w.value(bounded(e.noderange, limits_.max_field));
  }
  if (!e.command.empty()) {
    w.key("command");
    w.value(bounded(e.command, limits_.max_field));
  }
  w.key("status");
  w.number(e.status);
  w.end_object();
  std::lock_guard<std::mutex> guard{mu_};
  write_summary(std::chrono::steady_clock::now(), false);
  append(w.str());
}

void audit_log::refused(const std::string& client) {
  if (path_.empty()) {
    return;
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
  write_summary(now, false);
}

void audit_log::write_summary(std::chrono::steady_clock::time_point now, bool force) {
  if (refused_total_ == 0 || (!force && now - since_ < limits_.summary_period)) {
    return;
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
  append(w.str());
}

} // namespace cws::http
