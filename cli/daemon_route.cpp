// daemon_route: root's fan-out tools through clusterwsd when the head has service nodes.

#include "cli/daemon_route.hpp"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/local_client.hpp"

namespace cws::cli {

namespace {

namespace fs = std::filesystem;

/// Empty when something accepts a connection on `path`, else why not.
std::string unreachable(const fs::path& path) {
  sockaddr_un addr{};
  if (path.native().size() >= sizeof addr.sun_path) {
    return "the path is too long";
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return std::strerror(errno);
  }
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  int e = errno;
  ::close(fd);
  if (rc == 0) {
    return {};
  }
  return e == ENOENT || e == ECONNREFUSED ? std::string{"nothing listens there"}
                                          : std::string{std::strerror(e)};
}

bool must_fail(const session& s) {
  return s.settings.text("sn_cli_fallback") == "fail";
}

} // namespace

bool has_service_nodes(const session& s) {
  if (s.settings.text("sn_listen").empty()) {
    return false; // the daemon delegates nothing without its service-node listener
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(s.home.pki() / "sn" / "secrets", ec)) {
    if (e.is_regular_file(ec)) {
      return true;
    }
  }
  return false;
}

std::optional<fs::path> daemon_route(const session& s, const std::string& tool, io& streams) {
  if (!has_service_nodes(s)) {
    return std::nullopt;
  }
  auto socket = local_socket_path(s.home);
  std::string why;
  if (std::getenv("CLUSTERWS_SOCKET") == nullptr && s.settings.text("local_socket") == "off") {
    why = "local_socket = off";
  } else {
    why = unreachable(socket);
  }
  if (why.empty()) {
    return socket;
  }
  if (must_fail(s)) {
    throw usage_error("clusterwsd is not reachable on " + socket.string() + " (" + why + "); "
                      + tool
                      + " was not run: this head has service nodes and sn_cli_fallback = fail.");
  }
  streams.err << "Warning: clusterwsd is not reachable on " << socket.string() << " (" << why
              << "); running from this host, service nodes not used.\n";
  return std::nullopt;
}

void warn_in_process(const session& s, const std::string& tool, const std::string& option,
                     io& streams) {
  if (!has_service_nodes(s)) {
    return;
  }
  if (must_fail(s)) {
    throw usage_error(tool + " " + option
                      + " does not go through clusterwsd, and this head has service nodes "
                        "(sn_cli_fallback = fail); nothing was run.");
  }
  streams.err << "Warning: " << tool << " " << option
              << " does not go through clusterwsd: running from this host, service nodes not "
                 "used.\n";
}

} // namespace cws::cli
