#include "cli/local_client.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "api/settings.hpp"

namespace cws::cli {

namespace {

constexpr size_t max_head = 64 * 1024;

/// Closes a descriptor when it goes out of scope.
struct fd_guard {
  int fd;
  ~fd_guard() {
    if (fd >= 0) {
      ::close(fd);
    }
  }
};

} // namespace

int connect_local(const std::filesystem::path& path, std::string_view not_running) {
  sockaddr_un addr{};
  if (path.native().size() >= sizeof addr.sun_path) {
    throw std::runtime_error("The local socket path " + path.string() + " is too long.");
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw std::runtime_error(std::string{"socket: "} + std::strerror(errno));
  }
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int e = errno;
    ::close(fd);
    if (e == ENOENT || e == ECONNREFUSED) {
      throw std::runtime_error(
        "clusterwsd is not running (nothing listens on " + path.string() + "). "
        + std::string{not_running.empty() ? "Users other than root reach the cluster "
                                            "database through it: ask an administrator to "
                                            "start it (systemctl start clusterwsd)."
                                          : not_running});
    }
    throw std::runtime_error("Cannot connect to clusterwsd at " + path.string() + ": "
                             + std::strerror(e));
  }
  return fd;
}

namespace {

void send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    auto n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      throw std::runtime_error(std::string{"clusterwsd closed the connection: "}
                               + std::strerror(errno));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

/// Reads what is there (blocking); 0 at the end of the connection.
size_t read_some(int fd, std::string& buf) {
  char tmp[65536];
  while (true) {
    auto n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      throw std::runtime_error(std::string{"reading from clusterwsd: "} + std::strerror(errno));
    }
    buf.append(tmp, static_cast<size_t>(n));
    return static_cast<size_t>(n);
  }
}

[[noreturn]] void malformed(const std::string& what) {
  throw std::runtime_error("clusterwsd sent a malformed answer (" + what + ").");
}

/// The value of header `name` (lower case) in `head`, or "".
std::string header(const std::string& head, std::string_view name) {
  size_t pos = head.find("\r\n");
  while (pos != std::string::npos && pos + 2 < head.size()) {
    auto start = pos + 2;
    auto end = head.find("\r\n", start);
    auto line = head.substr(start, end == std::string::npos ? std::string::npos : end - start);
    auto colon = line.find(':');
    if (colon != std::string::npos && colon == name.size()) {
      bool same = true;
      for (size_t i = 0; i < colon; ++i) {
        same = same && std::tolower(static_cast<unsigned char>(line[i])) == name[i];
      }
      if (same) {
        auto v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        v.erase(v.find_last_not_of(" \t") + 1);
        return v;
      }
    }
    pos = end;
  }
  return {};
}

} // namespace

std::optional<std::filesystem::path> daemon_socket(const store::home& home) {
  if (::geteuid() == 0) {
    return std::nullopt;
  }
  auto data = home.db() / "data.mdb";
  if (::access(data.c_str(), R_OK | W_OK) == 0) {
    return std::nullopt; // the caller's own store
  }
  if (errno == ENOENT) {
    return std::nullopt; // nothing there: the direct path says how to initialize it
  }
  return local_socket_path(home);
}

std::filesystem::path local_socket_path(const store::home& home) {
  if (const char* env = std::getenv("CLUSTERWS_SOCKET"); env != nullptr && *env != '\0') {
    return std::filesystem::path{env};
  }
  if (::access(home.config().c_str(), R_OK) == 0) {
    try {
      auto configured = api::load_settings(home.config()).text("local_socket");
      if (!configured.empty() && configured != "off") {
        return std::filesystem::path{configured};
      }
    } catch (const std::exception&) {
      // a file the daemon would refuse too: the default is as good a guess as any
    }
  }
  return home.local_socket();
}

local_client::local_client(std::filesystem::path socket, size_t max_body)
    : socket_(std::move(socket)), max_body_(max_body) {
  // nop
}

unsigned
local_client::request(std::string_view method, std::string_view target, std::string_view body,
                      const std::function<void(unsigned, std::string_view)>& on_body) const {
  fd_guard fd{connect_local(socket_)};
  std::string req;
  req.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: localhost\r\n");
  req += "Connection: close\r\n";
  if (!body.empty()) {
    req += "Content-Type: application/json\r\n";
  }
  req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  req.append(body);
  send_all(fd.fd, req);

  std::string buf;
  size_t head_end = std::string::npos;
  while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
    if (buf.size() > max_head) {
      malformed("headers too large");
    }
    if (read_some(fd.fd, buf) == 0) {
      malformed(buf.empty() ? "no answer" : "cut short");
    }
  }
  std::string head = buf.substr(0, head_end + 2);
  buf.erase(0, head_end + 4);
  if (head.compare(0, 5, "HTTP/") != 0 || head.size() < 12) {
    malformed("status line");
  }
  unsigned status = static_cast<unsigned>(std::atoi(head.c_str() + 9));
  if (status < 100 || status > 599) {
    malformed("status");
  }
  size_t total = 0;
  auto deliver = [&](std::string_view piece) {
    total += piece.size();
    if (total > max_body_) {
      throw std::runtime_error("The answer of clusterwsd is larger than "
                               + std::to_string(max_body_) + " bytes.");
    }
    if (!piece.empty()) {
      on_body(status, piece);
    }
  };
  auto te = header(head, "transfer-encoding");
  if (te == "chunked") {
    while (true) {
      size_t eol;
      while ((eol = buf.find("\r\n")) == std::string::npos) {
        if (buf.size() > 1024 || read_some(fd.fd, buf) == 0) {
          malformed("chunk size");
        }
      }
      char* end = nullptr;
      unsigned long long size = std::strtoull(buf.c_str(), &end, 16);
      if (end == buf.c_str()) {
        malformed("chunk size");
      }
      buf.erase(0, eol + 2);
      if (size == 0) {
        return status; // (trailers, if any, are not read: the connection closes)
      }
      while (buf.size() < size + 2) {
        if (read_some(fd.fd, buf) == 0) {
          malformed("cut short");
        }
      }
      deliver(std::string_view{buf}.substr(0, size));
      buf.erase(0, size + 2);
    }
  }
  if (!te.empty()) {
    malformed("transfer encoding " + te);
  }
  auto cl = header(head, "content-length");
  if (!cl.empty()) {
    unsigned long long want = std::strtoull(cl.c_str(), nullptr, 10);
    while (buf.size() < want) {
      if (read_some(fd.fd, buf) == 0) {
        malformed("cut short");
      }
      if (buf.size() > max_body_) {
        break;
      }
    }
    buf.resize(std::min<size_t>(buf.size(), want));
    deliver(buf);
    return status;
  }
  deliver(buf);
  buf.clear();
  while (read_some(fd.fd, buf) > 0) {
    deliver(buf);
    buf.clear();
  }
  return status;
}

local_reply local_client::request(std::string_view method, std::string_view target,
                                  std::string_view body) const {
  local_reply r;
  r.status = request(method, target, body,
                     [&](unsigned, std::string_view piece) { r.body.append(piece); });
  return r;
}

std::string url_encode(std::string_view text) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == ',') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

} // namespace cws::cli
