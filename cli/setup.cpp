// clusterctl init and clusterctl passwd: creating a state directory and setting credentials.

#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <termios.h>
#include <unistd.h>

#include "api/makenetworks.hpp"
#include "api/settings.hpp"
#include "base/text.hpp"
#include "cli/commands.hpp"
#include "cli/defaults.hpp"
#include "cli/local_client.hpp"
#include "cli/pki.hpp"
#include "store/credentials.hpp"
#include "store/tokens.hpp"

namespace cws::cli {

namespace {

using store::object_type;

std::string short_hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  std::string h = buf;
  return h.substr(0, h.find('.'));
}

std::string timezone_name() {
  std::ifstream in{"/etc/timezone"};
  std::string tz;
  return std::getline(in, tz) && !tz.empty() ? tz : "UTC";
}

/// `text` with every `@NAME@` of `vars` replaced.
std::string substitute(std::string text,
                       const std::vector<std::pair<std::string, std::string>>& vars) {
  for (const auto& [name, value] : vars) {
    for (size_t pos = 0; (pos = text.find(name, pos)) != std::string::npos; pos += value.size()) {
      text.replace(pos, name.size(), value);
    }
  }
  return text;
}

/// The clustersite object of config/site.defaults.
store::attr_map site_defaults(const std::string& master) {
  store::attr_map site;
  std::istringstream in{substitute(std::string{site_defaults_text},
                                   {{"@MASTER@", master}, {"@TIMEZONE@", timezone_name()}})};
  for (std::string line; std::getline(in, line);) {
    std::string key;
    std::string value;
    if (line.empty() || line[0] == '#' || !split_assignment(line, key, value)) {
      continue;
    }
    site[key] = value;
  }
  return site;
}

/// Writes the rows of config/policy.defaults.
void put_default_policy(store::write_txn& t, const std::string& host) {
  std::istringstream in{substitute(std::string{policy_defaults_text}, {{"@HOSTNAME@", host}})};
  for (std::string line; std::getline(in, line);) {
    std::istringstream row{line};
    std::string prio;
    std::string name;
    std::string commands;
    std::string rule;
    if (line.empty() || line[0] == '#' || !(row >> prio >> name >> commands >> rule)) {
      continue;
    }
    store::attr_map attrs{{"rule", rule}};
    if (name != "-") {
      attrs["name"] = name;
    }
    if (commands != "-") {
      attrs["commands"] = commands;
    }
    t.put(object_type::policy, prio, attrs);
  }
}

/// Creates `<dir>/id_ed25519` with ssh-keygen; returns its path, or "" if ssh-keygen is
/// missing (nodeshell then needs a key put there by hand).
std::string make_ssh_key(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir.parent_path(), std::filesystem::perms::owner_all);
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  auto key = (dir / "id_ed25519").string();
  std::string cmd = "ssh-keygen -q -t ed25519 -N '' -C clusterws -f '" + key + "' </dev/null";
  return std::system(cmd.c_str()) == 0 ? key : std::string{};
}

/// Sets `user`'s password hash; the user's tokens go with the old password.
size_t set_password(store::database& db, const std::string& user, const std::string& hash) {
  size_t revoked = 0;
  db.write([&](store::write_txn& t) {
    t.put(object_type::passwd, user, {{"password", hash}});
    revoked = store::revoke_user_tokens(t, user);
  });
  return revoked;
}

/// `Y-M-D h:m:s` UTC, or `never` for 0.
std::string time_text(int64_t t) {
  if (t == 0) {
    return "never";
  }
  auto tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

/// Reads a password: the first line of stdin, or twice from the terminal without echo.
std::string read_password(io& streams, bool from_stdin) {
  std::string pw;
  if (from_stdin || !isatty(STDIN_FILENO)) {
    if (!from_stdin) {
      throw usage_error("No password given: use --password-stdin or run on a terminal.");
    }
    std::getline(streams.in, pw);
    return pw;
  }
  termios old{};
  tcgetattr(STDIN_FILENO, &old);
  termios quiet = old;
  quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
  tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
  std::string again;
  streams.err << "New password: " << std::flush;
  std::getline(streams.in, pw);
  streams.err << "\nRetype new password: " << std::flush;
  std::getline(streams.in, again);
  streams.err << '\n';
  tcsetattr(STDIN_FILENO, TCSANOW, &old);
  if (pw != again) {
    throw usage_error("The passwords do not match.");
  }
  return pw;
}

} // namespace

