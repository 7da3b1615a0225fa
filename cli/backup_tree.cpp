#include "cli/backup_tree.hpp"

#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace cws::cli {

namespace {

std::runtime_error sys_error(const std::string& what, const std::string& shown) {
  return std::runtime_error(what + " '" + shown + "': " + std::strerror(errno));
}

bool key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_';
}

/// What the entry named by an open descriptor is, in words for an error.
const char* kind_of(mode_t m) {
  if (S_ISLNK(m)) {
    return "a symbolic link";
  }
  if (S_ISFIFO(m)) {
    return "a FIFO";
  }
  if (S_ISSOCK(m)) {
    return "a socket";
  }
  if (S_ISCHR(m) || S_ISBLK(m)) {
    return "a device";
  }
  return "not a regular file or directory";
}

/// The names in the open directory `fd` (a duplicate is read, `fd` stays open), sorted.
std::vector<std::string> names_in(int fd, const std::string& shown) {
  int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) {
    throw sys_error("cannot read the directory", shown);
  }
  std::unique_ptr<DIR, int (*)(DIR*)> dir{::fdopendir(dup), &::closedir};
  if (!dir) {
    ::close(dup);
    throw sys_error("cannot read the directory", shown);
  }
  std::vector<std::string> names;
  while (auto* e = ::readdir(dir.get())) {
    std::string_view n = e->d_name;
    if (n != "." && n != "..") {
      names.emplace_back(n);
      if (names.size() > backup_limits::entries) {
        break; // the caller's budget refuses it
      }
    }
  }
  return names;
}

void write_all(int fd, const char* data, size_t size, const std::string& shown) {
  while (size > 0) {
    auto n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      throw sys_error("cannot write", shown);
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

} // namespace

fd_guard::~fd_guard() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

std::string backup_manifest::value(std::string_view key) const {
  auto it = values.find(key);
  return it == values.end() ? std::string{} : it->second;
}

backup_manifest parse_backup_manifest(std::string_view text) {
  if (text.size() > backup_limits::manifest_bytes) {
    throw std::invalid_argument("the MANIFEST is larger than "
                                + std::to_string(backup_limits::manifest_bytes) + " bytes");
  }
  backup_manifest m;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      throw std::invalid_argument("the MANIFEST's last line has no newline");
    }
    auto line = text.substr(pos, end - pos);
    pos = end + 1;
    auto where = "MANIFEST line " + std::to_string(++line_no) + ": ";
    if (line_no > backup_limits::manifest_lines) {
      throw std::invalid_argument("the MANIFEST has more than "
                                  + std::to_string(backup_limits::manifest_lines) + " lines");
    }
    if (line_no == 1) {
      if (line != backup_manifest_header) {
        throw std::invalid_argument(where + "not '" + std::string{backup_manifest_header} + "'");
      }
      continue;
    }
    auto eq = line.find('=');
    if (eq == 0 || eq == std::string_view::npos) {
      throw std::invalid_argument(where + "not key=value");
    }
    auto key = line.substr(0, eq);
    auto value = line.substr(eq + 1);
    for (char c : key) {
      if (!key_char(c)) {
        throw std::invalid_argument(where + "a key has only a-z, 0-9, '.' and '_'");
      }
    }
    for (char c : value) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        throw std::invalid_argument(where + "a control character in the value");
      }
    }
    if (!m.values.emplace(std::string{key}, std::string{value}).second) {
      throw std::invalid_argument(where + "'" + std::string{key} + "' given twice");
    }
  }
  if (line_no == 0) {
    throw std::invalid_argument("the MANIFEST is empty");
  }
  return m;
}

