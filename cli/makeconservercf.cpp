// makeconservercf: with clusterwsd as the console server there is no conserver.cf to write;
// the tool asks the daemon (over the local socket, policy command `makeconservercf`) to read
// the console definitions again (every node, or the noderange's), or to stop holding the
// noderange's consoles (-d), and prints xCAT's per-node errors (docs/consoles.md).

#include <simdjson.h>

#include "cli/commands.hpp"
#include "cli/local_client.hpp"

namespace cws::cli {

namespace {

constexpr const char* usage_text
  = "Usage: makeconservercf [-V|--verbose] [-d|--delete] noderange\n"
    "       makeconservercf [-V|--verbose] [-l|--local] [noderange]\n"
    "       makeconservercf [-V|--verbose] [-c|--conserver] [noderange]\n"
    "       makeconservercf [-V|--verbose] noderange [-t|--trust] hosts\n"
    "       makeconservercf [-h|--help|-v|--version]\n"
    "    -c|--conserver   The conserver gets set up only on the conserver host.\n"
    "    -l|--local       The conserver gets set up only on the local host.\n"
    "    -d|--delete      The console server stops holding the given nodes' consoles.\n"
    "    -t|--trust       Trusted hosts (accepted; clusterwsd's policy decides who attaches).\n"
    "    -V|--verbose     Verbose mode: each console's state.\n"
    "clusterwsd is the console server: it holds every node whose nodehm.cons is set and logs\n"
    "it under console_log_dir (docs/consoles.md). [--home DIR]\n";

/// The answer's lines: a JSON array of strings, or xCAT's error shape
/// {"error":[...],"errorcode":N}.
std::vector<std::string> lines_of(const std::string& body, bool& error) {
  std::vector<std::string> out;
  error = false;
  if (body.empty()) {
    return out;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(body).get(doc) != simdjson::SUCCESS) {
    out.push_back(body);
    error = true;
    return out;
  }
  simdjson::dom::array arr;
  if (doc.get(arr) != simdjson::SUCCESS) {
    error = true;
    if (doc["error"].get(arr) != simdjson::SUCCESS) {
      std::string_view one;
      if (doc["error"].get(one) == simdjson::SUCCESS) {
        out.emplace_back(one);
      }
      return out;
    }
  }
  for (auto e : arr) {
    std::string_view s;
    if (e.get(s) == simdjson::SUCCESS) {
      out.emplace_back(s);
    }
  }
  return out;
}

} // namespace

int makeconservercf(const std::vector<std::string>& argv, io& streams) {
  auto args
    = parse_args(argv, {"t",
                        "dlcVh",
                        {"home", "trust"},
                        {"help"},
                        {{"delete", 'd'}, {"local", 'l'}, {"conserver", 'c'}, {"verbose", 'V'}}});
  if (args.has("help") || args.has("h")) {
    streams.out << usage_text;
    return 0;
  }
  bool del = args.has("d");
  std::string nr = args.positional.empty() ? std::string{} : args.positional.front();
  if (args.positional.size() > 1) {
    throw usage_error("Unexpected argument '" + args.positional[1] + "'.");
  }
  // xCAT's own refusals (conserver.pm)
  if (args.has("l") && !nr.empty()) {
    streams.err << "Error: Invalid option -l or --local when there are nodes specified.\n";
    return 1;
  }
  if (args.has("c") && args.has("l")) {
    streams.err << "Error: Can not specify -l or --local together with -c or --conserver.\n";
    return 1;
  }
  if (del && nr.empty()) {
    streams.err << usage_text;
    return 1;
  }
  auto home = store::home::resolve(args.value("home"));
  local_client client{local_socket_path(home)};
  std::string target = nr.empty() ? "/clusterws/services/conserver"
                                  : "/clusterws/nodes/" + url_encode(nr) + "/conserver";
  if (args.has("V") && !del) {
    target += "?verbose=1";
  }
  if (args.has("V")) {
    streams.out << "Setting the nodes into the console server of clusterwsd\n";
  }
  auto reply = client.request(del ? "DELETE" : "POST", target);
  bool error = false;
  auto lines = lines_of(reply.body, error);
  if (reply.status >= 400) {
    for (const auto& l : lines) {
      streams.err << (l.rfind("Error", 0) == 0 || l.find(": Error: ") != std::string::npos
                        ? ""
                        : "Error: ")
                  << l << '\n';
    }
    return 1;
  }
  for (const auto& l : lines) {
    streams.out << l << '\n';
  }
  return 0;
}

} // namespace cws::cli
