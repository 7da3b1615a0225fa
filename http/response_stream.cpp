#include "http/response_stream.hpp"

#include <cstdio>

namespace cws::http {

std::string chunk(std::string_view data) {
  char size[20];
  auto n = std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  std::string out;
  out.reserve(n + data.size() + 2);
  out.append(size, n).append(data).append("\r\n");
  return out;
}

void response_stream::start(unsigned status, std::string head) {
  started_ = true;
  status_ = status;
  push(std::move(head));
}

void response_stream::push(std::string text) {
  if (ended_ || text.empty()) {
    return;
  }
  waiting_ += text.size();
  queue_.push_back(std::move(text));
}

void response_stream::finish(std::string last) {
  push(std::move(last));
  ended_ = true;
}

bool response_stream::push_within(std::string text, size_t limit, std::string last) {
  if (ended_) {
    return true;
  }
  if (waiting_ < limit) {
    push(std::move(text));
    return true;
  }
  queue_.clear();
  waiting_ = writing_ ? write_.size() : 0;
  finish(std::move(last));
  return false;
}

const std::string* response_stream::begin_write() {
  if (writing_ || queue_.empty()) {
    return nullptr;
  }
  write_ = std::move(queue_.front());
  queue_.pop_front();
  while (!queue_.empty() && write_.size() + queue_.front().size() <= max_join) {
    write_ += queue_.front();
    queue_.pop_front();
  }
  writing_ = true;
  return &write_;
}

void response_stream::write_done() noexcept {
  waiting_ -= write_.size();
  write_.clear();
  writing_ = false;
}

void response_stream::drop() noexcept {
  queue_.clear();
  waiting_ = writing_ ? write_.size() : 0;
}

void response_stream::reset() noexcept {
  queue_.clear();
  write_.clear();
  waiting_ = 0;
  status_ = 200;
  started_ = ended_ = writing_ = false;
}

} // namespace cws::http