int init(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(
    argv, {"", "", {"home", "admin-password", "master", "listen", "san"}, {"no-networks"}, {}});
  if (args.has("help")) {
    streams.out << "Usage: clusterctl init [--home DIR] [--admin-password PW] [--master IP]\n"
                   "                      [--listen ADDR:PORT] [--san NAME[,NAME...]]\n"
                   "Creates the state directory: database with xCAT's site defaults and\n"
                   "default policy, cluster CA and server certificate (pki/), clusterws.conf,\n"
                   "and root's credential (generated and printed once unless given).\n"
                   "  --listen  the address the daemon listens on (written to clusterws.conf;\n"
                   "            default 127.0.0.1:8443); its address joins the certificate\n"
                   "  --san     more DNS names or addresses clients use to reach the service\n"
                   "  --no-networks  do not define the networks of this host's interfaces\n"
                   "            (defined as makenetworks does, as xCAT's install does)\n";
    return 0;
  }
  auto listen = args.value("listen");
  auto listen_addr = listen.empty() ? std::optional<std::string>{} : listen_host(listen);
  if (!listen.empty() && !listen_addr) {
    throw usage_error("--listen must be ADDR:PORT ([::1]:PORT for IPv6), not '" + listen + "'.");
  }
  auto home = store::home::resolve(args.value("home"));
  if (daemon_socket(home)) {
    throw needs_root{};
  }
  if (home.initialized()) {
    throw usage_error("The clusterws home '" + home.dir.string() + "' is already initialized.");
  }
  std::filesystem::create_directories(home.dir);
  std::filesystem::permissions(home.dir, std::filesystem::perms::owner_all);
  auto host = short_hostname();
  host = host.empty() ? "localhost" : host;
  std::vector<std::string> names{host, "localhost", "127.0.0.1", "::1"};
  auto extra = base::split_list(args.value("san"));
  if (listen_addr && *listen_addr != "0.0.0.0" && *listen_addr != "::") {
    extra.push_back(*listen_addr); // a client reaches it there
  }
  for (const auto& n : extra) {
    if (n.find_first_of(" /") != std::string::npos) {
      throw usage_error("'" + n + "' is not a DNS name or an IP address.");
    }
    if (std::find(names.begin(), names.end(), n) == names.end()) {
      names.push_back(n);
    }
  }
  make_pki(home.pki(), names);
  if (!std::filesystem::exists(home.config())) { // the package ships one: kept as it is
    std::filesystem::create_directories(home.config().parent_path());
    std::ofstream{home.config()} << base::settings::commented(api::settings_schema(),
                                                              "clusterws configuration");
  }
  if (!listen.empty()) {
    set_config_value(home.config(), "listen", listen);
  }
  std::string password = args.value("admin-password");
  bool generated = password.empty();
  if (generated) {
    password = store::random_hex(12);
  }
  store::database db{home.db()};
  auto master = args.value("master", "127.0.0.1");
  // xCAT's install (xcatconfig) runs makenetworks, so `lsdef -t network` answers on day one
  std::vector<store::object_change> networks;
  if (!args.has("no-networks")) {
    networks = api::network_objects(api::host_networks());
  }
  db.write([&](store::write_txn& t) {
    t.put(object_type::site, "clustersite", site_defaults(master));
    t.set_meta("xcatdefaults.postscripts", xcatdefaults_postscripts);
    t.set_meta("xcatdefaults.postbootscripts", xcatdefaults_postbootscripts);
    put_default_policy(t, host);
    t.put(object_type::passwd, "root", {{"password", store::hash_password(password)}});
    if (!networks.empty()) {
      api::make_networks(t, networks);
    }
  });
  streams.out << "Initialized clusterws home " << home.dir.string() << '\n'
              << "CA certificate for clients: " << (home.pki() / "ca-cert.pem").string() << '\n';
  if (!networks.empty()) {
    std::vector<std::string> names;
    for (const auto& n : networks) {
      names.push_back(n.name);
    }
    streams.out << "Networks of this host's interfaces (lsdef -t network): "
                << base::join_list(names) << '\n';
  }
  // nodecopy's sources live there (copy_root; docs/nodeshell.md)
  std::filesystem::create_directories(home.dir / "copy");
  auto key = make_ssh_key(home.dir / "ssh" / "root");
  if (!key.empty()) {
    streams.out << "Root's SSH key for nodeshell and xdsh: " << key
                << ".pub (add it to the nodes' authorized_keys)\n";
  }
  if (generated) {
    streams.out << "Password for root (shown once): " << password << '\n';
  }
  return 0;
}

