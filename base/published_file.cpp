// Atomic file replacement and the unified diff of --dry-run (base/published_file.hpp).
#include "base/published_file.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace cws::base {
namespace {

std::error_code last_error() {
  return {errno, std::generic_category()};
}

/// Closes a descriptor on scope exit.
struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0)
      ::close(fd);
  }
};

std::error_code write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return last_error();
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

std::error_code sync_directory(const std::filesystem::path& dir) {
  fd_guard d{::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd < 0 || ::fsync(d.fd) != 0)
    return last_error();
  return {};
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto len = nl == std::string_view::npos ? text.size() : nl + 1;
    lines.push_back(text.substr(0, len));
    text.remove_prefix(len);
  }
  return lines;
}

/// One line of an edit script: ' ' kept, '-' removed, '+' added.
struct edit {
  char op;
  std::string_view line;
};

/// The edit script of the changed middle: an LCS table when small, else remove-all, add-all.
void diff_middle(const std::vector<std::string_view>& a, std::size_t a0, std::size_t a1,
                 const std::vector<std::string_view>& b, std::size_t b0, std::size_t b1,
                 std::size_t exact_limit, std::vector<edit>& out) {
  std::size_t n = a1 - a0, m = b1 - b0;
  if (n == 0 || m == 0 || n * m > exact_limit * exact_limit) {
    for (auto i = a0; i < a1; ++i)
      out.push_back({'-', a[i]});
    for (auto j = b0; j < b1; ++j)
      out.push_back({'+', b[j]});
    return;
  }
  // lcs[i][j]: the longest common subsequence of a[a0+i..a1) and b[b0+j..b1)
  std::vector<std::vector<unsigned>> lcs(n + 1, std::vector<unsigned>(m + 1, 0));
  for (auto i = n; i-- > 0;)
    for (auto j = m; j-- > 0;)
      lcs[i][j]
        = a[a0 + i] == b[b0 + j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[a0 + i] == b[b0 + j]) {
      out.push_back({' ', a[a0 + i]});
      ++i, ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push_back({'-', a[a0 + i++]}); // removals first, as diff(1) prints them
    } else {
      out.push_back({'+', b[b0 + j++]});
    }
  }
}

/// A hunk header's side as diff(1) writes it: "L,N", "L" for one line, "L-1,0" for none.
std::string hunk_range(std::size_t line, std::size_t count) {
  if (count == 1)
    return std::to_string(line);
  return std::to_string(count ? line : line - 1) + "," + std::to_string(count);
}

void put_line(std::string& out, char op, std::string_view line) {
  out += op;
  out += line;
  if (line.empty() || line.back() != '\n')
    out += "\n\\ No newline at end of file\n";
}

std::filesystem::path temporary_for(const std::filesystem::path& path) {
  auto tmp = path;
  tmp += ".cws-" + std::to_string(::getpid()) + ".tmp";
  return tmp;
}

/// Writes `content` to `tmp` with the mode and owner of the file at `path` (or `mode`), and
/// fsyncs it when `sync`. On error no temporary is left.
std::error_code write_temporary(const std::filesystem::path& path, const std::filesystem::path& tmp,
                                std::string_view content, mode_t mode, bool sync) {
  struct stat old {};
  bool had_old = ::stat(path.c_str(), &old) == 0;
  std::error_code ec;
  {
    fd_guard f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                      had_old ? (old.st_mode & 07777) : mode)};
    if (f.fd < 0)
      return last_error();
    if (had_old
        && (::fchmod(f.fd, old.st_mode & 07777) != 0
            || (::geteuid() == 0 && ::fchown(f.fd, old.st_uid, old.st_gid) != 0)))
      ec = last_error();
    if (!ec)
      ec = write_all(f.fd, content);
    if (!ec && sync && ::fsync(f.fd) != 0)
      ec = last_error();
  }
  if (ec)
    ::unlink(tmp.c_str());
  return ec;
}

} // namespace

std::error_code publish_file(const std::filesystem::path& path, std::string_view content,
                             mode_t mode) {
  return publish_files({{path, content, mode}});
}

