// clusterctl pki: the server certificate's names, renewal and a site's own certificate
// (cli/pki.hpp does the work).

#include <arpa/inet.h>

#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/local_client.hpp"
#include "cli/pki.hpp"

namespace cws::cli {

namespace {

std::string utc_text(long long t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

void show(const std::filesystem::path& pki, std::ostream& out) {
  auto info = read_server_cert(pki);
  std::string names;
  for (const auto& n : info.names) {
    names += (names.empty() ? "" : ", ") + n;
  }
  // to the nearest day: a certificate issued for 20 days shows 20 a second later
  auto days = (info.not_after - static_cast<long long>(std::time(nullptr)) + 43200) / 86400;
  out << "Server certificate: " << (pki / "server-cert.pem").string() << '\n'
      << "Subject: " << info.subject << '\n'
      << "Issuer: " << info.issuer
      << (info.by_cluster_ca ? " (the CA in ca-cert.pem)" : " (NOT the CA in ca-cert.pem)") << '\n'
      << "Names: " << names << '\n'
      << "Expires: " << utc_text(info.not_after) << " (in " << days << " days)\n";
}

constexpr std::string_view reload_hint
  = "The daemon uses it after a reload: systemctl reload clusterwsd (or kill -HUP its pid).\n";

} // namespace

std::optional<std::string> listen_host(const std::string& listen) {
  auto colon = listen.rfind(':');
  unsigned long long port = 0;
  if (colon == std::string::npos || !base::parse_unsigned(listen.substr(colon + 1), port)
      || port > 65535) {
    return std::nullopt;
  }
  auto host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  unsigned char buf[16];
  if (inet_pton(AF_INET, host.c_str(), buf) != 1 && inet_pton(AF_INET6, host.c_str(), buf) != 1) {
    return std::nullopt;
  }
  return host;
}

void set_config_value(const std::filesystem::path& file, const std::string& key,
                      const std::string& value) {
  std::ifstream in{file};
  std::stringstream text;
  text << in.rdbuf();
  std::string out;
  bool done = false;
  for (const auto& line : base::output_lines(text.str())) {
    auto body = std::string{base::trim(line)};
    if (!body.empty() && body.front() == '#') {
      body = std::string{base::trim(body.substr(1))};
    }
    auto eq = body.find('=');
    bool same = eq != std::string::npos && base::trim(body.substr(0, eq)) == key;
    if (same && !done) {
      out += key + " = " + value + "\n";
      done = true;
    } else if (!same || line.front() == '#') {
      out += line + "\n"; // a second, active setting of the key would override: dropped
    }
  }
  if (!done) {
    out += key + " = " + value + "\n";
  }
  auto aside = file.string() + ".new";
  std::ofstream{aside} << out;
  std::filesystem::permissions(aside, std::filesystem::status(file).permissions());
  std::filesystem::rename(aside, file);
}

int pki(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "", {"home", "days", "cert", "key", "ca"}, {}, {}});
  if (args.has("help")) {
    streams.out << "Usage: clusterctl pki [show]\n"
                   "       clusterctl pki add-name NAME...\n"
                   "       clusterctl pki renew [--days N]\n"
                   "       clusterctl pki install --cert FILE --key FILE [--ca FILE]\n"
                   "The server certificate (pki/server-cert.pem) clients verify with the CA in\n"
                   "pki/ca-cert.pem.\n"
                   "  show      its names, issuer and expiry\n"
                   "  add-name  issue it again with more DNS names or IP addresses\n"
                   "  renew     issue it again with the same names (default 825 days)\n"
                   "  install   use the site's certificate and key instead (checked to match and\n"
                   "            to verify against --ca, which then replaces ca-cert.pem)\n"
                << reload_hint;
    return 0;
  }
  auto home = store::home::resolve(args.value("home"));
  if (daemon_socket(home)) {
    throw needs_root{};
  }
  home.require_initialized();
  auto dir = home.pki();
  auto action = args.positional.empty() ? std::string{"show"} : args.positional.front();
  std::vector<std::string> rest(args.positional.begin() + (args.positional.empty() ? 0 : 1),
                                args.positional.end());
  if (action == "show" && rest.empty()) {
    show(dir, streams.out);
    return 0;
  }
  if (action == "add-name" || action == "renew") {
    if (action == "add-name" && rest.empty()) {
      throw usage_error("Give the DNS names or IP addresses to add.");
    }
    if (action == "renew" && !rest.empty()) {
      throw usage_error("Unexpected argument '" + rest.front() + "'.");
    }
    unsigned long long days = server_cert_days;
    if (auto d = args.value("days");
        !d.empty() && (!base::parse_unsigned(d, days) || days == 0 || days > server_cert_days)) {
      throw usage_error("--days must be a whole number from 1 to "
                        + std::to_string(server_cert_days) + ".");
    }
    auto names = read_server_cert(dir).names;
    for (const auto& n : rest) {
      if (n.empty() || n.find_first_of(" ,/") != std::string::npos) {
        throw usage_error("'" + n + "' is not a DNS name or an IP address.");
      }
      if (std::find(names.begin(), names.end(), n) == names.end()) {
        names.push_back(n);
      }
    }
    issue_server_cert(dir, names, static_cast<long>(days));
    show(dir, streams.out);
    streams.out << reload_hint;
    return 0;
  }
  if (action == "install" && rest.empty()) {
    if (args.value("cert").empty() || args.value("key").empty()) {
      throw usage_error("install needs --cert FILE and --key FILE.");
    }
    install_server_cert(dir, args.value("cert"), args.value("key"), args.value("ca"));
    show(dir, streams.out);
    streams.out << reload_hint;
    return 0;
  }
  throw usage_error("Unknown pki action '" + action + "': show, add-name, renew or install.");
}

} // namespace cws::cli
