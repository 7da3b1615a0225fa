#include "http/audit_log.hpp"

#include <ctime>
#include <iostream>
#include <stdexcept>

#include "http/json_writer.hpp"

namespace cws::http {

audit_log::audit_log(const std::filesystem::path& path) : path_(path) {
  if (!path_.empty() && !open()) {
    throw std::runtime_error("cannot open the audit log " + path_.string());
  }
}

bool audit_log::open() {
  out_.close();
  out_.clear();
  out_.open(path_, std::ios::app);
  if (!out_.is_open()) {
    return false;
  }
  std::error_code ignored; // a file we cannot chmod is still written
  std::filesystem::permissions(
    path_, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ignored);
  return true;
}

bool audit_log::reopen() {
  if (path_.empty()) {
    return true;
  }
  std::lock_guard<std::mutex> guard{mu_};
  return open();
}

void audit_log::write(const audit_entry& e) {
  if (path_.empty()) {
    return;
  }
  // strftime showed in the write profile: format once per second (per io thread)
  thread_local std::time_t formatted = -1;
  thread_local char when[32];
  std::time_t now = std::time(nullptr);
  if (now != formatted) {
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    formatted = now;
  }
  json_writer w;
  w.begin_object();
  w.key("time");
  w.value(when);
  w.key("client");
  w.value(e.client);
  w.key("user");
  w.value(e.user);
  w.key("method");
  w.value(e.method);
  w.key("path");
  w.value(e.path);
  if (!e.noderange.empty()) {
    w.key("noderange");
    w.value(e.noderange);
  }
  if (!e.command.empty()) {
    w.key("command");
    w.value(e.command);
  }
  w.key("status");
  w.number(e.status);
  w.end_object();
  std::lock_guard<std::mutex> guard{mu_};
  if (!out_.is_open() && !open()) {
    std::cerr << "clusterwsd: cannot open the audit log " << path_.string() << '\n';
    return;
  }
  out_ << w.str() << '\n' << std::flush;
}

} // namespace cws::http