std::string read_regular_file(int dir_fd, const std::string& name, uint64_t max,
                              const std::string& shown) {
  fd_guard fd{::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)};
  if (fd.get() < 0) {
    if (errno == ELOOP) {
      throw std::runtime_error("'" + shown + "' is a symbolic link; a backup holds none");
    }
    throw sys_error("cannot open", shown);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    throw sys_error("cannot read", shown);
  }
  if (!S_ISREG(st.st_mode)) {
    throw std::runtime_error("'" + shown + "' is " + kind_of(st.st_mode)
                             + "; a backup holds only regular files and directories");
  }
  if (static_cast<uint64_t>(st.st_size) > max) {
    throw std::runtime_error("'" + shown + "' is larger than " + std::to_string(max) + " bytes");
  }
  std::string out;
  char buf[16384];
  for (;;) {
    auto n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw sys_error("cannot read", shown);
    }
    if (n == 0) {
      return out;
    }
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max) {
      throw std::runtime_error("'" + shown + "' is larger than " + std::to_string(max) + " bytes");
    }
  }
}

int open_directory(const std::filesystem::path& path, bool follow) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    throw sys_error("cannot open the directory", path.string());
  }
  return fd;
}

void copy_entry(int from_dir, const std::string& from_name, int to_dir, const std::string& to_name,
                const std::string& shown, copy_budget& budget, size_t depth) {
  if (++budget.entries > backup_limits::entries) {
    throw std::runtime_error("more than " + std::to_string(backup_limits::entries)
                             + " files and directories (at '" + shown + "')");
  }
  if (depth > backup_limits::depth) {
    throw std::runtime_error("'" + shown + "' is more than " + std::to_string(backup_limits::depth)
                             + " directories deep");
  }
  // O_NOFOLLOW: a link is never opened, so nothing is read or changed through one;
  // O_NONBLOCK: a FIFO planted in its place cannot stall the open
  fd_guard from{
    ::openat(from_dir, from_name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)};
  if (from.get() < 0) {
    if (errno == ELOOP) {
      throw std::runtime_error("'" + shown
                               + "' is a symbolic link; a backup holds only regular "
                                 "files and directories");
    }
    throw sys_error("cannot open", shown);
  }
  struct stat st {};
  if (::fstat(from.get(), &st) != 0) {
    throw sys_error("cannot read", shown);
  }
  auto mode = static_cast<mode_t>(st.st_mode & 0777 & budget.mode_mask); // never set-id bits
  if (S_ISDIR(st.st_mode)) {
    if (::mkdirat(to_dir, to_name.c_str(), 0700) != 0) {
      throw sys_error("cannot create the directory", shown);
    }
    fd_guard to{::openat(to_dir, to_name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)};
    if (to.get() < 0) {
      throw sys_error("cannot open the directory just created", shown);
    }
    for (const auto& child : names_in(from.get(), shown)) {
      copy_entry(from.get(), child, to.get(), child, shown + "/" + child, budget, depth + 1);
    }
    if (::fchmod(to.get(), mode) != 0) {
      throw sys_error("cannot set the mode of", shown);
    }
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    throw std::runtime_error("'" + shown + "' is " + kind_of(st.st_mode)
                             + "; a backup holds only regular files and directories");
  }
  auto size = static_cast<uint64_t>(st.st_size);
  if (!budget.unlimited) {
    if (size > backup_limits::file_bytes) {
      throw std::runtime_error("'" + shown + "' is larger than "
                               + std::to_string(backup_limits::file_bytes) + " bytes");
    }
    budget.bytes += size;
    if (budget.bytes > backup_limits::total_bytes) {
      throw std::runtime_error("the files besides the database are larger than "
                               + std::to_string(backup_limits::total_bytes) + " bytes together");
    }
  }
  fd_guard to{
    ::openat(to_dir, to_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)};
  if (to.get() < 0) {
    throw sys_error("cannot create", shown);
  }
  char buf[65536];
  uint64_t copied = 0;
  for (;;) {
    auto n = ::read(from.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw sys_error("cannot read", shown);
    }
    if (n == 0) {
      break;
    }
    copied += static_cast<uint64_t>(n);
    if (!budget.unlimited && copied > backup_limits::file_bytes) {
      throw std::runtime_error("'" + shown + "' grew past "
                               + std::to_string(backup_limits::file_bytes) + " bytes");
    }
    write_all(to.get(), buf, static_cast<size_t>(n), shown);
  }
  if (::fchmod(to.get(), mode) != 0) {
    throw sys_error("cannot set the mode of", shown);
  }
}

} // namespace cws::cli
