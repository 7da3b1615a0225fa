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

namespace {

shared_text join_texts(const std::vector<shared_text>& parts) {
  size_t size = 0;
  for (const auto& p : parts) {
    size += p->size();
  }
  std::string joined;
  joined.reserve(size); // one copy of each part, no regrowth
  for (const auto& p : parts) {
    joined += *p;
  }
  return std::make_shared<const std::string>(std::move(joined));
}

} // namespace

shared_text shared_joins::join(const std::vector<shared_text>& parts) {
  for (const auto& k : kept_) {
    if (k.parts == parts) { // (shared_ptr ==: the same texts)
      return k.joined;
    }
  }
  auto out = join_texts(parts);
  if (kept_.size() < max_kept) {
    kept_.push_back({parts, out});
  }
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
  push(std::make_shared<const std::string>(std::move(text)));
}

void response_stream::push(shared_text text) {
  if (ended_ || !text || text->empty()) {
    return;
  }
  waiting_ += text->size();
  queue_.push_back(std::move(text));
}

void response_stream::finish(std::string last) {
  push(std::move(last));
  ended_ = true;
}

bool response_stream::push_within(shared_text text, size_t limit, std::string last) {
  if (ended_) {
    return true;
  }
  if (waiting_ < limit) {
    push(std::move(text));
    return true;
  }
  queue_.clear();
  waiting_ = writing_ ? write_->size() : 0;
  finish(std::move(last));
  return false;
}

const std::string* response_stream::begin_write(shared_joins* joins) {
  if (writing_ || queue_.empty()) {
    return nullptr;
  }
  parts_.clear();
  size_t size = 0;
  do {
    size += queue_.front()->size();
    parts_.push_back(std::move(queue_.front()));
    queue_.pop_front();
  } while (!queue_.empty() && size + queue_.front()->size() <= max_join);
  if (parts_.size() == 1) {
    write_ = std::move(parts_.front()); // alone: written as it is
  } else if (joins != nullptr) {
    write_ = joins->join(parts_);
  } else {
    write_ = join_texts(parts_);
  }
  parts_.clear();
  writing_ = true;
  return write_.get();
}

void response_stream::write_done() noexcept {
  waiting_ -= write_->size();
  write_.reset();
  writing_ = false;
}

void response_stream::drop() noexcept {
  queue_.clear();
  waiting_ = writing_ ? write_->size() : 0;
}

void response_stream::reset() noexcept {
  queue_.clear();
  write_.reset();
  waiting_ = 0;
  status_ = 200;
  started_ = ended_ = writing_ = false;
}

} // namespace cws::http
