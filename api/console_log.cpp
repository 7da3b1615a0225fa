#include "api/console_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <system_error>

#include "base/log.hpp"
#include "base/log_burst.hpp"

namespace cws::api {

namespace {

base::log_burst& write_failures() {
  static base::log_burst b{base::log_level::warning, "console log writes failed"};
  return b;
}

} // namespace

std::string console_time(std::chrono::system_clock::time_point t) {
  auto secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

console_log::console_log(console_log_config cfg, std::string node)
    : cfg_(std::move(cfg)), node_(std::move(node)) {
}

console_log::~console_log() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

bool console_log::open() {
  if (fd_ >= 0) {
    return true;
  }
  std::error_code ec;
  std::filesystem::create_directories(cfg_.dir, ec);
  fd_ = ::open(path().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd_ < 0) {
    write_failures().note(path().string() + ": " + std::strerror(errno));
    return false;
  }
  struct stat st {};
  size_ = ::fstat(fd_, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  return true;
}

void console_log::rotate() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  std::error_code ec;
  auto base = path().string();
  if (cfg_.keep == 0) {
    std::filesystem::remove(base, ec);
  } else {
    std::filesystem::remove(base + "." + std::to_string(cfg_.keep), ec);
    for (unsigned i = cfg_.keep; i > 1; --i) {
      std::filesystem::rename(base + "." + std::to_string(i - 1), base + "." + std::to_string(i),
                              ec);
    }
    std::filesystem::rename(base, base + ".1", ec);
  }
  size_ = 0;
}

void console_log::write_raw(std::string_view text) {
  if (text.empty()) {
    return;
  }
  if (size_ > 0 && size_ + text.size() > cfg_.max_bytes) {
    rotate();
  }
  if (!open()) {
    return;
  }
  size_t done = 0;
  while (done < text.size()) {
    auto n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      write_failures().note(path().string() + ": " + std::strerror(errno));
      ::close(fd_);
      fd_ = -1;
      return;
    }
    done += static_cast<size_t>(n);
    size_ += static_cast<uint64_t>(n);
  }
}

void console_log::append(std::string_view bytes, std::chrono::system_clock::time_point now) {
  if (!cfg_.timestamps) {
    if (!bytes.empty()) {
      line_start_ = bytes.back() == '\n';
    }
    write_raw(bytes);
    return;
  }
  // a timestamp in front of each line's first byte: the text is cut at line ends
  std::string out;
  out.reserve(bytes.size() + 32);
  std::string stamp;
  for (char c : bytes) {
    if (line_start_) {
      if (stamp.empty()) {
        stamp = "[" + console_time(now) + "] ";
      }
      out += stamp;
      line_start_ = false;
    }
    out += c;
    line_start_ = c == '\n';
  }
  write_raw(out);
}

void console_log::note(std::string_view text, std::chrono::system_clock::time_point now) {
  std::string line;
  if (!line_start_) {
    line += "\r\n";
  }
  if (cfg_.timestamps) {
    line += "[" + console_time(now) + "] ";
  }
  line += text;
  line += "\r\n";
  line_start_ = true;
  write_raw(line);
}

void replay_ring::push(std::string_view bytes) {
  if (cap_ == 0) {
    return;
  }
  if (bytes.size() >= cap_) {
    buf_.assign(bytes.substr(bytes.size() - cap_));
    head_ = 0;
    size_ = cap_;
    return;
  }
  if (buf_.size() < cap_) {
    auto room = cap_ - buf_.size();
    auto take = std::min(room, bytes.size());
    buf_.append(bytes.substr(0, take));
    size_ = buf_.size();
    bytes.remove_prefix(take);
    head_ = 0;
    if (bytes.empty()) {
      return;
    }
  }
  // full: overwrite from head_
  for (char c : bytes) {
    buf_[head_] = c;
    head_ = (head_ + 1) % cap_;
  }
  size_ = cap_;
}

std::string replay_ring::last(size_t n) const {
  n = std::min(n, size_);
  if (n == 0) {
    return {}; // (a capacity of 0 holds nothing: no modulo by it)
  }
  if (buf_.size() < cap_ || size_ < cap_) {
    return buf_.substr(buf_.size() - n);
  }
  // oldest byte at head_
  std::string out;
  out.reserve(n);
  size_t start = (head_ + cap_ - n) % cap_;
  if (start + n <= cap_) {
    out.append(buf_, start, n);
  } else {
    out.append(buf_, start, cap_ - start);
    out.append(buf_, 0, n - (cap_ - start));
  }
  return out;
}

api_result console_log_tail(const std::filesystem::path& file, size_t lines, size_t max_bytes,
                            std::string& out) {
  out.clear();
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      return api_result::failure(errc::failed, "No console log for this node yet");
    }
    return api_result::failure(errc::unavailable,
                               "Cannot read the console log: " + std::string{std::strerror(errno)});
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return api_result::failure(errc::unavailable, "Cannot read the console log");
  }
  auto size = static_cast<uint64_t>(st.st_size);
  // read backwards in blocks until `lines` line ends before the last line are seen
  std::string tail;
  uint64_t pos = size;
  size_t newlines = 0;
  constexpr size_t block = 65536;
  bool enough = false;
  while (pos > 0 && tail.size() < max_bytes && !enough) {
    auto n = static_cast<size_t>(std::min<uint64_t>(block, pos));
    n = std::min(n, max_bytes - tail.size());
    pos -= n;
    std::string chunk(n, '\0');
    auto got = ::pread(fd, chunk.data(), n, static_cast<off_t>(pos));
    if (got != static_cast<ssize_t>(n)) {
      break;
    }
    tail.insert(0, chunk);
    newlines = 0;
    // count line ends, ignoring one at the very end
    size_t end = tail.size();
    if (end > 0 && tail[end - 1] == '\n') {
      --end;
    }
    for (size_t i = end; i-- > 0;) {
      if (tail[i] == '\n' && ++newlines == lines) {
        tail.erase(0, i + 1);
        enough = true;
        break;
      }
    }
  }
  ::close(fd);
  if (lines == 0) {
    tail.clear();
  }
  out = std::move(tail);
  return {};
}

} // namespace cws::api