int passwd(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "", {"home", "hash"}, {"password-stdin"}, {}});
  if (args.has("help")) {
    streams.out << "Usage: clusterctl passwd USER [--password-stdin | --hash HASH]\n"
                   "Sets USER's API credential, stored as a salted yescrypt hash.\n"
                   "  --password-stdin  read the password from the first line of stdin\n"
                   "  --hash HASH       store a crypt(3) hash as is (e.g. from /etc/shadow)\n"
                   "Without either, asks twice on the terminal.\n";
    return 0;
  }
  if (args.positional.size() != 1 || !store::is_user_name(args.positional.front())) {
    throw usage_error(args.positional.empty() ? "No user name was provided."
                                              : "Invalid user name.");
  }
  const auto& user = args.positional.front();
  std::string hash = args.value("hash");
  if (!hash.empty()) {
    if (!store::is_password_hash(hash) || hash.find('\0') != std::string::npos) {
      throw usage_error("The value of --hash is not a crypt(3) password hash.");
    }
  } else {
    auto pw = read_password(streams, args.has("password-stdin"));
    if (pw.empty()) {
      throw usage_error("The password is empty.");
    }
    hash = store::hash_password(pw);
  }
  auto s = session::open(args);
  auto revoked = set_password(*s.db, user, hash);
  streams.out << "The password for '" << user << "' has been set.\n";
  if (revoked > 0) {
    streams.out << revoked << " API token(s) of '" << user << "' have been revoked.\n";
  }
  return 0;
}

int tokens(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "", {"home"}, {}, {}});
  if (args.has("help")) {
    streams.out << "Usage: clusterctl tokens [USER]\n"
                   "Lists the API tokens of USER (of every user without it): handle, user,\n"
                   "creation and expiry time (UTC). The handle names a token for\n"
                   "'clusterctl revoke'; the token id itself is never stored.\n";
    return 0;
  }
  if (args.positional.size() > 1) {
    throw usage_error("Unexpected argument '" + args.positional.back() + "'.");
  }
  auto s = session::open(args);
  auto user = args.positional.empty() ? std::string{} : args.positional.front();
  auto now = static_cast<int64_t>(std::time(nullptr));
  for (const auto& t : store::list_tokens(s.db->read(), user)) {
    streams.out << t.handle() << ' ' << t.user << " created " << time_text(t.created) << " expires "
                << time_text(t.expires) << (t.expires != 0 && t.expires < now ? " (expired)" : "")
                << '\n';
  }
  return 0;
}

int revoke(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "", {"home", "user"}, {}, {}});
  if (args.has("help")) {
    streams.out << "Usage: clusterctl revoke HANDLE... | clusterctl revoke --user USER\n"
                   "Revokes API tokens: by the handle 'clusterctl tokens' shows (at least 8\n"
                   "hex digits), or every token of USER.\n";
    return 0;
  }
  auto user = args.value("user");
  if (user.empty() == args.positional.empty()) {
    throw usage_error("Give token handles or --user USER.");
  }
  for (const auto& h : args.positional) {
    if (h.size() < 8 || h.size() > 64
        || h.find_first_not_of("0123456789abcdef") != std::string::npos) {
      throw usage_error("'" + h + "' is not a token handle (8 to 64 lowercase hex digits).");
    }
  }
  auto s = session::open(args);
  size_t revoked = 0;
  s.db->write([&](store::write_txn& t) {
    revoked = 0;
    if (!user.empty()) {
      revoked = store::revoke_user_tokens(t, user);
    }
    for (const auto& h : args.positional) {
      revoked += store::revoke_tokens_by_handle(t, h, {});
    }
  });
  streams.out << revoked << " token(s) revoked.\n";
  return revoked > 0 || !user.empty() ? 0 : 1;
}

int rmuser(const std::vector<std::string>& argv, io& streams) {
  auto args = parse_args(argv, {"", "", {"home"}, {}, {}});
  if (args.has("help")) {
    streams.out << "Usage: clusterctl rmuser USER\n"
                   "Removes USER's API credential and revokes USER's tokens. Policy rows\n"
                   "naming USER stay (they allow nothing without a credential).\n";
    return 0;
  }
  if (args.positional.size() != 1) {
    throw usage_error(args.positional.empty()
                        ? "No user name was provided."
                        : "Unexpected argument '" + args.positional.back() + "'.");
  }
  const auto& user = args.positional.front();
  auto s = session::open(args);
  bool found = false;
  size_t revoked = 0;
  s.db->write([&](store::write_txn& t) {
    found = t.erase(object_type::passwd, user);
    revoked = store::revoke_user_tokens(t, user);
  });
  if (!found) {
    streams.err << "Error: There is no API user '" << user << "'.\n";
    return 1;
  }
  streams.out << "The API user '" << user << "' has been removed; " << revoked
              << " token(s) revoked.\n";
  return 0;
}

} // namespace cws::cli
