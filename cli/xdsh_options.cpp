#include "cli/xdsh_options.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

#include "base/args.hpp"
#include "base/text.hpp"

namespace cws::cli {

using base::usage_error;

namespace {

/// Short options that take a value, and their long names.
struct value_option {
  char letter;
  const char* name;
};

constexpr value_option value_options[] = {
  {'f', "fanout"},   {'t', "timeout"}, {'E', "environment"}, {'o', "node-options"}, {'l', "user"},
  {'S', "syntax"},   {'X', ""},        {'r', "node-rsh"},    {'i', "rootimg"},      {'B', "bypass"},
  {0, "devicetype"}, {0, "home"},
};

/// Short flags and their long names.
constexpr value_option flag_options[] = {
  {'e', "execute"},   {'s', "stream"},  {'z', "exit-status"}, {'v', "verify"},    {'Q', "silent"},
  {'T', "trace"},     {'m', "monitor"}, {'q', "show-config"}, {'L', "no-locale"}, {'c', "cleanup"},
  {'K', "ssh-setup"}, {'h', "help"},    {0, "sudo"},          {'V', "version"},
};

long whole_number(const std::string& text, const char* what) {
  if (text.empty()
      || !std::all_of(text.begin(), text.end(),
                      [](unsigned char c) { return std::isdigit(c) != 0; })
      || text.size() > 9) {
    throw usage_error(std::string{what} + " takes a whole number, not '" + text + "'.");
  }
  return std::stol(text);
}

/// The refusals: options of xCAT's xdsh that have no meaning or no safe form here.
[[noreturn]] void refuse(char letter, const std::string& name) {
  if (letter == 'r' || name == "node-rsh") {
    throw usage_error("xdsh -r: the remote shell cannot be changed: commands run over "
                      "clusterws's own SSH engine (pooled sessions), as REST nodeshell does.");
  }
  if (letter == 'i' || name == "rootimg") {
    throw usage_error("xdsh -i: running a command in an install image is not supported: "
                      "clusterws does not manage osimage root images.");
  }
  if (letter == 'B' || name == "bypass") {
    throw usage_error("xdsh -B: there is no xcatd to bypass: xdsh reads the definitions "
                      "itself.");
  }
  if (letter == 'K' || name == "ssh-setup") {
    throw usage_error("xdsh -K is not supported: clusterws logs in with its own key for each "
                      "user (<home>/ssh/<user>/id_ed25519), not with ~/.ssh; put that key's .pub "
                      "in authorized_keys on the nodes (for example with a postscript).");
  }
  throw usage_error("xdsh --devicetype is not supported: switches and other devices are not "
                    "managed by clusterws.");
}

/// Records option `letter`/`name` (with `value` for value options) in `o`.
void apply(xdsh_options& o, char letter, const std::string& name, const std::string& value,
           const std::string& self, std::optional<std::string>& keep_env) {
  auto is = [&](char l, const char* n) {
    return (letter != 0 && letter == l) || name == n;
  };
  if (is('f', "fanout")) {
    o.fanout = whole_number(value, "-f");
    if (o.fanout == 0) {
      throw usage_error("-f takes a fanout of at least 1.");
    }
  } else if (is('t', "timeout")) {
    o.timeout = whole_number(value, "-t");
  } else if (is('E', "environment")) {
    o.env_file = value;
  } else if (is('o', "node-options")) {
    o.node_options = value;
  } else if (is('l', "user")) {
    if (value != self) {
      throw usage_error("xdsh runs commands as the user who runs it (" + self
                        + "); -l cannot change the identity.");
    }
  } else if (is('S', "syntax")) {
    if (value != "ksh" && value != "csh") {
      throw usage_error("-S takes ksh or csh, not '" + value + "'.");
    }
    o.syntax = value;
  } else if (letter == 'X') {
    keep_env = value;
  } else if (is('e', "execute")) {
    o.execute = true;
  } else if (is('s', "stream")) {
    o.stream = true;
  } else if (is('z', "exit-status")) {
    o.exit_status = true;
  } else if (is('v', "verify")) {
    o.verify = true;
  } else if (is('Q', "silent")) {
    o.silent = true;
  } else if (is('T', "trace")) {
    o.trace = true;
  } else if (is('m', "monitor")) {
    o.monitor = true;
  } else if (is('q', "show-config")) {
    o.show_config = true;
  } else if (is('L', "no-locale")) {
    o.no_locale = true;
  } else if (is('c', "cleanup")) {
    o.cleanup = true;
  } else if (is('h', "help")) {
    o.help = true;
  } else if (is('V', "version")) {
    o.version = true;
  } else if (name == "sudo") {
    o.sudo = true;
  } else if (name == "home") {
    o.home = value;
  } else {
    refuse(letter, name);
  }
}

const value_option* find(const value_option* begin, const value_option* end, char letter,
                         const std::string& name) {
  auto it = std::find_if(begin, end, [&](const value_option& v) {
    return letter != 0 ? v.letter == letter : name == v.name && !name.empty();
  });
  return it == end ? nullptr : it;
}

} // namespace

xdsh_options parse_xdsh(const std::vector<std::string>& argv, const std::string& self,
                        const getenv_fn& env) {
  xdsh_options o;
  std::optional<std::string> keep_env; // -X: the DSH_* variables still read
  bool fanout_set = false, timeout_set = false;
  auto vbegin = std::begin(value_options), vend = std::end(value_options);
  auto fbegin = std::begin(flag_options), fend = std::end(flag_options);
  for (size_t i = 0; i < argv.size(); ++i) {
    const auto& a = argv[i];
    if (!o.words.empty() || a.size() < 2 || a[0] != '-') { // a word
      if (o.noderange.empty() && o.words.empty()) {
        o.noderange = a;
      } else {
        o.words.push_back(a);
      }
      continue;
    }
    auto take_value = [&](const std::string& attached, const std::string& opt) {
      if (!attached.empty()) {
        return attached;
      }
      if (i + 1 >= argv.size()) {
        throw usage_error("Option " + opt + " requires a value.");
      }
      return argv[++i];
    };
    if (a.rfind("--", 0) == 0) {
      auto eq = a.find('=');
      std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      std::string attached = eq == std::string::npos ? std::string{} : a.substr(eq + 1);
      if (const auto* v = find(vbegin, vend, 0, name)) {
        apply(o, v->letter, name, take_value(attached, a), self, keep_env);
      } else if (const auto* f = find(fbegin, fend, 0, name)) {
        apply(o, f->letter, name, {}, self, keep_env);
      } else {
        throw usage_error("Unknown option " + a + ".");
      }
      fanout_set = fanout_set || name == "fanout";
      timeout_set = timeout_set || name == "timeout";
      continue;
    }
    for (size_t j = 1; j < a.size(); ++j) { // bundled flags, a value option ends the bundle
      char c = a[j];
      if (const auto* v = find(vbegin, vend, c, {})) {
        apply(o, c, v->name, take_value(a.substr(j + 1), std::string{"-"} + c), self, keep_env);
        fanout_set = fanout_set || c == 'f';
        timeout_set = timeout_set || c == 't';
        break;
      }
      if (find(fbegin, fend, c, {}) == nullptr) {
        throw usage_error(std::string{"Unknown option -"} + c + ".");
      }
      apply(o, c, {}, {}, self, keep_env);
    }
  }
  // The DSH_* environment, unless -X leaves the variable out.
  auto var = [&](const char* name) -> std::string {
    if (keep_env) {
      auto kept = base::split_list(*keep_env);
      if (std::find(kept.begin(), kept.end(), name) == kept.end()) {
        return {};
      }
    }
    const char* v = env(name);
    return v != nullptr ? v : "";
  };
  if (!fanout_set && !var("DSH_FANOUT").empty()) {
    o.fanout = whole_number(var("DSH_FANOUT"), "DSH_FANOUT");
  }
  if (!timeout_set && !var("DSH_TIMEOUT").empty()) {
    o.timeout = whole_number(var("DSH_TIMEOUT"), "DSH_TIMEOUT");
  }
  if (o.env_file.empty()) {
    o.env_file = var("DSH_ENVIRONMENT");
  }
  if (o.node_options.empty()) {
    o.node_options = var("DSH_NODE_OPTS");
  }
  if (auto syntax = var("DSH_SYNTAX"); !syntax.empty() && o.syntax == "ksh") {
    if (syntax != "ksh" && syntax != "csh") {
      throw usage_error("DSH_SYNTAX takes ksh or csh, not '" + syntax + "'.");
    }
    o.syntax = syntax;
  }
  o.path = var("DSH_PATH");
  if (!var("DSH_NODE_RSH").empty()) {
    refuse('r', {});
  }
  if (auto to = var("DSH_TO_USERID"); !to.empty() && to != self) {
    throw usage_error("xdsh runs commands as the user who runs it (" + self
                      + "); DSH_TO_USERID cannot change the identity.");
  }
  if (o.help || o.show_config || o.version) {
    return o;
  }
  if (o.cleanup && !o.words.empty()) {
    throw usage_error("xdsh -c takes no command.");
  }
  if (o.noderange.empty() || (o.words.empty() && !o.cleanup)) {
    throw usage_error("A noderange and a command are needed.");
  }
  return o;
}

ssh_overrides parse_node_options(const std::string& text, ssh::host_key_policy configured) {
  std::istringstream in{text};
  std::vector<std::string> words;
  for (std::string w; in >> w;) {
    words.push_back(w);
  }
  ssh_overrides r;
  auto port = [&](const std::string& v) {
    auto n = whole_number(v, "ssh option Port");
    if (n < 1 || n > 65535) {
      throw usage_error("ssh option Port takes 1 to 65535, not " + v + ".");
    }
    r.port = static_cast<uint16_t>(n);
  };
  for (size_t i = 0; i < words.size(); ++i) {
    const auto& w = words[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= words.size()) {
        throw usage_error("ssh option " + w + " needs a value.");
      }
      return words[++i];
    };
    if (w == "-x" || w == "-q" || w == "-T" || w == "-n" || w == "-4" || w == "-6") {
      continue; // no X11, quiet, no tty, no stdin: what the engine does anyway
    }
    if (w.size() >= 2 && w[0] == '-' && w.find_first_not_of('v', 1) == std::string::npos) {
      r.trace = true; // -v, -vv, -vvv: one level of trace
      continue;
    }
    if (w == "-t" || w == "-tt") {
      r.pty = true;
      continue;
    }
    if (w.rfind("-p", 0) == 0) {
      port(w.size() > 2 ? w.substr(2) : next());
      continue;
    }
    if (w.rfind("-o", 0) != 0) {
      throw usage_error("ssh option " + w
                        + " is not supported: -o takes -p PORT, -v, -t, -x, -q, -T, -n and -o "
                          "Port=, ConnectTimeout=, StrictHostKeyChecking=, BatchMode=yes, "
                          "LogLevel=, RequestTTY=, PasswordAuthentication=no, "
                          "PubkeyAuthentication=yes.");
    }
    std::string kv = w.size() > 2 ? w.substr(2) : next();
    auto eq = kv.find('=');
    std::string key = kv.substr(0, eq);
    std::string value = eq == std::string::npos ? std::string{} : kv.substr(eq + 1);
    std::string lower = key;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower == "port") {
      port(value);
    } else if (lower == "connecttimeout") {
      auto n = whole_number(value, "ssh option ConnectTimeout");
      if (n < 1) {
        throw usage_error("ssh option ConnectTimeout takes at least 1 second.");
      }
      r.connect_timeout = std::chrono::seconds(n);
    } else if (lower == "stricthostkeychecking") {
      if (value == "yes") {
        r.host_keys = ssh::host_key_policy::strict;
      } else if (value == "accept-new" && configured != ssh::host_key_policy::strict) {
        r.host_keys = ssh::host_key_policy::accept_new;
      } else {
        throw usage_error("ssh option StrictHostKeyChecking=" + value
                          + " is refused: host key checking can only be made stricter than "
                            "the administrator's ssh_host_keys setting.");
      }
    } else if (lower == "batchmode" && value == "yes") {
      continue; // never a prompt anyway
    } else if (lower == "loglevel") {
      auto level = value;
      std::transform(level.begin(), level.end(), level.begin(),
                     [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
      if (level == "VERBOSE" || level.rfind("DEBUG", 0) == 0) {
        r.trace = true;
      } else if (level != "QUIET" && level != "FATAL" && level != "ERROR" && level != "INFO") {
        throw usage_error("ssh option LogLevel takes QUIET, FATAL, ERROR, INFO, VERBOSE or "
                          "DEBUG, not '"
                          + value + "'.");
      }
    } else if (lower == "requesttty" && (value == "yes" || value == "force")) {
      r.pty = true;
    } else if ((lower == "requesttty" && (value == "no" || value == "auto"))
               || (lower == "passwordauthentication" && value == "no")
               || (lower == "kbdinteractiveauthentication" && value == "no")
               || (lower == "pubkeyauthentication" && value == "yes")) {
      continue; // what the engine does anyway: no pty unless asked, keys only
    } else if (lower == "user" || lower == "identityfile" || lower == "identitiesonly"
               || lower == "certificatefile" || lower == "proxycommand" || lower == "proxyjump"
               || lower == "forwardagent" || lower == "localcommand") {
      throw usage_error("ssh option " + key
                        + " is refused: xdsh logs in as you with your clusterws key, directly.");
    } else {
      throw usage_error("ssh option " + key + (value.empty() ? "" : "=" + value)
                        + " is not supported by clusterws's SSH engine.");
    }
  }
  return r;
}

std::string shell_quote(const std::string& text) {
  std::string q = "'";
  for (char c : text) {
    q += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  }
  return q + "'";
}

std::string remote_command(const xdsh_options& o, const std::string& command,
                           const std::vector<std::pair<std::string, std::string>>& locale,
                           const std::string& env_text) {
  bool csh = o.syntax == "csh";
  auto set = [&](const std::string& name, const std::string& value) {
    return csh ? "setenv " + name + " " + shell_quote(value) + "; "
               : "export " + name + "=" + shell_quote(value) + "; ";
  };
  std::string pre;
  if (!o.path.empty()) {
    pre += set("PATH", o.path);
  }
  if (!o.no_locale) {
    for (const auto& [name, value] : locale) {
      pre += set(name, value);
    }
  }
  if (!env_text.empty()) {
    pre += env_text + (env_text.back() == '\n' ? "" : "\n");
  }
  return pre + (o.sudo ? "sudo -n sh -c " + shell_quote(command) : command);
}

} // namespace cws::cli