std::error_code publish_files(const std::vector<file_to_publish>& files, std::size_t* failed) {
  bool one = files.size() == 1;
  std::vector<std::filesystem::path> temps;
  temps.reserve(files.size());
  auto undo = [&](std::size_t from, std::size_t i, std::error_code ec) {
    for (auto k = from; k < temps.size(); ++k)
      ::unlink(temps[k].c_str());
    if (failed)
      *failed = i;
    return ec;
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto tmp = temporary_for(files[i].path);
    if (auto ec = write_temporary(files[i].path, tmp, files[i].content, files[i].mode, one))
      return undo(0, i, ec);
    temps.push_back(std::move(tmp));
  }
  // the directories, once each; for more than one file, their file systems synced once each
  std::vector<std::filesystem::path> dirs;
  std::vector<dev_t> synced;
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto dir = files[i].path.parent_path();
    if (std::find(dirs.begin(), dirs.end(), dir) != dirs.end())
      continue;
    dirs.push_back(dir);
    if (one)
      continue;
    fd_guard d{::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
    struct stat st {};
    if (d.fd < 0 || ::fstat(d.fd, &st) != 0)
      return undo(0, i, last_error());
    if (std::find(synced.begin(), synced.end(), st.st_dev) != synced.end())
      continue;
    if (::syncfs(d.fd) != 0)
      return undo(0, i, last_error());
    synced.push_back(st.st_dev);
  }
  for (std::size_t i = 0; i < files.size(); ++i)
    if (::rename(temps[i].c_str(), files[i].path.c_str()) != 0)
      return undo(i, i, last_error());
  for (const auto& dir : dirs)
    if (auto ec = sync_directory(dir))
      return ec;
  return {};
}

std::error_code read_file(const std::filesystem::path& path, std::size_t max_bytes,
                          std::string& out, bool* exists) {
  out.clear();
  fd_guard f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (exists)
    *exists = f.fd >= 0;
  if (f.fd < 0)
    return errno == ENOENT ? std::error_code{} : last_error();
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return last_error();
    if (n == 0)
      return {};
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
      out.clear();
      return std::make_error_code(std::errc::file_too_large);
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
}

std::string unified_diff(std::string_view old_text, std::string_view new_text,
                         std::string_view old_label, std::string_view new_label,
                         std::size_t context, std::size_t exact_limit) {
  if (old_text == new_text)
    return {};
  auto a = lines_of(old_text), b = lines_of(new_text);
  std::size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre])
    ++pre;
  std::size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre
         && a[a.size() - 1 - suf] == b[b.size() - 1 - suf])
    ++suf;
  std::vector<edit> script;
  for (std::size_t i = 0; i < pre; ++i)
    script.push_back({' ', a[i]});
  diff_middle(a, pre, a.size() - suf, b, pre, b.size() - suf, exact_limit, script);
  for (auto i = a.size() - suf; i < a.size(); ++i)
    script.push_back({' ', a[i]});

  std::string out = "--- " + std::string(old_label) + "\n+++ " + std::string(new_label) + "\n";
  // hunks: changes closer than 2 * context kept lines share one hunk
  std::size_t k = 0;
  for (;;) {
    while (k < script.size() && script[k].op == ' ')
      ++k;
    if (k == script.size())
      break;
    std::size_t start = k >= context ? k - context : 0, last = k;
    for (auto t = k + 1; t < script.size() && t - last - 1 <= 2 * context; ++t)
      if (script[t].op != ' ')
        last = t;
    std::size_t end = std::min(script.size(), last + 1 + context);
    // line numbers of the hunk on each side
    std::size_t a_line = 1, b_line = 1;
    for (std::size_t t = 0; t < start; ++t) {
      a_line += script[t].op != '+';
      b_line += script[t].op != '-';
    }
    std::size_t a_count = 0, b_count = 0;
    for (auto t = start; t < end; ++t) {
      a_count += script[t].op != '+';
      b_count += script[t].op != '-';
    }
    out += "@@ -" + hunk_range(a_line, a_count) + " +" + hunk_range(b_line, b_count) + " @@\n";
    for (auto t = start; t < end; ++t)
      put_line(out, script[t].op, script[t].line);
    k = end;
  }
  return out;
}

} // namespace cws::base
